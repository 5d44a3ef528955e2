// Long file: every reviewer's place in the loop (when it runs, what its
// verdict holds or releases) reads best beside the one call path they share.
// The agent loop's side of the reviewers and workflows (planner/reviewers.h,
// planner/workflows.h): the hydrator's plan and routing when a message
// starts, the spec check and the critic before the first change, plan_update,
// the drift audit and the progress check between turns, the reflection at
// the end of a strict run, and /review. (The workflows' rules and the QA
// verifier at completion are in agent_completion.cc.) Each reviewer's call
// is a model call in the ledger and the budget, and its verdict a "review"
// gate event.

#include <algorithm>
#include <cctype>
#include <random>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/ids.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "ledger/review_evidence.h"
#include "odin/v1/worker.pb.h"
#include "planner/agent.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The drift auditor reads this many of the latest calls.
constexpr size_t kDriftCalls = 12;

bool IsWordChar(char ch) { return isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

// Whether `word` occurs in `text` as a whole word.
bool HasWord(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool before = at == 0 || !IsWordChar(text[at - 1]);
    bool after = at + word.size() >= text.size() || !IsWordChar(text[at + word.size()]);
    if (before && after) return true;
  }
  return false;
}

// tdd: whether a failing command names the test file `path` (relative): its
// path or file name in the command line or in the output, or its stem (at
// least 4 characters: "test_calc", not "a") as a word in the command line.
bool NamesTest(const std::string& command, const std::string& output, const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string stem = base.substr(0, base.find('.'));
  if (base.empty() || base[0] == '.') return false;  // a dotfile names no test
  if (command.find(path) != std::string::npos || HasWord(command, base) || HasWord(output, base)) return true;
  return stem.size() >= 4 && HasWord(command, stem);
}

}  // namespace

bool Agent::ReviewerOn(ReviewRole role) const {
  // Reviewers read the ledger: the main agent's loop only.
  if (o_.subagent || ledger_ == nullptr) return false;
  return odin::ReviewerOn(o_.reviews, o_.profile, role);
}

std::string Agent::ReviewEvidenceFor(ReviewRole role, const std::vector<std::string>& execution_ids,
                                     const std::string& extra_json, std::vector<std::string>* ids) {
  const Current& c = *current_;
  ReviewEvidenceInput in;
  in.session_id = host_->session_id();
  in.workspace = o_.workspace;
  // The user's words verbatim: the hydrator and the critic judge this
  // message; the others the whole request as the user made it.
  if (role == ReviewRole::kHydrator) {
    in.user_messages = {c.message.text};
  } else {
    in.user_messages = user_requests_;
  }
  if (c.plan) in.plan_json = PlanJson(*c.plan);
  in.execution_ids = execution_ids;
  in.extra_json = extra_json;
  StatusOr<ReviewEvidence> e = AssembleReviewEvidence(ledger_, in);
  if (!e.ok()) {
    spdlog::warn("review evidence: {}", e.status().message());
    return "";
  }
  *ids = e->ids;
  return e->json;
}

void Agent::Review(ReviewRole role, const std::string& detail_json, std::function<void(const ReviewOutcome&)> then,
                   const std::string& evidence_json) {
  Current& c = *current_;
  ReviewCall call;
  call.role = role;
  call.started = clock_->Now();
  call.started_wall = clock_->WallMillis();
  call.detail_json = detail_json;
  const std::string& model = o_.reviews.of(role).model;
  call.model = model.empty() ? UtilityModel() : model;
  std::vector<std::string> recent;
  json extra = json::object();
  extra["mode"] = ModeName(c.message.mode);
  if (c.workflow != Workflow::kNone) extra["workflow"] = WorkflowName(c.workflow);
  switch (role) {
    case ReviewRole::kHydrator:
      extra["workflows"] = WorkflowNames();
      if (o_.workflow != Workflow::kNone) extra["workflow_asked_by_user"] = WorkflowName(o_.workflow);
      break;
    case ReviewRole::kDrift:
    case ReviewRole::kProgress: {
      size_t n =
          role == ReviewRole::kDrift ? kDriftCalls : 2 * static_cast<size_t>(std::max(1, o_.reviews.progress_every));
      const std::vector<std::string>& ids = c.model_call_ids;
      recent.assign(ids.size() > n ? ids.end() - static_cast<std::ptrdiff_t>(n) : ids.begin(), ids.end());
      break;
    }
    case ReviewRole::kQa:
    case ReviewRole::kReflection:
      recent = c.outcome.execution_ids;
      extra["changed_files"] = c.outcome.changed_files;
      if (!c.outcome.text.empty()) extra["agent_final_answer_unverified"] = c.outcome.text.substr(0, 4000);
      break;
    case ReviewRole::kCritic:
    case ReviewRole::kSpec: break;
  }
  json detail = ParseJson(detail_json.empty() ? "{}" : detail_json);
  if (detail.is_object() && detail.contains("status")) extra["status"] = detail["status"];
  if (json evidence = ParseJson(evidence_json); evidence.is_object()) extra.update(evidence);
  call.evidence = ReviewEvidenceFor(role, recent, Dump(extra), &call.ids);
  uint64_t key = ++next_review_;
  reviews_[key] = {std::move(call), std::move(then)};
  AskReviewer(key, "");
}

