#include "workers/tool_worker.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <deque>
#include <memory>

#include <spdlog/spdlog.h>

#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/zmq_endpoint.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"

namespace odin {
namespace {

class Worker : public CommandRun::Sink {
 public:
  Worker(const ToolWorkerOptions& o, Clock* clock) : o_(o), clock_(clock) {}

  int Run();

  void OnOutput(OutputStreamId stream, std::string_view data) override;

 private:
  void Queue(const v1::Envelope& env);
  void QueueResult(v1::ToolResult result);
  void Handle(const v1::Envelope& env);
  void StartRequest(const v1::ToolRequest& req);
  void FlushOutbox();

  const ToolWorkerOptions& o_;
  Clock* clock_;
  std::unique_ptr<ZmqEndpoint> socket_;
  std::deque<std::string> outbox_;
  bool shutdown_ = false;

  // The request being run, if any.
  std::unique_ptr<CommandRun> run_;
  std::string execution_id_;
  uint64_t stream_limit_ = 0;  // 0: stream everything
  uint64_t streamed_ = 0;
};

void Worker::Queue(const v1::Envelope& env) {
  outbox_.push_back(env.SerializeAsString());
}

void Worker::QueueResult(v1::ToolResult result) {
  v1::Envelope env;
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  *env.mutable_tool_result() = std::move(result);
  Queue(env);
}

void Worker::OnOutput(OutputStreamId stream, std::string_view data) {
  if (stream_limit_ != 0) {
    if (streamed_ >= stream_limit_) return;
    data = data.substr(0, static_cast<size_t>(std::min<uint64_t>(data.size(), stream_limit_ - streamed_)));
  }
  streamed_ += data.size();
  v1::Envelope env;
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  v1::ToolProgress* p = env.mutable_tool_progress();
  p->set_execution_id(execution_id_);
  p->mutable_output()->set_stream(static_cast<v1::OutputStream>(stream));
  p->mutable_output()->set_data(data.data(), data.size());
  Queue(env);
}

void Worker::FlushOutbox() {
  while (!outbox_.empty()) {
    Status s = socket_->Send("", outbox_.front());
    if (s.code() == StatusCode::kResourceExhausted) return;  // coordinator is behind; wait
    if (!s.ok()) spdlog::warn("send: {}", s.message());
    outbox_.pop_front();
  }
}

void Worker::StartRequest(const v1::ToolRequest& req) {
  v1::ToolResult result;
  result.set_execution_id(req.execution_id());
  auto reject = [&](v1::Code code, const std::string& message) {
    result.set_status(v1::TOOL_STATUS_ERROR);
    result.set_exit_reason(v1::EXIT_REASON_NORMAL);
    result.mutable_error()->set_code(code);
    result.mutable_error()->set_message(message);
    QueueResult(std::move(result));
  };
  if (run_ != nullptr) {
    return reject(v1::CODE_FAILED_PRECONDITION, "worker " + o_.worker_id + " is busy");
  }
  if (req.tool() != kExecuteCommandTool) {
    return reject(v1::CODE_NOT_FOUND, "unknown tool '" + req.tool() + "'");
  }
  StatusOr<CommandSpec> spec = ParseExecuteCommandArgs(req.arguments_json(), o_.workspace);
  if (!spec.ok()) {
    return reject(static_cast<v1::Code>(spec.status().code()), spec.status().message());
  }
  spec->env = CurrentEnvironment();
  const v1::ResourceLimits& l = req.limits();
  spec->limits = {l.cpu_seconds(), l.address_space_bytes(), l.file_size_bytes(), l.open_files(),
                  l.processes()};
  StatusOr<std::unique_ptr<CommandRun>> run =
      CommandRun::Start(*spec, req.output_head_bytes(), req.output_tail_bytes(), clock_);
  if (!run.ok()) {
    // Shell conventions: 127 not found, 126 found but not executable.
    result.set_has_exit_code(true);
    result.set_exit_code(run.status().code() == StatusCode::kNotFound ? 127 : 126);
    return reject(static_cast<v1::Code>(run.status().code()), run.status().message());
  }
  run_ = std::move(*run);
  execution_id_ = req.execution_id();
  stream_limit_ = req.stream_limit_bytes();
  streamed_ = 0;
  v1::Envelope env;
  env.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  env.mutable_tool_progress()->set_execution_id(execution_id_);
  env.mutable_tool_progress()->set_started_pgid(run_->pgid());
  Queue(env);
  // Out now: the coordinator needs the group id if the command kills us.
  FlushOutbox();
}

void Worker::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest:
      StartRequest(env.tool_request());
      break;
    case v1::Envelope::kCancel:
      if (run_ != nullptr && env.cancel().execution_id() == execution_id_) {
        CommandRun::CancelKind kind = CommandRun::CancelKind::kUser;
        if (env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT) kind = CommandRun::CancelKind::kTimeout;
        if (env.cancel().reason() == v1::CANCEL_REASON_BUDGET) kind = CommandRun::CancelKind::kBudget;
        run_->Cancel(kind, milliseconds(env.cancel().kill_grace_ms()));
      }
      break;
    case v1::Envelope::kShutdown:
      shutdown_ = true;
      break;
    case v1::Envelope::kHeartbeat:
      break;
    default:
      spdlog::warn("ignoring unexpected message {}", static_cast<int>(env.body_case()));
  }
}

