#pragma once
// Parallel attempts at work (docs/attempts.md): N isolated sessions given
// one message at once, on a thread of their own, judged from the ledger
// when all have ended (session/attempts.h); then, when the caller says so,
// one landed after its re-validation against the workspace as it is then
// (session/view_recheck.h). odin -p --attempts lands the best that passes;
// the interactive /attempts shows the verdicts and lands the one the user
// chooses. Either way every attempt's session records the verdicts
// (attempts_judged), and the others stay for odin diff and discard.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "session/agent_session.h"
#include "session/attempts.h"
#include "workspace/workspace.h"

namespace odin {

struct AttemptsSpec {
  // Every attempt's session before its share, variant and placement: edit
  // mode, the loaded config set, isolated (set here). A fork of a session
  // (resume + fork_session) gives each attempt its conversation.
  AgentSessionFlags base;
  std::string approval;  // deny or allow: nobody is asked during attempts
  int n = 2;
  std::string message;
  Workspace ws;  // the workspace the attempts' views copy and land in
  // Hears what happens, one line at a time (an attempt's end, its notices,
  // each re-validation command), from any of the run's threads.
  std::function<void(const std::string&)> say;
  // Called on the run's thread each time it goes idle (Wait would be true).
  std::function<void()> idle;
};

// What became of Land.
struct AttemptLanding {
  int winner = -1;                 // index into outcomes; -1: none landed
  std::string execution_id;        // the apply's, "" when nothing landed
  bool nothing_to_land = false;    // the winner passes and changed nothing that lands
  std::string error;               // the winner's apply failed
  std::vector<std::string> paths;  // what landed, relative to the workspace
};

class AttemptRun {
 public:
  // Starts the attempts' thread: it starts their sessions side by side,
  // sends the message, waits for every one to end, then judges them.
  static std::unique_ptr<AttemptRun> Start(AttemptsSpec spec);
  // Stops and waits for the thread.
  ~AttemptRun();

  // Cancels every attempt's message (their sessions end cancelled).
  void Cancel();
  // Cancels, and the run leaves: the attempts are not judged, and a landing
  // not begun, or not yet past its re-validation, lands nothing (an apply
  // under way ends). Wait then tells when the thread is done.
  void Stop();
  // Attempts that have ended so far.
  int Ended() const { return ended_; }
  // True once the thread is idle: the attempts judged (or failed to run),
  // or a Land done. Waits up to `wait` for it.
  bool Wait(Duration wait);
  // Why the attempts could not run (one did not start, the ledger could not
  // be read): OK otherwise. Read once Wait is true.
  const Status& error() const { return error_; }
  // The verdicts, once judged; passes and why change as Land re-validates.
  const std::vector<AttemptOutcome>& outcomes() const { return outcomes_; }
  // The attempt Odin would land now (PickAttempt), -1 when none passes.
  int Recommended() const;

  // Lands, on a thread (Wait tells when it is done; called only once Wait
  // is true): the attempt at index
  // chosen (-1: none), or (nullopt) the best that passes, the next when one
  // fails its re-validation. A chosen one that fails it, or does not pass,
  // lands nothing. Then records the verdicts in every attempt's session,
  // with who chose.
  void Land(std::optional<int> chosen);
  const AttemptLanding& landing() const { return landing_; }
  // The verdicts and the landing as one record: what the ledger keeps and
  // odin -p --output-format json prints.
  std::string RecordJson() const;

 private:
  AttemptRun() = default;
  void RunAndJudge();
  void LandOnThread(std::optional<int> chosen);
  // Runs phase on a thread of its own once the last one's is done (Wait
  // true); Wait is false until it ends.
  void RunPhase(std::function<void()> phase);
  bool Stopping();

  AttemptsSpec spec_;
  std::vector<AttemptOutcome> outcomes_;
  AttemptLanding landing_;
  Status error_;
  bool chosen_by_user_ = false;

  std::mutex mu_;
  std::condition_variable changed_;
  bool busy_ = true;
  bool stopping_ = false;
  bool cancelled_ = false;
  std::atomic<int> ended_{0};
  std::vector<std::shared_ptr<class HostedSession>> sessions_;  // while they run
  std::thread thread_;
};

}  // namespace odin