void Agent::AskReviewer(uint64_t key, const std::string& problem) {
  ReviewCall& call = reviews_[key].first;
  ChatRequest req = ReviewRequest(call.role, call.model, o_.reviews.of(call.role).prompt, call.evidence, problem);
  req.max_tokens = o_.max_tokens;
  uint64_t generation = generation_;
  LlmClient::Callbacks cb;
  cb.on_done = [this, generation, key](const StatusOr<ChatResponse>& r) {
    if (generation == generation_ && current_ && reviews_.count(key)) OnReviewAnswer(key, r);
  };
  call.started = clock_->Now();
  call.started_wall = clock_->WallMillis();
  call.llm_call = llm_->Start(req, std::move(cb));
}

void Agent::OnReviewAnswer(uint64_t key, const StatusOr<ChatResponse>& response) {
  ReviewCall& call = reviews_[key].first;
  call.llm_call.reset();
  const std::string& model = call.model;
  LlmCallRecord rec = AccountModelCall(std::string("reviewer:") + ReviewRoleName(call.role), model, call.started,
                                       call.started_wall, response);
  call.llm_call_ids.push_back(rec.id);
  ReviewOutcome out;
  out.role = call.role;
  if (!response.ok()) {
    // The client retried per the retry policy already.
    out.verdict = kCannotAssess;
    out.problem = "the model call failed: " + response.status().ToString();
  } else {
    StatusOr<ReviewAnswer> answer = ParseReviewAnswer(call.role, response->text, call.ids);
    if (!answer.ok() && call.attempt == 1) {
      // Asked once more, told what was wrong.
      ++call.attempt;
      return AskReviewer(key, answer.status().message());
    }
    if (answer.ok()) {
      out.verdict = answer->verdict;
      out.text = answer->text;
      out.answer_json = answer->answer_json;
    } else {
      out.verdict = kCannotAssess;
      out.problem = "the answer did not match the schema twice: " + answer.status().message();
    }
  }
  json detail = ParseJson(call.detail_json.empty() ? "{}" : call.detail_json);
  if (!detail.is_object()) detail = json::object();
  detail["role"] = ReviewRoleName(call.role);
  detail["verdict"] = out.verdict;
  detail["attempts"] = call.attempt;
  detail["llm_calls"] = call.llm_call_ids;
  detail["model"] = model;
  if (!out.answer_json.empty()) detail["answer"] = ParseJson(out.answer_json);
  if (!out.problem.empty()) detail["problem"] = out.problem;
  if (!o_.reviews.of(call.role).prompt.empty()) detail["prompt"] = "config";
  RecordGateEvent("review", "", Dump(detail));
  std::function<void(const ReviewOutcome&)> then = std::move(reviews_[key].second);
  reviews_.erase(key);
  then(out);
}

void Agent::CancelReviews() {
  for (auto& [key, r] : reviews_) {
    if (r.first.llm_call) llm_->Cancel(*r.first.llm_call);
  }
  reviews_.clear();
}

