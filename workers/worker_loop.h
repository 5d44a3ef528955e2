#pragma once
// The run loop every worker process shares (tool worker, lsp host, subagent
// worker), and the options every worker starts from.
//
// The loop connects to the coordinator, says Hello, then turn after turn:
// heartbeats when one is due, waits for a message, one of the worker's fds,
// the worker's next timer or SIGTERM/SIGINT, hands the messages to the
// worker, and lets it serve what became ready. It ends on Shutdown, on a
// termination signal, when the coordinator has been silent for the whole
// liveness window, or when the socket fails; the worker then stops whatever
// it started.
//
// What differs between workers is a WorkerLogic: the messages it handles, the
// fds and timers it waits on, what it does after each turn and on the way out.
// Heartbeats and Shutdown belong to the loop and never reach the logic.
//
// One passive loop, no threads of its own (ZeroMQ keeps an I/O thread).

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/zmq_endpoint.h"

namespace odin {
namespace v1 {
class Envelope;
}  // namespace v1

class WorkerChannel;

// Every worker's options, as the coordinator gives them on the command line
// (workers/worker_main.h parses them).
struct WorkerOptions {
  std::string endpoint;             // --connect: the coordinator's ROUTER, e.g. ipc:///tmp/odin-x/w.sock
  std::string worker_id;            // routing id, from the credentials fd
  std::string secret;               // proves this worker at Hello, from the credentials fd
  std::string workspace;            // --workspace: absolute
  std::string sandbox_description;  // from ODIN_SANDBOX, reported in Hello
  Duration heartbeat_interval = milliseconds(500);  // --heartbeat-ms
  int liveness = 3;  // --liveness: silent intervals before the coordinator is presumed gone
};

// What a kind of worker adds to the loop. Every call comes from the loop,
// one at a time; none may block for long, or heartbeats wait on it.
class WorkerLogic {
 public:
  virtual ~WorkerLogic() = default;

  // Once, after connecting and queueing Hello, before the first turn. The
  // channel stays valid until Stop has returned, and not after.
  virtual void Attach(WorkerChannel* channel) = 0;
  // A message from the coordinator, other than Heartbeat and Shutdown.
  virtual void Handle(const v1::Envelope& env) = 0;
  // Appends the fds to wait on this turn.
  virtual void AddWatchFds(std::vector<PollFd>* fds) {}
  // The latest time the next turn must come, for the worker's own timers.
  virtual SteadyTime NextTimer() const { return SteadyTime::max(); }
  // After each turn that did not end the loop: which of the fds it added
  // are ready (for logic that must be told, like libcurl's), then serve
  // whatever became ready.
  virtual void OnPolled(const std::vector<PollFd>& fds) {}
  virtual void Service() {}
  // Once, when the loop ends (not when it never connected): stop and reap
  // everything the worker started.
  virtual void Stop() {}
};

// What the worker says in Hello.
struct WorkerHello {
  int kind = 0;                           // a v1::WorkerKind
  std::vector<std::string> capabilities;  // the tools it runs
};

// Runs the loop until the worker should exit. Returns the process exit code:
// 1 if it could not connect, else 0.
int RunWorkerLoop(const WorkerOptions& options, const WorkerHello& hello, Clock* clock, WorkerLogic* logic);

}  // namespace odin
