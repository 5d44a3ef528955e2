#include "workers/worker_channel.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "odin/v1/worker.pb.h"
#include "tools/text_file.h"

namespace odin {

StatusOr<std::unique_ptr<WorkerChannel>> WorkerChannel::Connect(const WorkerChannelOptions& o, Clock* clock) {
  ASSIGN_OR_RETURN(std::unique_ptr<ZmqEndpoint> socket, ZmqEndpoint::ConnectDealer(o.endpoint, o.worker_id));
  return std::unique_ptr<WorkerChannel>(new WorkerChannel(o, clock, std::move(socket)));
}

WorkerChannel::WorkerChannel(WorkerChannelOptions o, Clock* clock, std::unique_ptr<ZmqEndpoint> socket)
    : o_(std::move(o)), clock_(clock), socket_(std::move(socket)) {
  SteadyTime now = clock_->Now();
  next_heartbeat_ = now + o_.heartbeat_interval;
  silent_at_ = now + o_.heartbeat_interval * o_.liveness;
}

void WorkerChannel::SayHello(int kind, const std::vector<std::string>& capabilities,
                             const std::string& sandbox_description) {
  v1::Envelope hello;
  v1::Hello* h = hello.mutable_hello();
  h->set_worker_id(o_.worker_id);
  h->set_secret(o_.secret);
  h->set_kind(static_cast<v1::WorkerKind>(kind));
  h->set_pid(getpid());
  h->set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  for (const std::string& c : capabilities) h->add_capabilities(c);
  h->mutable_sandbox()->set_namespaces(sandbox_description == "bwrap");
  h->mutable_sandbox()->set_description(sandbox_description);
  Queue(std::move(hello));
}

void WorkerChannel::Queue(v1::Envelope env) {
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  outbox_.push_back(env.SerializeAsString());
}

void WorkerChannel::QueueResult(v1::ToolResult result) {
  if (result.has_error()) result.mutable_error()->set_message(ToDisplayText(result.error().message()));
  result.set_output_json(ToDisplayText(result.output_json()));
  v1::Envelope env;
  *env.mutable_tool_result() = std::move(result);
  Queue(std::move(env));
}

void WorkerChannel::HeartbeatNow() {
  v1::Envelope hb;
  hb.mutable_heartbeat();
  Queue(std::move(hb));
  next_heartbeat_ = clock_->Now() + o_.heartbeat_interval;
  Flush();
}

void WorkerChannel::Tick() {
  SteadyTime now = clock_->Now();
  if (now >= next_heartbeat_) {
    v1::Envelope hb;
    hb.mutable_heartbeat();
    Queue(std::move(hb));
    next_heartbeat_ = now + o_.heartbeat_interval;
  }
  Flush();
}

void WorkerChannel::Flush() {
  while (!outbox_.empty()) {
    Status s = socket_->Send("", outbox_.front());
    if (s.code() == StatusCode::kResourceExhausted) return;  // coordinator is behind; wait
    if (!s.ok()) spdlog::warn("send: {}", s.message());
    outbox_.pop_front();
  }
}

SteadyTime WorkerChannel::NextWake() const { return std::min(next_heartbeat_, silent_at_); }

StatusOr<bool> WorkerChannel::Wait(SteadyTime wake, std::vector<PollFd>* fds) {
  return socket_->Poll(std::max(Duration::zero(), wake - clock_->Now()), fds, !outbox_.empty());
}

bool WorkerChannel::Receive(v1::Envelope* env) {
  for (;;) {
    std::string peer, payload;
    StatusOr<bool> got = socket_->TryReceive(&peer, &payload);
    if (!got.ok() || !*got) return false;
    silent_at_ = clock_->Now() + o_.heartbeat_interval * o_.liveness;
    env->Clear();
    if (env->ParseFromString(payload) && env->protocol_version() == v1::PROTOCOL_VERSION_CURRENT) return true;
    spdlog::warn("dropping a malformed message from the coordinator");
  }
}

bool WorkerChannel::Turn(SteadyTime wake, std::vector<PollFd>* fds,
                         const std::function<void(const v1::Envelope&)>& handle) {
  StatusOr<bool> ready = Wait(std::min(wake, NextWake()), fds);
  if (!ready.ok()) {
    spdlog::error("{}", ready.status().message());
    return false;
  }
  v1::Envelope env;
  while (*ready && Receive(&env)) handle(env);
  // Judged only after reading what has arrived, so a slow turn of the loop
  // is not mistaken for a silent coordinator.
  if (CoordinatorSilent()) {
    spdlog::warn("coordinator silent for {} intervals; exiting", o_.liveness);
    return false;
  }
  return true;
}

bool WorkerChannel::CoordinatorSilent() const { return clock_->Now() >= silent_at_; }

}  // namespace odin