void Agent::UpdateHold() {
  Current& c = *current_;
  MutationHold hold;
  if (!c.review_hold.empty()) {
    hold.rule = c.review_hold;
    hold.reason = c.review_hold_reason;
  } else if (c.workflow == Workflow::kTdd && c.tdd_failing_command.empty()) {
    hold.rule = "tdd";
    hold.reason =
        "until a test has been run and seen failing (a command that exits non-zero and names the test file or "
        "test), only test files may change.";
    hold.allowed = o_.reviews.test_patterns;
  } else if (c.workflow == Workflow::kMinorEdit && c.message.mode == Mode::kEdit) {
    hold.rule = "minor-edit";
    hold.reason = "this workflow changes at most " + std::to_string(kMinorEditMaxFiles) +
                  " files, and that many have changed; ask the user for a wider workflow.";
    hold.max_files = kMinorEditMaxFiles;
  }
  host_->SetMutationHold(o_.agent_id, std::move(hold));
}

void Agent::PrepareMessage() {
  Current& c = *current_;
  c.workflow = o_.workflow;
  // The spec check judges a plan: it needs the hydrator's.
  bool asked = o_.workflow != Workflow::kNone || o_.reviews.of(ReviewRole::kSpec).enabled.value_or(false);
  bool hydrate =
      (ReviewerOn(ReviewRole::kHydrator) || (asked && ledger_ != nullptr && !o_.subagent)) && !c.message.slash_command;
  if (ReviewerOn(ReviewRole::kDrift) && !drift_seed_recorded_) {
    drift_seed_recorded_ = true;
    drift_seed_ = o_.reviews.drift_seed ? *o_.reviews.drift_seed : std::random_device()();
    RecordGateEvent(
        "drift_seed", "",
        Dump(
            {{"seed", drift_seed_}, {"every", o_.reviews.drift_every}, {"probability", o_.reviews.drift_probability}}));
  }
  if (!hydrate) {
    if (c.message.slash_command) c.workflow = Workflow::kNone;  // /init is its own workflow
    if (c.workflow == Workflow::kQuestion) c.message.mode = c.outcome.mode = Mode::kAsk;
    UpdateHold();
    return AskModel();
  }
  Review(ReviewRole::kHydrator, "", [this](const ReviewOutcome& r) { OnHydrated(r); });
}

void Agent::OnHydrated(const ReviewOutcome& r) {
  Current& c = *current_;
  std::string note;
  if (r.verdict == "plan") {
    StatusOr<Plan> plan = ParsePlan(r.answer_json, nullptr);
    if (plan.ok()) c.plan = std::move(*plan);
  }
  std::string chosen_by = "user";
  if (c.plan) {
    if (o_.workflow != Workflow::kNone) {
      c.plan->workflow = o_.workflow;
    } else {
      c.workflow = c.plan->workflow;
      chosen_by = "hydrator";
    }
    RecordGateEvent("plan", "", Dump({{"revision", 0}, {"plan", ParseJson(PlanJson(*c.plan))}}));
    // The todo list starts as the plan's steps.
    json todos = json::array();
    for (size_t i = 0; i < c.plan->steps.size(); ++i) {
      todos.push_back(
          {{"id", "step-" + std::to_string(i + 1)}, {"content", c.plan->steps[i].text}, {"status", "pending"}});
    }
    ToolCall call;
    call.execution_id = NewId("ex");
    call.tool = kTodoWriteTool;
    call.arguments_json = Dump({{"todos", todos}});
    call.agent_id = o_.agent_id;
    call.message_id = c.message.id;
    call.mode = CallModeOf(c.message.mode);
    call.internal = true;
    host_->Submit(std::move(call), CallHandlers());
    if (!current_) return;
  } else if (o_.profile == Profile::kStrict) {
    c.review_hold = "plan";
    c.review_hold_reason =
        "the hydrator could not write a plan (" + r.problem +
        "); write one with plan_update (intent, acceptance_criteria, steps) before changing anything.";
  }
  // Routing never raises the mode; question lowers it to ask.
  Mode before = c.message.mode;
  if (c.workflow == Workflow::kQuestion) c.message.mode = c.outcome.mode = Mode::kAsk;
  if (c.workflow != Workflow::kNone) {
    RecordGateEvent("workflow", "",
                    Dump({{"workflow", WorkflowName(c.workflow)},
                          {"chosen_by", chosen_by},
                          {"mode", ModeName(c.message.mode)},
                          {"mode_before", ModeName(before)}}));
  }
  if (c.plan) note += "[runtime] Odin's plan for this message (revise it with plan_update):\n" + RenderPlan(*c.plan);
  if (c.workflow != Workflow::kNone) {
    note += "Workflow " + std::string(WorkflowName(c.workflow)) + ": " + WorkflowRules(c.workflow) + "\n";
  }
  if (!c.review_hold.empty()) note += "[runtime] " + c.review_hold_reason + "\n";
  if (!note.empty() && !history_.empty() && history_.back().role == ChatMessage::Role::kUser) {
    history_.back().text += "\n\n" + note;
  }
  if (!c.plan) {
    UpdateHold();
    return AskModel();
  }
  JudgePlan([this](const std::string& text) {
    Current& c = *current_;
    if (!text.empty()) c.nudge += (c.nudge.empty() ? "" : "\n") + text;
    AskModel();
  });
}

