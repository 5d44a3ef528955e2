#pragma once
// WorkerTransport: how the coordinator exchanges worker-protocol envelopes with
// its workers. The real one is a ZeroMQ ROUTER on an ipc:// socket; tests use a
// fake that records what was sent and replays what workers "say".
//
// Thread-safety: none; owned by the coordinator loop.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"

namespace odin {
namespace v1 {
class Envelope;
}

class WorkerTransport {
 public:
  virtual ~WorkerTransport() = default;
  // Sends env to the worker with this id. Returns NotFound if it is not
  // connected and ResourceExhausted if its queue is full.
  virtual Status Send(const std::string& worker_id, const v1::Envelope& env) = 0;
  // Waits up to timeout until a message arrives or one of fds is readable.
  virtual Status Wait(Duration timeout, std::vector<PollFd>* fds) = 0;
  // Takes the next message without blocking. Returns false iff there is none.
  // A message that does not parse comes back as an empty Envelope (protocol
  // version 0), which the caller treats as a protocol violation.
  virtual StatusOr<bool> Receive(std::string* worker_id, v1::Envelope* env) = 0;
  // Opens a connection point for one worker and returns its endpoint and,
  // for ipc, the socket file its sandbox is shown (nothing else of the
  // transport's is). owner_uid >= 0: the uid the worker runs as, who must be
  // able to connect. Closed again by CloseEndpoint once the worker is gone.
  struct WorkerEndpoint {
    std::string endpoint;     // e.g. "ipc:///tmp/odin-sock-AbC123/7.sock"
    std::string socket_path;  // "" when it is not a file
  };
  virtual StatusOr<WorkerEndpoint> OpenEndpoint(int64_t owner_uid) = 0;
  virtual void CloseEndpoint(const std::string& endpoint) = 0;
};

// A ROUTER bound at one ipc:// socket per worker, in a private temporary
// directory (0700, or 0711 when workers run as another user: reachable, not
// listable) that is removed again on destruction. A worker's sandbox is shown
// its own socket only, read-only. Routing ids are never handed over: the
// first connection that takes an id keeps it. Directories left by a
// coordinator that died are removed by the next one.
class ZmqWorkerTransport final : public WorkerTransport {
 public:
  static StatusOr<std::unique_ptr<ZmqWorkerTransport>> Create();
  ~ZmqWorkerTransport() override;

  Status Send(const std::string& worker_id, const v1::Envelope& env) override;
  Status Wait(Duration timeout, std::vector<PollFd>* fds) override;
  StatusOr<bool> Receive(std::string* worker_id, v1::Envelope* env) override;
  StatusOr<WorkerEndpoint> OpenEndpoint(int64_t owner_uid) override;
  void CloseEndpoint(const std::string& endpoint) override;

  // The directory holding the sockets.
  const std::string& socket_dir() const { return dir_; }
  // Removes that directory now, for a process that ends without
  // destructors; the sockets stay bound until it ends.
  void RemoveSocketDir();

  // Removes the socket directories in tmp_dir whose coordinator is gone
  // (its pid is dead or another process's now). Returns how many.
  static int SweepStale(const std::string& tmp_dir);

 private:
  ZmqWorkerTransport(std::string dir, std::unique_ptr<ZmqEndpoint> router)
      : dir_(std::move(dir)), router_(std::move(router)) {}
  std::string dir_;
  std::unique_ptr<ZmqEndpoint> router_;
  int next_socket_ = 0;
  bool opened_for_others_ = false;
};

}  // namespace odin