int Worker::Run() {
  // Orphans of the commands we run come back to us, so we can kill them.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  StatusOr<std::unique_ptr<ZmqEndpoint>> socket = ZmqEndpoint::ConnectDealer(o_.endpoint, o_.worker_id);
  if (!socket.ok()) {
    spdlog::error("{}", socket.status().message());
    return 1;
  }
  socket_ = std::move(*socket);

  v1::Envelope hello;
  hello.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  v1::Hello* h = hello.mutable_hello();
  h->set_worker_id(o_.worker_id);
  h->set_kind(v1::WORKER_KIND_TOOL);
  h->set_pid(getpid());
  h->set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  h->add_capabilities(kExecuteCommandTool);
  h->mutable_sandbox()->set_namespaces(o_.sandbox_description == "bwrap");
  h->mutable_sandbox()->set_description(o_.sandbox_description);
  Queue(hello);

  SteadyTime now = clock_->Now();
  SteadyTime next_heartbeat = now + o_.heartbeat_interval;
  SteadyTime silent_at = now + o_.heartbeat_interval * o_.liveness;
  while (!shutdown_) {
    now = clock_->Now();
    if (now >= next_heartbeat) {
      v1::Envelope hb;
      hb.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
      hb.mutable_heartbeat();
      Queue(hb);
      next_heartbeat = now + o_.heartbeat_interval;
    }
    FlushOutbox();

    std::vector<PollFd> fds;
    if (sigfd >= 0) fds.push_back({sigfd});
    if (run_ != nullptr) run_->AddWatchFds(outbox_.empty(), &fds);
    SteadyTime wake = std::min(next_heartbeat, silent_at);
    if (run_ != nullptr) {
      if (auto t = run_->NextTimer()) wake = std::min(wake, *t);
    }
    StatusOr<bool> ready = socket_->Poll(std::max(Duration::zero(), wake - now), &fds, !outbox_.empty());
    if (!ready.ok()) {
      spdlog::error("{}", ready.status().message());
      break;
    }
    if (sigfd >= 0 && fds[0].readable) break;

    std::string peer, payload;
    while (*ready) {
      StatusOr<bool> got = socket_->TryReceive(&peer, &payload);
      if (!got.ok() || !*got) break;
      silent_at = clock_->Now() + o_.heartbeat_interval * o_.liveness;
      v1::Envelope env;
      if (!env.ParseFromString(payload) || env.protocol_version() != v1::PROTOCOL_VERSION_CURRENT) {
        spdlog::warn("dropping a malformed message from the coordinator");
        continue;
      }
      Handle(env);
    }
    // Judged only after reading what has arrived, so a slow turn of this
    // loop is not mistaken for a silent coordinator.
    if (clock_->Now() >= silent_at) {
      spdlog::warn("coordinator silent for {} intervals; exiting", o_.liveness);
      break;
    }

    if (run_ != nullptr) {
      run_->Service(outbox_.empty(), this);
      if (run_->done()) {
        v1::ToolResult result;
        result.set_execution_id(execution_id_);
        run_->FillResult(&result);
        run_.reset();
        QueueResult(std::move(result));
        FlushOutbox();
      }
    }
  }
  if (run_ != nullptr) run_->KillNow();
  KillAllDescendants();
  return 0;
}

}  // namespace

int RunToolWorker(const ToolWorkerOptions& options, Clock* clock) {
  Worker worker(options, clock);
  return worker.Run();
}

}  // namespace odin