// The spec check, then the critic, on the current plan; `then` hears what the
// planner must read ("" for nothing), unless the message ends (HALT).
void Agent::JudgePlan(std::function<void(const std::string& text)> then) {
  auto critic = [this, then](const std::string& before) {
    Current& c = *current_;
    if (!ReviewerOn(ReviewRole::kCritic) || c.message.mode != Mode::kEdit) {
      if (c.review_hold != "spec") c.review_hold.clear();
      UpdateHold();
      return then(before);
    }
    Review(ReviewRole::kCritic, Dump({{"revision", c.plan->revision}}), [this, then, before](const ReviewOutcome& r) {
      Current& c = *current_;
      std::string text = before;
      auto add = [&text](const std::string& t) { text += (text.empty() ? "" : "\n") + t; };
      if (r.verdict == "HALT") {
        return Halt("Halted by the plan critic:\n" + r.text,
                    Status::FailedPrecondition("halted", "the plan critic halted the run: " + r.text), then);
      }
      if (r.verdict == "PROCEED") {
        if (c.review_hold == "critic" || c.review_hold == "plan" || c.review_hold == "drift") c.review_hold.clear();
        add("[runtime] The plan critic: PROCEED.");
      } else if (r.verdict == "REVISE") {
        if (++c.critic_rounds > o_.reviews.critic_max_rounds) {
          return Halt("Halted: the plan critic sent the plan back " + std::to_string(c.critic_rounds) +
                          " times (reviewers.critic.max_rounds is " + std::to_string(o_.reviews.critic_max_rounds) +
                          "). Its last reasons:\n" + r.text,
                      Status::FailedPrecondition(
                          "halted", "the plan critic sent the plan back " + std::to_string(c.critic_rounds) + " times"),
                      then);
        }
        c.review_hold = "critic";
        c.review_hold_reason =
            "the plan critic sent the plan back (REVISE); revise it with plan_update before changing "
            "anything.";
        add("[runtime] The plan critic: REVISE. Revise the plan with plan_update before changing anything. Reasons:\n" +
            r.text);
      } else {  // cannot_assess
        if (o_.profile == Profile::kStrict) {
          c.review_hold = "critic";
          c.review_hold_reason = "the plan critic could not assess the plan (" + r.problem +
                                 "); revise it with plan_update so it can be judged again.";
          add("[runtime] " + c.review_hold_reason);
        } else {
          if (c.review_hold == "critic" || c.review_hold == "plan" || c.review_hold == "drift") c.review_hold.clear();
          add("[runtime] Warning: the plan critic could not assess the plan (" + r.problem + ").");
        }
      }
      UpdateHold();
      then(text);
    });
  };
  Current& c = *current_;
  if (!o_.reviews.of(ReviewRole::kSpec).enabled.value_or(false) || ledger_ == nullptr || o_.subagent) return critic("");
  Review(ReviewRole::kSpec, Dump({{"revision", c.plan->revision}}), [this, critic, then](const ReviewOutcome& r) {
    Current& c = *current_;
    if (r.verdict == "VAGUE") {
      c.review_hold = "spec";
      c.review_hold_reason =
          "the plan is too vague to verify; make its acceptance criteria checkable with plan_update "
          "before changing anything.";
      UpdateHold();
      return then(
          "[runtime] The spec check: the plan is too vague to verify. Answer these in a revised plan "
          "(plan_update) before changing anything:\n" +
          r.text);
    }
    if (c.review_hold == "spec") c.review_hold.clear();
    critic(r.verdict == kCannotAssess
               ? "[runtime] Warning: the spec check could not assess the plan (" + r.problem + ")."
               : "");
  });
}

