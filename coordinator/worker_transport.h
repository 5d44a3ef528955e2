#pragma once
// WorkerTransport: how the coordinator exchanges worker-protocol envelopes with
// its workers. The real one is a ZeroMQ ROUTER on an ipc:// socket; tests use a
// fake that records what was sent and replays what workers "say".
//
// Thread-safety: none; owned by the coordinator loop.

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
};

// A ROUTER bound at an ipc:// endpoint in a private temporary directory, which
// is removed again on destruction.
class ZmqWorkerTransport final : public WorkerTransport {
 public:
  static StatusOr<std::unique_ptr<ZmqWorkerTransport>> Create();
  ~ZmqWorkerTransport() override;

  Status Send(const std::string& worker_id, const v1::Envelope& env) override;
  Status Wait(Duration timeout, std::vector<PollFd>* fds) override;
  StatusOr<bool> Receive(std::string* worker_id, v1::Envelope* env) override;

  // What workers connect to, e.g. "ipc:///tmp/odin-AbC123/w.sock".
  const std::string& endpoint() const { return endpoint_; }
  // The directory holding the socket; workers' sandboxes must see it.
  const std::string& socket_dir() const { return dir_; }

 private:
  ZmqWorkerTransport(std::string dir, std::string endpoint, std::unique_ptr<ZmqEndpoint> router)
      : dir_(std::move(dir)), endpoint_(std::move(endpoint)), router_(std::move(router)) {}
  std::string dir_;
  std::string endpoint_;
  std::unique_ptr<ZmqEndpoint> router_;
};

}  // namespace odin
