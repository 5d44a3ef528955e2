#pragma once
// UnixListener: the daemon's unix socket, accepted by the daemon itself rather
// than by gRPC, so that each client's credentials are checked before gRPC reads
// a byte from it (peer_credentials.h). A client that passes is handed to the
// serving gRPC server; any other is handed to a server that answers every call
// with PERMISSION_DENIED and the reason, so the refused client sees a clear
// error rather than a dropped connection.
//
// Thread-safety: Run() blocks on the thread that calls it; Stop() may be
// called from any other thread, once.

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"

namespace odin {

// Answers every call with PERMISSION_DENIED and the reason its connection was
// refused (Refuse() records it by the connection's peer address).
class RefusingService final : public grpc::CallbackGenericService {
 public:
  void Refuse(const std::string& peer, const std::string& reason);
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  std::mutex mu_;
  std::map<std::string, std::string> reasons_;  // by peer ("fd:N"); replaced when N is reused
};

class UnixListener {
 public:
  // Binds a socket at path (0600; a socket left there is replaced: the
  // caller holds the workspace's daemon lock) and listens.
  static StatusOr<std::unique_ptr<UnixListener>> Listen(const std::string& path);
  ~UnixListener();  // closes the socket and removes it
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Accepts until Stop(): clients that pass CheckPeer go to serving, the
  // others to refusing (through refused, which learns why).
  void Run(grpc::Server* serving, grpc::Server* refusing, RefusingService* refused);
  void Stop();

 private:
  UnixListener(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  std::atomic<bool> stopping_{false};
};

}  // namespace odin