void Agent::EndPlanUpdate(size_t index, const std::string& execution_id, bool ok, const std::string& fields_json) {
  json record = {{"execution_id", execution_id},
                 {"tool", kPlanUpdateTool},
                 {"status", ok ? "ok" : "error"},
                 {"authority", "ground_truth"}};
  if (json fields = ParseJson(fields_json); fields.is_object()) record.update(fields);
  v1::ToolResult r;
  r.set_execution_id(execution_id);
  r.set_status(ok ? v1::TOOL_STATUS_OK : v1::TOOL_STATUS_ERROR);
  std::string rendered = Dump(record);
  OnToolDone(index, execution_id, kPlanUpdateTool, r, &rendered);
}

bool Agent::StartPlanReview(size_t index, const std::string& execution_id, const v1::ToolResult& result) {
  Current& c = *current_;
  if (result.status() != v1::TOOL_STATUS_OK) return false;
  const std::string& args = c.calls[index].arguments_json;
  Plan base = c.plan.value_or(Plan());
  StatusOr<Plan> plan = ParsePlan(args, &base);
  if (!plan.ok() || plan->intent.empty() || plan->criteria.empty() || plan->steps.empty()) {
    std::string why = !plan.ok() ? plan.status().message()
                                 : "there is no plan to revise yet: give intent, acceptance_criteria and steps";
    EndPlanUpdate(index, execution_id, false, Dump({{"summary", "plan not revised: " + why}}));
    return true;
  }
  json a = ParseJson(args);
  std::string reason =
      a.is_object() && a.contains("reason") && a["reason"].is_string() ? a["reason"].get<std::string>() : "";
  plan->workflow = c.workflow;
  plan->revision = base.revision + 1;
  c.plan = std::move(*plan);
  RecordGateEvent("plan", execution_id,
                  Dump({{"revision", c.plan->revision}, {"reason", reason}, {"plan", ParseJson(PlanJson(*c.plan))}}));
  c.plan_updates[execution_id] = index;
  JudgePlan([this, execution_id](const std::string& text) {
    Current& c = *current_;
    auto it = c.plan_updates.find(execution_id);
    if (it == c.plan_updates.end()) return;
    size_t index = it->second;
    c.plan_updates.erase(it);
    EndPlanUpdate(index, execution_id, true,
                  Dump({{"summary", "plan revision " + std::to_string(c.plan->revision) + " recorded"},
                        {"reviewers", text.empty() ? "no reviewer judged it" : text},
                        {"mutations_held", c.review_hold.empty() ? json(false) : json(c.review_hold_reason)}}));
  });
  return true;
}

void Agent::NoteForReviews(const std::string& execution_id, const std::string& tool, const ToolCallRequest& call,
                           const v1::ToolResult& r, bool changed) {
  Current& c = *current_;
  if (c.message.mode != Mode::kEdit) return;
  // tdd: a command that exits non-zero and names a test file or test.
  if (c.workflow == Workflow::kTdd && c.tdd_failing_command.empty() && HandlerOf(tool) == ToolHandler::kCommand &&
      r.has_exit_code() && r.exit_code() != 0) {
    json a = ParseJson(call.arguments_json);
    std::string command =
        a.is_object() && a.contains("command") && a["command"].is_string() ? a["command"].get<std::string>() : "";
    std::string output = r.output_head() + r.output_tail();
    const std::vector<std::string>& patterns = o_.reviews.test_patterns;
    std::string named;
    for (const std::string& f : c.outcome.changed_files) {
      if (IsTestPath(f, patterns) && NamesTest(command, output, f)) {
        named = f;
        break;
      }
    }
    if (!named.empty()) {
      c.tdd_failing_command = command;
      c.tdd_failing_id = execution_id;
      RecordGateEvent("tdd", execution_id,
                      Dump({{"event", "failing_test_seen"},
                            {"test_file", named},
                            {"command", command},
                            {"exit_code", r.exit_code()}}));
      UpdateHold();
    }
  }
  if (changed) {
    ++mutating_calls_;
    if (ReviewerOn(ReviewRole::kDrift) &&
        DriftAuditDue(drift_seed_, mutating_calls_, o_.reviews.drift_every, o_.reviews.drift_probability)) {
      c.drift_due = true;
      RecordGateEvent("drift_audit_point", execution_id,
                      Dump({{"mutating_call", mutating_calls_}, {"seed", drift_seed_}}));
    }
  }
}

