#pragma once
// HttpClient: HTTP requests driven by the coordinator's poll loop, on libcurl's
// multi interface. Nothing blocks: the loop asks which fds to watch and how
// long it may sleep, polls them with everything else, then hands the readiness
// back. Connections are reused across requests to the same server.
//
// Every libcurl error becomes a Status here and nowhere else. libcurl is
// loaded when the first HttpClient is made, not when the process starts; if
// it cannot be, every transfer ends with FailedPrecondition saying why.
// Thread-safety: none; the loop owns it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"  // PollFd

namespace odin {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  Duration connect_timeout = seconds(10);
  Duration total_timeout = seconds(300);
  // Dropped at once when cancelled or when the client goes, even in the
  // middle of a name lookup (CURLOPT_QUICK_EXIT): for a request nobody
  // waits for at exit (telemetry).
  bool quick_exit = false;
};

struct HttpResponseHead {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
};

class HttpClient {
 public:
  using Id = uint64_t;
  struct Callbacks {
    // Once, when the status line and headers are in.
    std::function<void(const HttpResponseHead&)> on_head;
    // Each piece of the body, in order.
    std::function<void(std::string_view)> on_body;
    // Once, at the end: OK, or why the transfer failed (Unavailable for a
    // server that cannot be reached, DeadlineExceeded for a timeout, ...).
    // http_status is 0 when no response arrived.
    std::function<void(const Status&, int http_status)> on_done;
  };

  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Id Start(HttpRequest request, Callbacks callbacks);
  // Stops a transfer; its on_done is not called.
  void Cancel(Id id);
  bool idle() const { return transfers_.empty(); }

  // Appends the fds to poll; returns how many it added.
  size_t AddWatchFds(std::vector<PollFd>* fds) const;
  // When Process must run even if no fd is ready, if ever.
  std::optional<SteadyTime> NextTimer() const;
  // Drives the transfers: fds[first .. first+count) are the ones AddWatchFds
  // added, with their readiness filled in by the poll. Callbacks run here.
  void Process(const std::vector<PollFd>& fds, size_t first, size_t count);
  // Blocks, driving only this client's transfers, until done() holds
  // (checked after each turn) or deadline passes; done()'s last answer. For
  // a process with nothing else to wait on (a login, a session's last
  // request).
  bool RunUntil(const std::function<bool()>& done, SteadyTime deadline);

 private:
  struct CurlApi;
  struct Transfer;
  static int OnSocket(void* easy, int fd, int what, void* self, void* socket_data);
  static int OnTimer(void* multi, long timeout_ms, void* self);
  static size_t OnHeader(char* data, size_t size, size_t n, void* transfer);
  static size_t OnWrite(char* data, size_t size, size_t n, void* transfer);
  void Drain();

  const CurlApi* curl_ = nullptr;  // null: libcurl could not be loaded
  std::string load_error_;         // why not
  void* multi_ = nullptr;          // CURLM*
  std::map<int, int> sockets_;     // fd -> CURL_POLL_IN/OUT/INOUT
  std::optional<SteadyTime> timer_;
  std::map<Id, std::unique_ptr<Transfer>> transfers_;
  Id next_id_ = 1;
  bool processing_ = false;  // inside Process: callbacks may run, so Cancel defers
};

}  // namespace odin
