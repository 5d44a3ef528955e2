// The agent loop's side of the convergence gate (gate 4, whose rules are in
// convergence_gate.cc): a claim of completion is refused while the session
// is blocked, and otherwise meets the profile's backpressure checks, run as
// ExecuteCommand calls one after the other; then the workflow's rules (tdd,
// batch) and the QA verifier (planner/reviewers.h).

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/ids.h"
#include "planner/agent.h"
#include "planner/run_outcome.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

namespace {

// The JSON of a final answer: its whole text, or the one fenced block
// (```json ... ```) that is its whole text, as models often write it.
std::string AnswerJsonText(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  size_t end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  std::string t = text.substr(begin, end - begin + 1);
  if (t.rfind("```", 0) != 0 || t.size() < 7 || t.compare(t.size() - 3, 3, "```") != 0) return t;
  size_t first_line = t.find('\n');
  if (first_line == std::string::npos || first_line > t.size() - 3) return t;
  std::string info = t.substr(3, first_line - 3);
  if (!info.empty() && info != "json" && info != "JSON") return t;
  std::string inner = t.substr(first_line + 1, t.size() - 3 - first_line - 1);
  return inner.find("```") == std::string::npos ? inner : t;
}

}  // namespace

bool Agent::AnswerValid() {
  Current& c = *current_;
  std::string answer = AnswerJsonText(c.outcome.text);
  std::vector<std::string> errors = answer_schema_->Validate(answer, 10);
  if (errors.empty()) {
    StatusOr<std::string> canonical = CanonicalizeJson(answer);
    c.outcome.structured_output = canonical.ok() ? *canonical : answer;
    RecordGateEvent("output_valid", "", Dump({{"bytes", answer.size()}}));
    return true;
  }
  bool last = c.answer_retries >= 1;
  RecordGateEvent("output_invalid", "", Dump({{"errors", errors}, {"sent_back", !last}}));
  if (last) {
    Finish(RunOutcomeName(RunOutcome::kInvalidOutput),
           Status::FailedPrecondition("the final answer",
                                      "is not valid against --json-schema, even after one retry: " + errors.front()));
    return false;
  }
  ++c.answer_retries;
  std::string text = "[runtime] Your final answer is not valid against the JSON Schema the user requires:\n";
  for (const std::string& e : errors) text += "- " + e + "\n";
  text += "Answer again with only the JSON value: no prose around it, no code fence.";
  history_.push_back({ChatMessage::Role::kUser, text, {}, {}});
  AskModel();
  return false;
}

void Agent::ClaimCompletion() {
  Current& c = *current_;
  // The answer's form first: the checks judge the work, not its words, and
  // are not run for an answer that must be written again anyway.
  if (answer_schema_ && !c.message.review && !AnswerValid()) return;
  if (c.message.mode != Mode::kEdit) return AcceptCompletion();
  // No file may be left with new errors or unverified.
  std::string event;
  std::vector<FileVerdict> blocking = host_->Blocking();
  if (std::optional<Refusal> blocked = RefuseWhileBlocked(blocking, o_.workspace, &event)) {
    RecordGateEvent("completion_refused", blocking.front().check_id, event);
    return Refuse(*blocked);
  }
  // The reviewers' holds and the workflow's rules.
  if (std::optional<Refusal> refused = WorkflowRefusal()) return Refuse(*refused);
  // /init's product is ODIN.md: without it there is no /init, and
  // instructions alone are not code for the project's checks to judge.
  if (c.message.slash_command) {
    const std::vector<std::string>& changed = c.outcome.changed_files;
    if (std::find(changed.begin(), changed.end(), "ODIN.md") == changed.end()) {
      RecordGateEvent("completion_refused", "", Dump({{"reason", "init_no_file"}}));
      return Refuse({"init_no_file",
                     "[runtime] Completion refused: /init writes ODIN.md with InitTool, and ODIN.md was not written. "
                     "Call InitTool with the file's whole content."});
    }
    if (changed.size() == 1) return ReviewCompletion();
  }
  // Backpressure, when the message changed files.
  if (c.outcome.changed_files.empty()) return ReviewCompletion();
  c.checks = ChecksForProfile(o_.profile, o_.checks, o_.workspace);
  if (!c.outcome.not_validated.empty()) {
    // Files no validator looked at: in every profile, fast included, checks
    // that run and pass must vouch for them.
    if (o_.profile == Profile::kFast) c.checks = ChecksForProfile(Profile::kAuto, o_.checks, o_.workspace);
    bool any = false;
    for (const CheckSpec& spec : c.checks) any = any || !spec.command.empty();
    if (!any) {
      std::string text = "[runtime] Completion refused: " + std::to_string(c.outcome.not_validated.size()) +
                         " changed files were not validated (too many changed by one command) and no build, lint "
                         "or test command is configured or detected to vouch for them. Configure checks in "
                         "odinconfig.json, or change fewer files at a time.";
      RecordGateEvent("completion_refused", "",
                      json({{"reason", "not_validated"}, {"files", c.outcome.not_validated.size()}}).dump());
      return Refuse({"not_validated", text});
    }
  }
  AddWorkflowChecks(&c.checks);
  c.check_index = 0;
  c.check_failures.clear();
  c.check_status.clear();
  RunNextCheck();
}

