#include "coordinator/worker_transport.h"

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"

namespace odin {

StatusOr<std::unique_ptr<ZmqWorkerTransport>> ZmqWorkerTransport::Create() {
  // A short private path: ipc:// paths are limited to about 100 bytes, so the
  // socket cannot live in a deep workspace.
  ASSIGN_OR_RETURN(std::string dir, MakeTempDir("odin"));
  std::string endpoint = "ipc://" + dir + "/w.sock";
  StatusOr<std::unique_ptr<ZmqEndpoint>> router = ZmqEndpoint::BindRouter(endpoint);
  if (!router.ok()) {
    RemoveTree(dir);
    return router.status();
  }
  return std::unique_ptr<ZmqWorkerTransport>(
      new ZmqWorkerTransport(dir, endpoint, std::move(*router)));
}

ZmqWorkerTransport::~ZmqWorkerTransport() {
  router_.reset();
  RemoveTree(dir_);
}

Status ZmqWorkerTransport::Send(const std::string& worker_id, const v1::Envelope& env) {
  return router_->Send(worker_id, env.SerializeAsString());
}

Status ZmqWorkerTransport::Wait(Duration timeout, std::vector<PollFd>* fds) {
  StatusOr<bool> r = router_->Poll(timeout, fds);
  return r.status();
}

StatusOr<bool> ZmqWorkerTransport::Receive(std::string* worker_id, v1::Envelope* env) {
  std::string payload;
  ASSIGN_OR_RETURN(bool got, router_->TryReceive(worker_id, &payload));
  if (!got) return false;
  if (!env->ParseFromString(payload)) env->Clear();
  return true;
}

}  // namespace odin
