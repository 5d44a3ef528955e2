#pragma once
// StallDetector: notices an agent going round in circles, from the sequence
// of its tool calls and results (as the ledger records them), its replies,
// and a fingerprint of the workspace's contents. Pure logic; time comes in
// with each event.
//
// The rules (thresholds in StallOptions):
//   repeated_call     the same call (tool and canonical arguments) with the
//                     same result, the workspace unchanged, `repeat` times in
//                     a row;
//   repeated_failure  the same call failing with the same error `failures`
//                     times in a row, the workspace unchanged, even if the
//                     rest of its output differs (digits are blurred by the
//                     caller, so timings do not hide a loop);
//   repeated_message  the same reply (without tool calls) `messages` times
//                     with no tool result between;
//   alternation       two calls alternating, A,B,A,B,A,B, over
//                     `alternation_steps` steps with the same results;
//   no_progress       `no_progress_turns` turns in a row with tool calls but
//                     no change to the workspace and no result not seen
//                     before (from any call: distinct calls that return the
//                     same thing, `true 1`, `true 2`, ..., bring nothing new).
// Not stalls: a call repeated after the workspace changed (tests re-run after
// a real edit) is a different step; so is one whose result changes each time
// (polling something that progresses).
//
// Escalation: the first detection of a loop asks for a nudge; the next
// detection of the same loop (it goes on, or comes back later) asks to stop.
// A loop is detected at most once per turn (a turn's steps end with
// EndTurn; a reply is a turn of its own), so a nudge always reaches the model
// before a stop.
//
// Thread-safety: none.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"

namespace odin {

struct StallOptions {
  bool enabled = true;
  int repeat = 3;
  int failures = 3;
  int messages = 3;
  int alternation_steps = 6;
  int no_progress_turns = 10;
};

// One tool call and its result.
struct StallStep {
  std::string execution_id;
  std::string call;    // the tool and a digest of its canonical arguments
  std::string label;   // how a reader names the call: "Read(src/a.cc)"
  std::string result;  // a digest of everything the call returned
  bool failed = false;
  std::string error;      // a digest of the error, when failed
  std::string workspace;  // the workspace fingerprint before the call
  SteadyTime at{};
};

struct StallDetection {
  std::string rule;                        // repeated_call, repeated_failure, ...
  std::string loop;                        // the rule and what repeats: names the loop
  bool stop = false;                       // a second detection of this loop
  int count = 0;                           // repetitions (steps, replies or turns)
  std::vector<std::string> execution_ids;  // the calls of the loop, oldest first
  Duration span{};                         // from the loop's first event to now
  std::string description;                 // one sentence for the model and the ledger
};

class StallDetector {
 public:
  explicit StallDetector(StallOptions options) : o_(options) {}

  // A tool call's result, in the order the model made the calls.
  std::optional<StallDetection> AddStep(const StallStep& step);
  // A reply without tool calls (its text, or a digest of it).
  std::optional<StallDetection> AddMessage(const std::string& text, SteadyTime at);
  // The end of a turn that made tool calls, with the workspace fingerprint
  // after its calls.
  std::optional<StallDetection> EndTurn(const std::string& workspace_after, SteadyTime at);

  // Forgets everything (a new message starts).
  void Reset();

 private:
  std::optional<StallDetection> Escalate(StallDetection d);
  // The run of steps at the end that are `same` as the last one, as a
  // detection of rule if it is at least threshold long.
  std::optional<StallDetection> Run(const std::string& rule, int threshold,
                                    const std::function<bool(const StallStep&)>& same);
  std::optional<StallDetection> RepeatedCall();
  std::optional<StallDetection> RepeatedFailure();
  std::optional<StallDetection> Alternation();

  StallOptions o_;
  std::vector<StallStep> steps_;  // the most recent ones
  std::string message_;           // the last reply since a tool result
  int message_count_ = 0;
  SteadyTime message_since_{};
  std::set<std::string> seen_results_;
  bool turn_new_result_ = false;
  std::vector<std::string> turn_ids_;
  bool have_workspace_ = false;
  std::string workspace_;
  int idle_turns_ = 0;
  std::vector<std::string> idle_ids_;
  SteadyTime idle_since_{};
  std::map<std::string, int> detected_;  // loop -> detections so far
  std::set<std::string> this_turn_;      // loops detected in the current turn
};

}  // namespace odin
