#pragma once
// WorkerChannel: a worker's side of the worker protocol, shared by every kind
// of worker (tool worker, lsp host, subagent worker).
//
// It connects a DEALER to the coordinator under the worker's id, says Hello,
// heartbeats every interval, and presumes the coordinator gone after
// `liveness` silent intervals. Messages go out through an outbox, so a
// coordinator that is behind never blocks the worker's loop.
//
// A worker's loop (the one in workers/worker_loop.h):
//   while (...) {
//     channel.Tick();                         // heartbeat if due, flush
//     ... collect fds and the worker's own next timer
//     if (!channel.Turn(timer, &fds, handle)) break;
//     ... service own fds
//   }
//
// Thread-safety: none; one channel belongs to one loop.

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"

namespace odin {
namespace v1 {
class Envelope;
class ToolResult;
}  // namespace v1

struct WorkerChannelOptions {
  std::string endpoint;   // coordinator ROUTER
  std::string worker_id;  // routing id, given by the coordinator
  std::string secret;     // handed over at spawn on an inherited fd; said in Hello
  Duration heartbeat_interval = milliseconds(500);
  int liveness = 3;
};

class WorkerChannel {
 public:
  static StatusOr<std::unique_ptr<WorkerChannel>> Connect(const WorkerChannelOptions& options, Clock* clock);

  // Queues Hello: kind is a v1::WorkerKind; namespaces whether the sandbox
  // description is bubblewrap's.
  void SayHello(int kind, const std::vector<std::string>& capabilities, const std::string& sandbox_description);
  // Queues a message (its protocol version is set here).
  void Queue(v1::Envelope env);
  // Queues a result, its strings made valid UTF-8 first (names from the file
  // system and quoted bytes need not be, and the coordinator would drop an
  // envelope that does not parse).
  void QueueResult(v1::ToolResult result);
  // Queues a heartbeat now and flushes: before work that blocks the loop for
  // a while, so the whole liveness window is available for it.
  void HeartbeatNow();
  // Queues a heartbeat if one is due, and sends what the socket takes.
  void Tick();
  void Flush();
  bool outbox_empty() const { return outbox_.empty(); }

  // One turn of a worker's loop: waits until wake (or the channel's own next
  // deadline), a message, or one of fds; hands each message that arrived to
  // handle. False when the worker should exit: the socket failed, or the
  // coordinator has been silent for the whole liveness window.
  bool Turn(SteadyTime wake, std::vector<PollFd>* fds, const std::function<void(const v1::Envelope&)>& handle);

  // The next time Tick must run, or silence be judged.
  SteadyTime NextWake() const;
  // Waits until wake, a message, the socket taking more (if the outbox holds
  // any) or one of fds. Returns whether messages are waiting.
  StatusOr<bool> Wait(SteadyTime wake, std::vector<PollFd>* fds);
  // Takes one waiting message. False when none is. Malformed ones are dropped.
  bool Receive(v1::Envelope* env);
  // The coordinator has been silent for the whole liveness window.
  bool CoordinatorSilent() const;

 private:
  WorkerChannel(WorkerChannelOptions o, Clock* clock, std::unique_ptr<ZmqEndpoint> socket);

  WorkerChannelOptions o_;
  Clock* clock_;
  std::unique_ptr<ZmqEndpoint> socket_;
  std::deque<std::string> outbox_;
  SteadyTime next_heartbeat_{};
  SteadyTime silent_at_{};
};

}  // namespace odin