void Agent::RunNextCheck() {
  Current& c = *current_;
  // Under a custom command's allowed-tools, Odin's own checks run only
  // where the list names them: a check runs what the model may have just
  // written (a Makefile), and a list that names no command gave it none.
  auto outside = [&](const CheckSpec& spec) {
    bool own = spec.origin != "plan" && spec.origin.rfind("tdd", 0) != 0;
    return own && c.message.tool_list && !host_->CommandWithinList(*c.message.tool_list, spec.command);
  };
  while (c.check_index < c.checks.size() &&
         (c.checks[c.check_index].command.empty() || outside(c.checks[c.check_index]))) {
    const CheckSpec& spec = c.checks[c.check_index++];
    if (spec.command.empty()) {
      RecordGateEvent("check", "", json({{"name", spec.name}, {"status", "not_applicable"}}).dump());
    } else {
      c.check_status[spec.name] = "skipped";
      RecordGateEvent("check", "",
                      json({{"name", spec.name},
                            {"command", spec.command},
                            {"status", "skipped"},
                            {"reason", "the command's allowed-tools do not name it"}})
                          .dump());
    }
  }
  if (c.check_index == c.checks.size()) {
    RecordBatchItems();
    if (c.check_failures.empty()) return ReviewCompletion();
    return Refuse(RefuseForChecks(c.check_failures));
  }
  const CheckSpec& spec = c.checks[c.check_index];
  ToolCall call;
  call.execution_id = NewId("ex");
  call.tool = "ExecuteCommand";
  call.arguments_json = json({{"command", spec.command}, {"timeout_seconds", o_.checks.timeout_seconds}}).dump();
  call.agent_id = o_.agent_id;
  call.mode = CallModeOf(c.message.mode);
  call.timeout = seconds(o_.checks.timeout_seconds);
  // Odin's own checks; a command the model wrote (a batch step's, the tdd
  // test) meets the hooks like the model's calls.
  call.internal = spec.origin != "plan" && spec.origin.rfind("tdd", 0) != 0;
  // ...and, the model's, the message's tool list (a custom command's).
  if (!call.internal && c.message.tool_list) call.tool_lists.push_back(*c.message.tool_list);
  c.check_running = call.execution_id;
  c.outcome.execution_ids.push_back(call.execution_id);
  if (observer_) observer_->OnToolStart(call.execution_id, {call.execution_id, call.tool, call.arguments_json});
  uint64_t generation = generation_;
  CallHandlers handlers;
  handlers.on_done = [this, generation, id = call.execution_id](const v1::ToolResult& r, const Status&) {
    if (generation == generation_ && current_) OnCheckDone(id, r);
  };
  host_->Submit(std::move(call), std::move(handlers));
}

void Agent::OnCheckDone(const std::string& id, const v1::ToolResult& r) {
  Current& c = *current_;
  c.check_running.clear();
  if (observer_) observer_->OnToolEnd(id, "ExecuteCommand", r);
  const CheckSpec spec = c.checks[c.check_index++];
  if (c.cancelled) return Finish("cancelled");
  if (!c.stopping.empty()) return Finish(c.stopping, c.stop_error);
  CheckVerdict v = JudgeCheck(spec, id, r, o_.checks.timeout_seconds, o_.fail_open);
  RecordGateEvent("check", id, v.event);
  c.check_status[spec.name] = CheckStatusName(v.status);
  if (v.failure) c.check_failures.push_back(*v.failure);
  RunNextCheck();
}

