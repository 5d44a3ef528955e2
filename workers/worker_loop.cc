#include "workers/worker_loop.h"

#include <signal.h>
#include <sys/signalfd.h>

#include <memory>

#include <spdlog/spdlog.h>

#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

// Blocks SIGTERM and SIGINT in this thread and returns a signalfd that
// becomes readable when one arrives (or none if the kernel has no signalfd).
UniqueFd TerminationSignalFd() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  return UniqueFd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
}

}  // namespace

int RunWorkerLoop(const WorkerOptions& o, const WorkerHello& hello, Clock* clock, WorkerLogic* logic) {
  UniqueFd sigfd = TerminationSignalFd();
  StatusOr<std::unique_ptr<WorkerChannel>> connected =
      WorkerChannel::Connect({o.endpoint, o.worker_id, o.secret, o.heartbeat_interval, o.liveness}, clock);
  if (!connected.ok()) {
    spdlog::error("{}", connected.status().message());
    return 1;
  }
  WorkerChannel& channel = **connected;
  channel.SayHello(hello.kind, hello.capabilities, o.sandbox_description);
  logic->Attach(&channel);

  bool shutdown = false;
  auto handle = [&](const v1::Envelope& env) {
    if (env.has_shutdown()) {
      shutdown = true;
    } else if (!env.has_heartbeat()) {  // a heartbeat's news is its arrival, which the channel noted
      logic->Handle(env);
    }
  };
  while (!shutdown) {
    channel.Tick();
    std::vector<PollFd> fds;
    if (sigfd.valid()) fds.push_back({sigfd.get()});
    logic->AddWatchFds(&fds);
    if (!channel.Turn(logic->NextTimer(), &fds, handle)) break;
    if (sigfd.valid() && fds[0].readable) break;
    logic->OnPolled(fds);
    logic->Service();
  }
  logic->Stop();
  return 0;
}

}  // namespace odin
