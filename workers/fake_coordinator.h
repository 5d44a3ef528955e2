#pragma once
// FakeCoordinator: the coordinator's end of the worker protocol, for the
// workers' unit tests. A ROUTER bound in a private temporary directory that
// receives whatever workers send and sends them messages by hand. Test-only.
//
// Thread-safety: none; one thread uses it (the worker may run in another).

#include <optional>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/zmq_endpoint.h"
#include "odin/v1/worker.pb.h"

namespace odin::testing {

class FakeCoordinator {
 public:
  FakeCoordinator() {
    StatusOr<std::string> dir = MakeTempDir("odin-fake-coordinator");
    if (!dir.ok()) return;
    dir_ = *dir;
    endpoint_ = "ipc://" + dir_ + "/w.sock";
    StatusOr<std::unique_ptr<ZmqEndpoint>> router = ZmqEndpoint::BindRouter(endpoint_);
    if (router.ok()) router_ = std::move(*router);
  }
  ~FakeCoordinator() {
    router_.reset();
    if (!dir_.empty()) RemoveTree(dir_);
  }

  // Whether the ROUTER is bound.
  bool ok() const { return router_ != nullptr; }
  const std::string& endpoint() const { return endpoint_; }
  // The routing id of the worker the last message came from.
  const std::string& last_peer() const { return last_peer_; }

  // The next message a worker sent, waiting up to timeout (real time) for it.
  // Nothing if none came in time, or it did not parse.
  std::optional<v1::Envelope> Receive(Duration timeout = seconds(30)) {
    std::string payload;
    for (;;) {
      StatusOr<bool> got = router_->TryReceive(&last_peer_, &payload);
      if (!got.ok()) return std::nullopt;
      if (*got) break;
      std::vector<PollFd> none;
      StatusOr<bool> ready = router_->Poll(timeout, &none);
      if (!ready.ok() || !*ready) return std::nullopt;
    }
    v1::Envelope env;
    if (!env.ParseFromString(payload)) return std::nullopt;
    return env;
  }
  // The next message other than a heartbeat.
  std::optional<v1::Envelope> ReceiveSkippingHeartbeats() {
    for (;;) {
      std::optional<v1::Envelope> env = Receive();
      if (!env || !env->has_heartbeat()) return env;
    }
  }

  // Sends env to the worker with this id, at the current protocol version.
  Status Send(const std::string& worker_id, v1::Envelope env) {
    env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    return SendRaw(worker_id, env.SerializeAsString());
  }
  Status SendRaw(const std::string& worker_id, const std::string& payload) { return router_->Send(worker_id, payload); }

 private:
  std::string dir_;
  std::string endpoint_;
  std::unique_ptr<ZmqEndpoint> router_;
  std::string last_peer_;
};

}  // namespace odin::testing