void Agent::AcceptCompletion() {
  Current& c = *current_;
  // A subagent's are SubagentStop hooks, run by the coordinator.
  HookEvent event = o_.subagent ? HookEvent::kSubagentStop : HookEvent::kStop;
  if (!host_->HasHooks(event)) return Finish("done");
  PersistHistory();  // the transcript holds the answer the hooks judge
  uint64_t generation = generation_;
  // Claude Code's Stop fields; Odin has no background tasks or crons yet.
  json fields = {{"stop_hook_active", c.stop_blocks > 0},
                 {"last_assistant_message", c.outcome.text},
                 {"background_tasks", json::array()},
                 {"session_crons", json::array()}};
  const char* name = HookEventName(event);
  host_->RunHooks(
      {event, o_.agent_id, CallModeOf(c.message.mode), c.message.id, "", fields.dump()},
      [this, generation, name](const HookOutcome& o) {
        if (generation != generation_ || !current_) return;
        Current& c = *current_;
        if (c.cancelled) return Finish("cancelled");
        // "continue": false wins over a block: the agent stops.
        if (o.stop || o.decision != HookOutcome::Decision::kBlock) return Finish("done");
        std::string reason = o.reason.empty() ? std::string("a ") + name + " hook asked to go on" : o.reason;
        if (c.stop_blocks >= o_.max_stop_blocks) {
          RecordGateEvent(
              "hook", "",
              json({{"event", name},
                    {"decision", "block"},
                    {"reason", reason},
                    {"report", std::string(name) + " hook blocked again after " + std::to_string(c.stop_blocks) +
                                   " blocks (hooks.max_stop_blocks); the run ended anyway. Its reason: " + reason}})
                  .dump(-1, ' ', false, json::error_handler_t::replace));
          return Finish("done");
        }
        ++c.stop_blocks;
        RecordGateEvent("hook", "",
                        json({{"event", name}, {"decision", "block"}, {"reason", reason}})
                            .dump(-1, ' ', false, json::error_handler_t::replace));
        c.outcome.structured_output.clear();  // the next answer is judged anew
        history_.push_back({ChatMessage::Role::kUser,
                            std::string("[runtime] A ") + name + " hook asks you to go on: " + reason,
                            {},
                            {}});
        AskModel();
      });
}