void Agent::ReviewTurn(std::function<void()> then) {
  Current& c = *current_;
  if (c.drift_due) {
    c.drift_due = false;
    return Review(ReviewRole::kDrift, Dump({{"mutating_call", mutating_calls_}}), [this, then](const ReviewOutcome& r) {
      Current& c = *current_;
      if (r.verdict == "WARN") {
        c.nudge += (c.nudge.empty() ? "" : "\n") + std::string("[runtime] Drift audit: WARN. ") + r.text;
      } else if (r.verdict == "BLOCK" || (r.verdict == kCannotAssess && o_.profile == Profile::kStrict)) {
        c.review_hold = "drift";
        c.review_hold_reason = r.verdict == "BLOCK"
                                   ? "the drift audit found the work leaving the plan (BLOCK); no change is allowed "
                                     "until you revise the plan with plan_update (or the user clears it)."
                                   : "the drift audit could not assess the work (" + r.problem +
                                         "); revise or confirm the plan with plan_update before the next change.";
        c.nudge += (c.nudge.empty() ? "" : "\n") + ("[runtime] " + c.review_hold_reason + "\n" + r.text);
        UpdateHold();
      } else if (r.verdict == kCannotAssess) {
        c.nudge += (c.nudge.empty() ? "" : "\n") +
                   ("[runtime] Warning: the drift audit could not assess (" + r.problem + ").");
      }
      ReviewTurn(then);
    });
  }
  int every = o_.reviews.progress_every;
  if (o_.reviews.of(ReviewRole::kProgress).enabled.value_or(false) && !o_.subagent && ledger_ != nullptr && every > 0 &&
      c.outcome.turns > 0 && c.outcome.turns % every == 0 && c.progress_turn != c.outcome.turns) {
    c.progress_turn = c.outcome.turns;
    return Review(ReviewRole::kProgress, Dump({{"turn", c.outcome.turns}}), [this, then](const ReviewOutcome& r) {
      if (r.verdict == "NO_PROGRESS") {
        // Seed 002: a stall nudge (recorded as the stall detector's are).
        Current& c = *current_;
        RecordGateEvent("stall", "",
                        Dump({{"rule", "no_progress"},
                              {"action", "nudge"},
                              {"count", c.outcome.turns},
                              {"description", "the progress check: " + r.text}}));
        c.nudge += (c.nudge.empty() ? "" : "\n") +
                   ("[runtime] The progress check judged that the work is not progressing: " + r.text +
                    " Change your approach: look at what the results say, use memory_query for the facts, or "
                    "revise the plan with plan_update.");
      }
      then();
    });
  }
  then();
}

void Agent::Halt(const std::string& text, Status error, const std::function<void(const std::string&)>& then) {
  Current& c = *current_;
  c.outcome.text = text;
  RecordGateEvent("halted", "", Dump({{"reason", error.message()}}));
  if (c.plan_updates.empty()) return StopSoon("halted", error, v1::CANCEL_REASON_USER);
  // From a plan_update: the other calls stop, and its result closes the turn.
  c.stopping = "halted";
  c.stop_error = error;
  std::vector<std::string> others;
  for (const auto& [id, index] : c.running) {
    if (c.plan_updates.count(id) == 0) others.push_back(id);
  }
  for (const std::string& id : others) host_->Cancel(id, v1::CANCEL_REASON_USER);
  if (current_) then("[runtime] " + text);
}

void Agent::AbandonPlanReviews(const std::string& why) {
  Current& c = *current_;
  if (c.plan_updates.empty()) return;
  CancelReviews();
  std::map<std::string, size_t> pending = std::move(c.plan_updates);
  c.plan_updates.clear();
  uint64_t generation = generation_;
  for (const auto& [id, index] : pending) {
    if (generation != generation_ || !current_) return;
    EndPlanUpdate(index, id, true, Dump({{"summary", "plan revision recorded; not judged: " + why}}));
  }
}

