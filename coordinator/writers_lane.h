#pragma once
// Which writing calls may run now, so that every change has one author.
//
// WritersLane, while changes are tracked: file-tool writes (each to its own
// file) run together; commands over overlays of their own run side by side,
// one per agent; a command without an overlay runs alone (its changes are
// found by looking at the tree). Writes and commands never run beside each
// other. Calls wait in order of arrival: an agent's commands keep the order
// it asked for them (a model's second command may build on its first), so
// other agents' commands go past one that waits behind its agent's; any
// other call that cannot go yet stops the queue, so nothing overtakes it.
//
// FileWriteQueues: one write per file at a time, in order of arrival; a
// later write meets read-before-edit only when its turn comes.
//
// Both only decide; the coordinator dispatches (Coordinator::PumpLane,
// DispatchNextWrite).

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace odin {

class WritersLane {
 public:
  enum class Kind {
    kWrite,          // a file tool's write
    kSharedCommand,  // a command over an overlay of its own
    kCommand,        // a command that writes into the workspace itself
  };
  struct Caller {
    Kind kind;
    std::string agent_id;
  };
  // How a waiting call would run if it went now (a worker's Hello can change
  // whether commands get overlays); nullopt when the call is gone.
  using Lookup = std::function<std::optional<Caller>(const std::string& execution_id)>;

  void Wait(const std::string& execution_id) { waiting_.push_back(execution_id); }
  // A waiting call taken out (cancelled): whether it waited.
  bool Forget(const std::string& execution_id);
  // The first waiting call that may go now, taken out of the queue; nullopt
  // when none may. The caller enters it (Enter) before asking again.
  std::optional<std::string> Next(const Lookup& lookup);

  void Enter(const std::string& execution_id, const Caller& caller);
  // Its turn is over: whether it was in the lane.
  bool Leave(const std::string& execution_id);
  // Whether it runs beside other commands over overlays.
  bool Shared(const std::string& execution_id) const;
  // A file-tool write or a command without an overlay runs: the tree is
  // not only the tracker's to look at.
  bool WriterRunning() const { return writes_ > 0 || !alone_.empty(); }
  bool CommandAloneRunning() const { return !alone_.empty(); }

 private:
  bool Admits(const Caller& caller) const;

  std::deque<std::string> waiting_;       // execution ids, in order of arrival
  std::map<std::string, Caller> inside_;  // by execution id
  int writes_ = 0;                        // file-tool writes inside
  std::map<std::string, int> shared_;     // commands over overlays inside, by agent
  int shared_total_ = 0;
  std::string alone_;  // the command without an overlay inside
};

class FileWriteQueues {
 public:
  // Queues a write on path (absolute): whether its turn is now.
  bool Push(const std::string& path, const std::string& execution_id);
  // The write whose turn it is on path; nullopt (and the queue dropped)
  // when none waits.
  std::optional<std::string> Front(const std::string& path);
  // The write in flight on path is over: whether it was execution_id (then
  // the next one's turn begins).
  bool PopFront(const std::string& path, const std::string& execution_id);
  // A write still waiting for its turn taken out (cancelled): whether it
  // waited. The one in flight stays.
  bool ForgetWaiting(const std::string& path, const std::string& execution_id);
  // Queued right after the write in flight (a rollback of it goes first).
  void PushNext(const std::string& path, const std::string& execution_id);

 private:
  std::map<std::string, std::deque<std::string>> queues_;  // path -> execution ids; the front is in flight
};

}  // namespace odin
