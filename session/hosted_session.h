#pragma once
// HostedSession: an agent session the daemon runs for its clients. The
// session (its runtime, model client and planner loop) lives on a thread of
// its own, in the same poll loop odin -p uses; other threads (the gRPC
// handlers) only post work to that thread and read the session's events, which
// are kept in order, numbered from 1, so any number of clients can follow
// them and a client that comes back can pick up where it left off.
//
// Nothing here knows of a protocol: the daemon's gRPC service
// (daemon/service.cc) and odin acp (cli/cli_acp.cc) are adapters over it.

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "session/agent_session.h"
#include "session/session_events.h"
#include "odin/v1/coordinator.pb.h"

namespace odin {

class HostedSession {
 public:
  // Starts the session (a missing API key or a bad config fails here) and its
  // thread. default_mode is the mode of messages sent without one.
  static StatusOr<std::unique_ptr<HostedSession>> Start(const AgentSessionFlags& flags, Mode default_mode,
                                                        std::string approval);
  // Cancels what runs, stops the thread and the session's workers.
  ~HostedSession();

  const std::string& id() const { return id_; }

  // Queues a message (mode "" is the session's default; workflow, if not
  // "", is this message's and the later ones'). Returns its id and the seq
  // of the last event before it, InvalidArgument for an unknown mode or
  // workflow, or FailedPrecondition if the session ended.
  StatusOr<std::pair<std::string, uint64_t>> Send(const std::string& text, const std::string& mode,
                                                  const std::string& workflow = "");
  // Answers an approval request ("once", "session" or "deny"); false if
  // nothing waits under that id.
  bool Approve(const std::string& execution_id, const std::string& answer);
  // Cancels the message being worked on; false if there is none.
  bool Cancel();
  // Something the model must know before the next message (Agent::AddNote).
  // Never waits.
  void AddNote(std::string text);

  v1::SessionInfo Info();
  v1::SessionStatus Report();

  // The events after seq, waiting up to `wait` for one if there are none yet.
  // *ended is set when the session takes no more messages and every event
  // was handed out.
  std::vector<v1::SessionEvent> EventsAfter(uint64_t seq, Duration wait, bool* ended);

 private:
  HostedSession() = default;
  void Loop();
  // Runs task on the session's thread and waits for it.
  template <typename T>
  T RunOnLoop(std::function<T()> task);
  void Post(std::function<void()> task);
  void Publish(v1::SessionEvent e);

  std::string id_;
  Mode default_mode_ = Mode::kEdit;
  int64_t created_at_ms_ = 0;
  std::unique_ptr<EventRecorder> recorder_;
  // The thread's own: calls whose end will be published (started, not
  // ended), and of those, the ones asking for approval.
  std::set<std::string> started_;
  std::set<std::string> asked_;
  std::unique_ptr<AgentSession> session_;  // touched only on the thread
  int wake_fd_ = -1;                       // eventfd: work was posted
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<v1::SessionEvent> events_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  bool ended_ = false;
  // Copies for Info() without a trip to the thread.
  bool busy_ = false;
  uint32_t queued_ = 0;
};

}  // namespace odin