void Agent::Refuse(const Refusal& refusal) {
  Current& c = *current_;
  int times = c.refusals.Count(refusal.fingerprint);
  if (c.refusals.GaveUp(times)) {
    RecordGateEvent("not_converged", "",
                    json({{"refusals", times}, {"last", refusal.text.substr(0, 2000)}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    c.outcome.error =
        Status::FailedPrecondition("not converged", "the same refusal came back " + std::to_string(times) + " times");
    return Finish("not_converged", c.outcome.error);
  }
  // Its first two lines ("Completion refused: a check failed." and which).
  size_t first = refusal.text.find('\n');
  size_t second = first == std::string::npos ? first : refusal.text.find('\n', first + 1);
  std::string line = refusal.text.substr(0, second);
  if (first != std::string::npos && first < line.size()) line[first] = ' ';
  if (line.rfind("[runtime] ", 0) == 0) line.erase(0, 10);
  // "... exited with 2. The end of its output:": the output is the report's.
  if (!line.empty() && line.back() == ':' && line.rfind(". ") != std::string::npos) line.erase(line.rfind(". ") + 1);
  c.last_refusal = line.size() > 400 ? line.substr(0, 397) + "..." : line;
  c.outcome.structured_output.clear();  // the next answer is judged anew
  history_.push_back({ChatMessage::Role::kUser, refusal.text, {}, {}});
  AskModel();
}

void Agent::AddWorkflowChecks(std::vector<CheckSpec>* checks) {
  Current& c = *current_;
  if (c.workflow == Workflow::kTdd && !c.tdd_failing_command.empty()) {
    // The test seen failing must pass now: Odin runs it again.
    checks->push_back({"tdd test", c.tdd_failing_command, "tdd: " + c.tdd_failing_id});
  }
  if (c.workflow == Workflow::kBatch && c.plan) {
    for (size_t i = 0; i < c.plan->steps.size(); ++i) {
      const PlanStep& step = c.plan->steps[i];
      if (!step.check.empty()) checks->push_back({"step " + std::to_string(i + 1), step.check, "plan"});
    }
  }
}

std::optional<Refusal> Agent::WorkflowRefusal() {
  Current& c = *current_;
  if (!c.review_hold.empty()) {
    RecordGateEvent("completion_refused", "", Dump({{"reason", "hold"}, {"rule", c.review_hold}}));
    return Refusal{"hold_" + c.review_hold,
                   "[runtime] Completion refused: the " + c.review_hold + " hold stands: " + c.review_hold_reason};
  }
  if (c.workflow == Workflow::kMinorEdit && c.outcome.changed_files.size() > kMinorEditMaxFiles) {
    RecordGateEvent("completion_refused", "",
                    Dump({{"reason", "minor-edit"}, {"files", c.outcome.changed_files.size()}}));
    return Refusal{"minor_edit_files", "[runtime] Completion refused by the minor-edit rule: " +
                                           std::to_string(c.outcome.changed_files.size()) +
                                           " files changed; this workflow allows " +
                                           std::to_string(kMinorEditMaxFiles) + ". Ask the user for a wider workflow."};
  }
  if (c.workflow == Workflow::kTdd && c.tdd_failing_command.empty() && !c.outcome.changed_files.empty()) {
    RecordGateEvent("completion_refused", "", Dump({{"reason", "tdd"}, {"rule", "no failing test seen"}}));
    return Refusal{"tdd_no_failing_test",
                   "[runtime] Completion refused by the tdd rule: no test was seen failing. Write or change a test, "
                   "run it with ExecuteCommand and see it fail (the command must name the test file or test), then "
                   "make it pass."};
  }
  return std::nullopt;
}

void Agent::RecordBatchItems() {
  Current& c = *current_;
  if (c.workflow != Workflow::kBatch || !c.plan) return;
  // Each step's verdict: its files sound, its check passed.
  std::vector<FileVerdict> blocking = host_->Blocking();
  for (size_t i = 0; i < c.plan->steps.size(); ++i) {
    const PlanStep& step = c.plan->steps[i];
    json files = json::array();
    bool ok = true;
    for (const std::string& f : step.files) {
      bool changed =
          std::find(c.outcome.changed_files.begin(), c.outcome.changed_files.end(), f) != c.outcome.changed_files.end();
      std::string verdict = changed ? "changed" : "unchanged";
      for (const FileVerdict& v : blocking) {
        if (DisplayPath(v.path, o_.workspace) == f) verdict = VerdictName(v.status);
      }
      ok = ok && (verdict == "changed" || verdict == "unchanged");
      files.push_back({{"path", f}, {"verdict", verdict}});
    }
    std::string name = "step " + std::to_string(i + 1);
    auto check = c.check_status.find(name);
    std::string check_status = check == c.check_status.end() ? "" : check->second;
    ok = ok && (check_status.empty() || check_status == "passed");
    RecordGateEvent("batch_item", "",
                    Dump({{"step", i + 1},
                          {"text", step.text},
                          {"files", files},
                          {"check", step.check},
                          {"check_status", check_status},
                          {"verdict", ok ? "passed" : "failed"}}));
  }
}

void Agent::ReviewCompletion() {
  Current& c = *current_;
  bool qa = c.message.mode == Mode::kEdit && (c.workflow == Workflow::kQaProof || ReviewerOn(ReviewRole::kQa)) &&
            ledger_ != nullptr && !o_.subagent;
  if (!qa) return AcceptCompletion();
  Review(ReviewRole::kQa, "", [this](const ReviewOutcome& r) {
    Current& c = *current_;
    if (r.verdict == "VERIFIED") return AcceptCompletion();
    bool blocks = o_.profile == Profile::kStrict || c.workflow == Workflow::kQaProof;
    if (r.verdict == kCannotAssess && !blocks) return AcceptCompletion();  // a warning in the report
    std::string text =
        r.verdict == "ISSUES"
            ? "[runtime] Completion refused: the QA verifier found issues (judged against the user's request and the "
              "plan's acceptance criteria, with the ledger's evidence):\n" +
                  r.text + "Fix them, then finish again."
            : "[runtime] Completion refused: the QA verifier could not assess the change (" + r.problem +
                  "); finish again once the change and its evidence are complete.";
    RecordGateEvent("completion_refused", "", Dump({{"reason", "qa"}, {"verdict", r.verdict}}));
    // One fingerprint per verdict: findings worded anew each time still count
    // toward checks.retry_cap.
    Refuse({"qa_" + r.verdict, text});
  });
}

}  // namespace odin
