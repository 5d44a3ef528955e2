#include "daemon/unix_listener.h"

#include <grpcpp/server_posix.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "daemon/peer_credentials.h"
#include "daemon/socket_location.h"

namespace odin {

void RefusingService::Refuse(const std::string& peer, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  reasons_[peer] = reason;
}

grpc::ServerGenericBidiReactor* RefusingService::CreateReactor(grpc::GenericCallbackServerContext* ctx) {
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = reasons_.find(ctx->peer());
    reason = it != reasons_.end() ? it->second
                                  : "connection refused: this daemon serves only its own user's processes outside "
                                    "any sandbox";
  }
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(const std::string& reason) { Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, reason)); }
    void OnDone() override { delete this; }
  };
  return new Reactor(reason);
}

StatusOr<std::unique_ptr<UnixListener>> UnixListener::Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() > kMaxUnixSocketPath) return Status::InvalidArgument(path, "too long for a unix socket's path");
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return PosixError("socket", errno);
  unlink(path.c_str());
  mode_t old_umask = umask(0077);  // 0600 from the start, not after a chmod
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old_umask);
  if (rc != 0 || listen(fd, 64) != 0) {
    int err = errno;
    close(fd);
    return PosixError("cannot listen on " + path, err);
  }
  chmod(path.c_str(), 0600);
  return std::unique_ptr<UnixListener>(new UnixListener(fd, path));
}

UnixListener::~UnixListener() {
  close(fd_);
  unlink(path_.c_str());
}

void UnixListener::Run(grpc::Server* serving, grpc::Server* refusing, RefusingService* refused) {
  while (!stopping_) {
    int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) {
      int err = errno;
      if (stopping_) return;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EBADF || err == EINVAL || err == ENOTSOCK) {  // the socket itself is gone: nothing to wait for
        spdlog::error("odin serve: accepting on {}: {}", path_, strerror(err));
        return;
      }
      // Out of descriptors or memory for a moment: let others close.
      spdlog::warn("odin serve: accepting on {}: {}", path_, strerror(err));
      usleep(10000);
      continue;
    }
    Status peer = CheckPeer(client);
    if (peer.ok()) {
      grpc::AddInsecureChannelFromFd(serving, client);  // gRPC owns it now
    } else {
      refused->Refuse("fd:" + std::to_string(client), peer.message());
      grpc::AddInsecureChannelFromFd(refusing, client);
    }
  }
}

void UnixListener::Stop() {
  stopping_ = true;
  shutdown(fd_, SHUT_RDWR);  // wakes accept()
}

}  // namespace odin