void Agent::Reflect(const std::string& status, Status error) {
  Review(ReviewRole::kReflection, Dump({{"status", status}}), [this, status, error](const ReviewOutcome& r) {
    if (r.verdict == "recorded") {
      RecordGateEvent("reflection", "",
                      Dump({{"status", status}, {"text", r.text}, {"answer", ParseJson(r.answer_json)}}));
    }
    current_->finishing.reset();
    Finish(status, error);
  });
}

void Agent::StartChangeReview() {
  Current& c = *current_;
  if (ledger_ == nullptr || o_.subagent)
    return Finish("error", Status::FailedPrecondition("review", "needs the ledger"));
  // git reads the repository in a read-only sandboxed worker, through the
  // command rules like any ask-mode command: what a cloned repository's
  // config names (diff drivers, fsmonitor) runs nowhere but in that sandbox.
  ToolCall call;
  call.execution_id = NewId("ex");
  call.tool = kExecuteCommandTool;
  call.arguments_json = Dump({{"command",
                               "git --no-pager status --short 2>&1 | head -c 20000; echo; "
                               "git --no-pager diff --no-ext-diff --no-textconv HEAD 2>&1 | head -c 120000"},
                              {"timeout_seconds", 60}});
  call.agent_id = o_.agent_id;
  call.message_id = c.message.id;
  call.mode = CallMode::kAsk;
  call.timeout = seconds(60);
  call.internal = true;
  c.outcome.execution_ids.push_back(call.execution_id);
  c.check_running = call.execution_id;  // a cancel stops it
  if (observer_) observer_->OnToolStart(call.execution_id, {call.execution_id, call.tool, call.arguments_json});
  uint64_t generation = generation_;
  CallHandlers handlers;
  handlers.on_done = [this, generation, id = call.execution_id](const v1::ToolResult& r, const Status&) {
    if (generation != generation_ || !current_) return;
    if (observer_) observer_->OnToolEnd(id, kExecuteCommandTool, r);
    Current& c = *current_;
    c.check_running.clear();
    if (c.cancelled) return Finish("cancelled");
    if (r.status() != v1::TOOL_STATUS_OK) {
      return Finish("error", Status::Unavailable("review", "git diff did not run: " + r.error().message()));
    }
    // Nothing changed, or no repository: said without asking any model.
    if (r.output_head().find("fatal: not a git repository") != std::string::npos) {
      return Finish("error", Status::FailedPrecondition("review",
                                                        "not a git repository: there is no committed state "
                                                        "to compare the change with"));
    }
    if (r.output_total_bytes() == r.output_head().size() &&
        r.output_head().find_first_not_of(" \n") == std::string::npos) {
      c.outcome.text = "Nothing to review: the working tree has no uncommitted change.";
      return Finish("done");
    }
    // The whole diff, not only the output tail the calls' evidence keeps.
    std::string diff = r.output_head();
    if (r.output_total_bytes() > r.output_head().size() + r.output_tail().size()) diff += "\n[... cut ...]\n";
    if (r.output_total_bytes() > r.output_head().size()) diff += r.output_tail();
    Review(
        ReviewRole::kQa, Dump({{"review_of", "the uncommitted change"}}),
        [this](const ReviewOutcome& v) {
          Current& c = *current_;
          c.outcome.text = "QA verifier: " + v.verdict + (v.text.empty() ? "" : "\n" + v.text) +
                           (v.problem.empty() ? "" : "\n(" + v.problem + ")");
          Finish("done");
        },
        Dump({{"review_of", "the uncommitted change (git status, then git diff HEAD)"}, {"diff", diff}}));
  };
  host_->Submit(std::move(call), std::move(handlers));
}

std::string Agent::ClearReviewHold() {
  if (!current_ || current_->review_hold.empty()) return "";
  Current& c = *current_;
  std::string rule = c.review_hold;
  c.review_hold.clear();
  RecordGateEvent("hold_cleared", "", Dump({{"rule", rule}, {"by", "user"}}));
  c.nudge += (c.nudge.empty() ? "" : "\n") + ("[runtime] The user cleared the " + rule + " hold: changes may go on.");
  UpdateHold();
  return rule;
}

}  // namespace odin
