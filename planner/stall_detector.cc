#include "planner/stall_detector.h"

#include <algorithm>
#include <functional>

namespace odin {

namespace {

// Steps kept: enough for every rule's window.
constexpr size_t kMaxSteps = 64;

bool SameStep(const StallStep& a, const StallStep& b) {
  return a.call == b.call && a.result == b.result && a.workspace == b.workspace;
}

std::vector<std::string> Ids(std::vector<StallStep>::const_iterator begin, std::vector<StallStep>::const_iterator end) {
  std::vector<std::string> ids;
  for (auto it = begin; it != end; ++it) ids.push_back(it->execution_id);
  return ids;
}

}  // namespace

std::optional<StallDetection> StallDetector::Escalate(StallDetection d) {
  // One detection of a loop per turn: the model must have seen the nudge
  // before the same loop can stop the run.
  if (!this_turn_.insert(d.loop).second) return std::nullopt;
  int times = ++detected_[d.loop];
  d.stop = times >= 2;
  return d;
}

std::optional<StallDetection> StallDetector::Run(const std::string& rule, int threshold,
                                                 const std::function<bool(const StallStep&)>& same) {
  size_t run = 1;
  while (run < steps_.size() && same(steps_[steps_.size() - 1 - run])) ++run;
  if (run < static_cast<size_t>(std::max(threshold, 2))) return std::nullopt;
  auto first = steps_.end() - static_cast<std::ptrdiff_t>(run);
  StallDetection d;
  d.rule = rule;
  d.loop = rule + "|" + steps_.back().call;
  d.count = static_cast<int>(run);
  d.execution_ids = Ids(first, steps_.end());
  d.span = steps_.back().at - first->at;
  return d;
}

std::optional<StallDetection> StallDetector::RepeatedCall() {
  const StallStep& last = steps_.back();
  std::optional<StallDetection> d =
      Run("repeated_call", o_.repeat, [&last](const StallStep& s) { return SameStep(s, last); });
  if (d) {
    d->description = "you made the same call, " + last.label + ", " + std::to_string(d->count) +
                     " times in a row with the same result and no change to the workspace";
  }
  return d;
}

std::optional<StallDetection> StallDetector::RepeatedFailure() {
  const StallStep& last = steps_.back();
  if (!last.failed) return std::nullopt;
  std::optional<StallDetection> d = Run("repeated_failure", o_.failures, [&last](const StallStep& s) {
    return s.failed && s.call == last.call && s.error == last.error && s.workspace == last.workspace;
  });
  if (d) {
    d->description = "the same call, " + last.label + ", failed with the same error " + std::to_string(d->count) +
                     " times in a row, with no change to the workspace";
  }
  return d;
}

std::optional<StallDetection> StallDetector::Alternation() {
  size_t n = static_cast<size_t>(std::max(o_.alternation_steps, 4));
  if (steps_.size() < n) return std::nullopt;
  auto first = steps_.end() - static_cast<std::ptrdiff_t>(n);
  const StallStep& a = *first;
  const StallStep& b = *(first + 1);
  if (SameStep(a, b) || a.call == b.call) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    if (!SameStep(*(first + static_cast<std::ptrdiff_t>(i)), i % 2 == 0 ? a : b)) return std::nullopt;
  }
  StallDetection d;
  d.rule = "alternation";
  d.loop = d.rule + "|" + std::min(a.call, b.call) + "|" + std::max(a.call, b.call);
  d.count = static_cast<int>(n);
  d.execution_ids = Ids(first, steps_.end());
  d.span = steps_.back().at - a.at;
  d.description = "you alternated between two calls, " + a.label + " and " + b.label + ", over " + std::to_string(n) +
                  " steps with the same results and no change to the workspace";
  return d;
}

std::optional<StallDetection> StallDetector::AddStep(const StallStep& step) {
  message_.clear();
  message_count_ = 0;
  // New is what the model had not seen, whatever call brought it: distinct
  // calls that all return the same nothing are no progress.
  if (seen_results_.insert(step.result).second) turn_new_result_ = true;
  turn_ids_.push_back(step.execution_id);
  if (!o_.enabled) return std::nullopt;
  steps_.push_back(step);
  if (steps_.size() > kMaxSteps) steps_.erase(steps_.begin());
  // The most specific rule speaks for the step.
  for (auto rule : {&StallDetector::RepeatedCall, &StallDetector::RepeatedFailure, &StallDetector::Alternation}) {
    std::optional<StallDetection> d = (this->*rule)();
    if (d) return Escalate(std::move(*d));
  }
  return std::nullopt;
}

std::optional<StallDetection> StallDetector::AddMessage(const std::string& text, SteadyTime at) {
  this_turn_.clear();  // a reply is a turn of its own
  if (text.empty()) return std::nullopt;
  if (message_count_ > 0 && text == message_) {
    ++message_count_;
  } else {
    message_ = text;
    message_count_ = 1;
    message_since_ = at;
  }
  if (!o_.enabled || message_count_ < std::max(o_.messages, 2)) return std::nullopt;
  StallDetection d;
  d.rule = "repeated_message";
  d.loop = d.rule + "|" + text;
  d.count = message_count_;
  d.span = at - message_since_;
  d.description =
      "you gave the same reply " + std::to_string(message_count_) + " times in a row without making a tool call";
  return Escalate(std::move(d));
}

std::optional<StallDetection> StallDetector::EndTurn(const std::string& workspace_after, SteadyTime at) {
  bool changed = !have_workspace_ || workspace_after != workspace_;
  // The first turn has nothing to compare with: it counts as progress.
  bool progress = changed || turn_new_result_;
  have_workspace_ = true;
  workspace_ = workspace_after;
  std::vector<std::string> ids = std::move(turn_ids_);
  turn_ids_.clear();
  turn_new_result_ = false;
  if (progress) {
    idle_turns_ = 0;
    idle_ids_.clear();
    this_turn_.clear();
    return std::nullopt;
  }
  if (idle_turns_ == 0) idle_since_ = at;
  ++idle_turns_;
  idle_ids_.insert(idle_ids_.end(), ids.begin(), ids.end());
  if (idle_ids_.size() > kMaxSteps) idle_ids_.erase(idle_ids_.begin(), idle_ids_.end() - kMaxSteps);
  if (!o_.enabled || idle_turns_ < std::max(o_.no_progress_turns, 1)) {
    this_turn_.clear();
    return std::nullopt;
  }
  StallDetection d;
  d.rule = "no_progress";
  d.loop = d.rule;
  d.count = idle_turns_;
  d.execution_ids = idle_ids_;
  d.span = at - idle_since_;
  d.description = std::to_string(idle_turns_) +
                  " turns in a row changed nothing in the workspace and returned nothing you had not seen before";
  std::optional<StallDetection> out = Escalate(std::move(d));
  this_turn_.clear();
  return out;
}

void StallDetector::Reset() { *this = StallDetector(o_); }

}  // namespace odin
