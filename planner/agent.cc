// Long file: the agent loop itself (the message queue, the system prompt,
// requests, tool dispatch and results, cancellation); its other sides are
// in agent_completion.cc, agent_compaction.cc, agent_hooks.cc and agent_web.cc.
#include "planner/agent.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/canonical_json.h"
#include "base/ids.h"
#include "base/sha256.h"
#include "ledger/report.h"
#include "planner/run_outcome.h"
#include "planner/tool_specs.h"
#include "odin/v1/worker.pb.h"
#include "tools/edit_apply.h"
#include "tools/text_file.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"
#include "tools/tool_result.h"

namespace odin {

using nlohmann::json;

Agent::Agent(AgentOptions options, ToolHost* host, LlmClient* llm, Ledger* ledger, Clock* clock,
             AgentObserver* observer)
    : o_(std::move(options)),
      host_(host),
      llm_(llm),
      ledger_(ledger),
      clock_(clock),
      observer_(observer),
      stall_(o_.stall) {
  totals_.status = "session";
  if (o_.reviews.test_patterns.empty()) o_.reviews.test_patterns = DefaultTestPatterns();
  context_.window = o_.context_window > 0 ? o_.context_window : DefaultContextWindow(o_.model);
  // The front end compiled it already, and refused it with a usage error.
  if (!o_.answer_schema.empty()) {
    if (StatusOr<JsonSchema> schema = JsonSchema::Compile(o_.answer_schema); schema.ok()) answer_schema_ = *schema;
  }
}

std::string Agent::SystemPrompt(Mode mode) {
  std::string p;
  if (!o_.agent_type.empty()) {
    p = "You are the " + o_.agent_type + " agent. Your definition, which you follow:\n" + o_.agent_prompt +
        "\n\nYou run inside Odin, a coding agent runtime.\n";
  }
  p += "You are Odin, a coding agent working in the repository at " + o_.workspace +
       ". You act only through tools. Every tool result is a ground-truth record from the runtime "
       "(\"authority\": \"ground_truth\"): trust it over your own expectations, and never claim a change or a "
       "test result that no tool result shows.\n\n"
       "How to work:\n"
       "- Paths may be relative to the workspace root.\n"
       "- Read a file before you edit it. An edit of a file you have not read, or of lines you have not read, or "
       "of a file that changed since you read it, is rejected; the rejection says what to read.\n"
       "- Use EditTool for a change, MultiEditTool for several changes to one file, WriteFile to create a file.\n"
       "- Tool calls you make in one response run in parallel; make independent calls together.\n"
       "- When you are done, answer without calling a tool.\n\n";
  switch (mode) {
    case Mode::kAsk:
      p += "Mode: ask. Answer the user's question by reading and searching the code; cite files and lines. "
           "You cannot change files in this mode: the workspace is read-only to you.\n";
      break;
    case Mode::kPlan:
      p += "Mode: plan. Study the code and produce a concrete plan for the requested change: the files, the "
           "edits, how to verify them. Do not change files: the workspace is read-only in this mode. End with "
           "the plan.\n";
      break;
    case Mode::kEdit:
      p += "Mode: edit. Make the requested change. Keep it minimal, run the relevant build or tests with "
           "ExecuteCommand when the project has them, and end with a short summary of what changed and how it "
           "was verified.\n"
           "Every edit is validated (language server or compiler) and its result carries the verdict. While an "
           "edit has left new errors, only reads, memory_query, lsp_check and corrective edits are allowed, and "
           "finishing is refused. After a failed validation, use memory_query to retrieve the facts (last_edit, "
           "last_validation, failed_attempts) and fix exactly what they say. When you finish, the project's checks "
           "(tests, lint, build) run; if one fails you get its output and continue.\n";
      break;
  }
  if (o_.cwd != o_.workspace) p += "\nThe user is in " + DisplayPath(o_.cwd, o_.workspace) + ".\n";
  if (!o_.instructions.empty()) p += "\nProject instructions:\n" + o_.instructions;
  if (o_.repo_map_tokens > 0) {
    // It changes only when the files it comes from do (prompt caching).
    std::string map = host_->RepoMap(o_.repo_map_tokens);
    if (!map.empty()) {
      p += "\nRepository map (the symbols other files use most, from Odin's symbol index; symbols, references, "
           "impact and outline tell you more):\n" +
           map;
    }
  }
  if (!o_.defs.skills.empty()) {
    p += "\nSkills (load one with the Skill tool when the task matches its description):\n";
    for (const ClaudeDef& d : o_.defs.skills) {
      p += "- " + d.name + (d.description.empty() ? "" : ": " + d.description) + "\n";
    }
  }
  if (o_.subagent) {
    p += "\nYou are a subagent: another agent gave you this task. Your final answer (without a tool call) goes "
         "back to it, together with the ledger's record of what you did; make it complete and self-contained.\n";
  }
  return p;
}

std::string Agent::TurnFacts() {
  std::string facts = PlannerContext(host_, o_.agent_id, o_.workspace, current_ ? current_->budget.get() : nullptr);
  if (answer_schema_) {
    // The same header as PlannerContext's: one shape of tail for every turn.
    std::string answer =
        "\nThe user requires your final answer (the text you end with, after any tool calls) to be only a JSON "
        "value valid against this JSON Schema, with no prose around it and no code fence:\n" +
        answer_schema_->text() + "\n";
    facts = facts.empty() ? "[runtime] This turn's state, from Odin:" + answer : facts + answer;
  }
  return facts;
}

std::string Agent::Send(const std::string& text_in, Mode mode, bool slash_command,
                        std::optional<std::vector<std::string>> tool_list, std::vector<ImageData> images) {
  if (std::string news = host_->TakeMcpNews(o_.agent_id); !news.empty()) AddNote(news);
  std::string text = notes_.empty() ? text_in : "[runtime] " + notes_ + "\n\n" + text_in;
  notes_.clear();
  user_requests_.push_back(text_in);
  Pending m{NewId("msg"), text, mode, false, slash_command, std::move(tool_list), std::move(images)};
  QueueEntry("request", nlohmann::json({{"text", text_in}, {"message_id", m.id}})
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (ledger_ != nullptr) {
    NoteLedgerWrite(ledger_->AddMessage(
        {m.id, host_->session_id(), o_.agent_id, "user", ModeName(mode), text, "queued", clock_->WallMillis()}));
  }
  queue_.push_back(m);
  if (!current_) StartNext();
  return m.id;
}

std::string Agent::SendReview() {
  Pending m{NewId("msg"), "/review: the QA verifier on the uncommitted change", Mode::kAsk, true};
  if (ledger_ != nullptr) {
    NoteLedgerWrite(ledger_->AddMessage(
        {m.id, host_->session_id(), o_.agent_id, "user", ModeName(m.mode), m.text, "queued", clock_->WallMillis()}));
  }
  queue_.push_back(m);
  if (!current_) StartNext();
  return m.id;
}

void Agent::AddInheritedChanges(const std::string& execution_id, const CallChanges& changes) {
  inherited_calls_.push_back(execution_id);
  for (const std::string& f : changes.changed) {
    if (std::find(inherited_.changed.begin(), inherited_.changed.end(), f) == inherited_.changed.end()) {
      inherited_.changed.push_back(f);
    }
  }
  inherited_.not_validated.insert(inherited_.not_validated.end(), changes.not_validated.begin(),
                                  changes.not_validated.end());
}

void Agent::StartNext() {
  if (current_ || queue_.empty() || compaction_ || starting_) return;
  current_.emplace();
  current_->message = std::move(queue_.front());
  queue_.pop_front();
  current_->outcome.message_id = current_->message.id;
  current_->outcome.mode = current_->message.mode;
  current_->outcome.changed_files = std::move(inherited_.changed);
  current_->outcome.not_validated = std::move(inherited_.not_validated);
  current_->inherited_call_ids = std::move(inherited_calls_);
  inherited_ = {};
  inherited_calls_.clear();
  current_->started = clock_->Now();
  current_->started_wall_ms = clock_->WallMillis();
  current_->budget = std::make_unique<Budget>(o_.budget, clock_);
  current_->refusals = RefusalCounter(o_.checks.retry_cap);
  stall_.Reset();
  // Where the message's turns begin in the ledger's record: what a rewind
  // to before it takes away.
  PersistHistory("message_start", json({{"message_id", current_->message.id}}).dump());
  if (observer_) observer_->OnMessageStart(current_->message.id, current_->message.text, current_->message.mode);
  if (current_->message.review) return StartChangeReview();
  if (!host_->HasHooks(HookEvent::kUserPromptSubmit)) return BeginMessage("");
  RunPromptHooks();
}

void Agent::AskModel() {
  Current& c = *current_;
  if (!c.budget->TryStartTurn()) return StopForBudget(c.budget->Exceeded().value_or("turns"));
  ++c.outcome.turns;
  if (!c.nudge.empty()) {
    history_.push_back({ChatMessage::Role::kUser, c.nudge, {}, {}});
    c.nudge.clear();
  }
  SendRequest();
}

ChatRequest Agent::BuildRequest() {
  ChatRequest req;
  req.model = o_.model;
  req.system = SystemPrompt(current_->message.mode);
  req.messages = history_;
  req.tail = TurnFacts();
  req.cache_key = host_->session_id() + "/" + o_.agent_id;
  req.tools = ToolSpecsForMode(current_->message.mode, o_.subagent);
  if (o_.commands_network && current_->message.mode == Mode::kEdit) NoteCommandsHaveNetwork(&req.tools);
  if (o_.profile == Profile::kStrict) AddEvidenceArgument(&req.tools);
  if (current_->plan || !current_->review_hold.empty()) req.tools.push_back(PlanUpdateSpec());
  // MCP servers' tools, as far as their servers have started.
  for (ToolSpec& extra : host_->ExtraToolSpecs(current_->message.mode)) req.tools.push_back(std::move(extra));
  ApplyClaudeDefs(&req.tools, o_.defs);
  if (current_->message.tool_list) host_->NarrowToolSpecs(*current_->message.tool_list, &req.tools);
  req.max_tokens = o_.max_tokens;
  req.temperature = o_.temperature;
  return req;
}

void Agent::SendRequest() {
  Current& c = *current_;
  ChatRequest req = BuildRequest();
  int64_t bytes = RequestBytes(req);
  context_.next_estimate = estimator_.Tokens(bytes);
  // Past the threshold, or asked for by the model: compact, then send what
  // is left (once per request; what still does not fit goes as it is).
  bool over = static_cast<double>(context_.next_estimate) > o_.compact_at * static_cast<double>(context_.window);
  if (!c.compacted && (over || c.compact_focus)) {
    c.compacted = true;
    std::string focus = c.compact_focus.value_or("");
    c.compact_focus.reset();
    return StartCompaction(over ? "threshold" : "tool", focus, context_.next_estimate, [this] { SendRequest(); });
  }
  c.request_bytes = bytes;
  c.llm_started = clock_->Now();
  c.llm_started_wall = clock_->WallMillis();
  uint64_t generation = generation_;
  LlmClient::Callbacks cb;
  cb.on_text = [this, generation](const std::string& delta) {
    if (generation == generation_ && observer_) observer_->OnTextDelta(delta);
  };
  cb.on_retry = [this, generation](const LlmRetry& retry) {
    if (generation == generation_ && observer_) observer_->OnLlmRetry(retry);
  };
  cb.on_done = [this, generation](const StatusOr<ChatResponse>& r) {
    if (generation == generation_ && current_) OnModel(r);
  };
  c.llm_call = llm_->Start(req, std::move(cb));
  host_->ModelRequestStarted(c.message.mode);
  // What the model now sees goes to the ledger once the request is on its
  // way (the next Tick), not before.
  persist_due_ = true;
}

void Agent::OnModel(const StatusOr<ChatResponse>& response) {
  Current& c = *current_;
  c.llm_call.reset();
  LlmCallRecord rec = AccountModelCall("planner", o_.model, c.llm_started, c.llm_started_wall, response);
  if (!response.ok() && IsContextOverflow(response.status())) return CompactAfterOverflow(response.status());
  if (!response.ok()) return Finish("error", response.status());
  estimator_.Calibrate(c.request_bytes, rec.input_tokens);
  if (rec.input_tokens > 0) context_.last_input = rec.input_tokens;
  c.compacted = false;
  c.overflow_level = 0;

  const ChatResponse& r = *response;
  // Every call gets an id the next request can answer to.
  std::vector<ToolCallRequest> calls = r.tool_calls;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].id.empty()) calls[i].id = "call_" + std::to_string(c.outcome.turns) + "_" + std::to_string(i);
  }
  // An empty reply (no text, no calls) is not kept: the APIs refuse empty
  // assistant turns, and one would poison every later request.
  if (!r.text.empty() || !calls.empty()) {
    history_.push_back({ChatMessage::Role::kAssistant, r.text, calls, {}, r.reasoning});
  }
  c.outcome.text = r.text;
  std::optional<std::string> limit = c.budget->Exceeded();
  if (limit && !calls.empty()) {
    // Tokens, cost or time ran out with this response: none of its calls
    // runs. (A final answer that crossed the limit still counts as one.)
    ChatMessage results{ChatMessage::Role::kToolResults, "", {}, {}};
    for (const ToolCallRequest& call : calls) {
      json record = {{"tool", call.name},
                     {"status", "error"},
                     {"authority", "ground_truth"},
                     {"summary", "not run: the budget ran out"}};
      results.results.push_back({call.id, record.dump(), true});
    }
    history_.push_back(std::move(results));
    return StopForBudget(*limit);
  }
  if (calls.empty()) {
    if (std::optional<StallDetection> d = stall_.AddMessage(r.text, clock_->Now()); d && HandleStall(*d)) return;
    if (r.truncated) {
      // Cut off mid-answer: tell the model, and let it go on.
      history_.push_back({ChatMessage::Role::kUser,
                          "[runtime] Your previous response was cut off before it ended. Continue.",
                          {},
                          {}});
      return AskModel();
    }
    return ClaimCompletion();
  }
  RunTools(calls, r.truncated);
}

void Agent::RunTools(const std::vector<ToolCallRequest>& calls, bool truncated) {
  Current& c = *current_;
  if (!o_.transcript_path.empty()) PersistHistory();  // hooks read the calls in the transcript
  c.calls = calls;
  c.results.assign(calls.size(), std::nullopt);
  c.steps.assign(calls.size(), std::nullopt);
  c.running.clear();
  // The workspace as the turn finds it, for the stall detector.
  c.workspace_before = WorkspaceNow(c.message.mode);
  if (truncated) {
    // The response was cut off: its tool calls may be incomplete. None runs.
    for (size_t i = 0; i < calls.size(); ++i) {
      json record = {{"tool", calls[i].name},
                     {"status", "error"},
                     {"authority", "ground_truth"},
                     {"summary",
                      "your response was cut off mid-stream, so this call was not run; make it again if "
                      "it is still needed"}};
      c.results[i] = ToolResultMessage{calls[i].id, record.dump(), true};
    }
    return AllToolsDone();
  }
  const uint64_t generation = generation_;
  for (size_t i = 0; i < calls.size(); ++i) {
    ToolCall call;
    call.tool = calls[i].name;
    call.arguments_json = calls[i].arguments_json;
    call.agent_id = o_.agent_id;
    call.message_id = c.message.id;
    call.mode = CallModeOf(c.message.mode);
    if (c.message.tool_list) call.tool_lists.push_back(*c.message.tool_list);
    call.budget = c.budget.get();
    // A subagent may change anything; a command's change set comes back with
    // its result, unless the host could not track it (OnToolDone).
    call.timeout = ToolTimeout(o_.tool_timeouts, call.tool, call.arguments_json);
    call.execution_id = NewId("ex");
    std::string id = call.execution_id;
    std::string tool = call.tool;
    c.running[id] = i;
    c.outcome.execution_ids.push_back(id);
    c.model_call_ids.push_back(id);
    if (observer_) observer_->OnToolStart(id, calls[i]);
    CallHandlers handlers;
    handlers.on_progress = [this, generation](const v1::ToolProgress& p) {
      if (generation == generation_ && observer_) observer_->OnToolProgress(p);
    };
    handlers.on_done = [this, generation, i, id, tool](const v1::ToolResult& r, const Status&) {
      if (generation == generation_ && current_) OnToolDone(i, id, tool, r);
    };
    host_->Submit(std::move(call), std::move(handlers));
  }
  // The calls, written while they run: a crash leaves them interrupted.
  PersistHistory();
  // The last call's end may have finished the message already.
  if (generation != generation_ || !current_) return;
  // Every call may have ended at once (refused by a gate, run in the
  // coordinator); then the turn is complete already.
  if (c.running.empty() && !c.results.empty()) {
    bool all = true;
    for (const auto& r : c.results) all = all && r.has_value();
    if (all) return AllToolsDone();
  }
  // A call refused for the tool-call budget: the ones still running stop too.
  if (std::optional<std::string> limit = c.budget->Exceeded()) StopForBudget(*limit);
}

void Agent::OnToolDone(size_t index, const std::string& execution_id, const std::string& tool, const v1::ToolResult& r,
                       const std::string* record) {
  Current& c = *current_;
  if (c.running.count(execution_id) == 0) return;
  const ToolHandler handler = HandlerOf(tool);
  if (record == nullptr && handler == ToolHandler::kWebFetch && !c.cancelled && c.stopping.empty() &&
      StartWebAnswer(index, execution_id, r)) {
    return;
  }
  if (record == nullptr && handler == ToolHandler::kPlanUpdate && !c.cancelled && c.stopping.empty() &&
      StartPlanReview(index, execution_id, r)) {
    return;
  }
  c.running.erase(execution_id);
  c.results[index] = ToolResultMessage{
      c.calls[index].id, record != nullptr ? *record : GroundTruthRecord(execution_id, tool, r, o_.workspace),
      r.status() != v1::TOOL_STATUS_OK};
  if (handler == ToolHandler::kFileRead && r.status() == v1::TOOL_STATUS_OK && record == nullptr) {
    AttachReadImage(index, r);
  }
  if (o_.nested_instructions && r.status() == v1::TOOL_STATUS_OK &&
      (handler == ToolHandler::kFileRead || IsWriteTool(tool))) {
    AddNestedInstructions(tool, c.calls[index].arguments_json, &*c.results[index]);
  }
  AddMcpNews(&*c.results[index]);
  c.steps[index] = StallStepOf(c.calls[index], execution_id, r);
  c.steps[index]->at = clock_->Now();
  if (handler == ToolHandler::kContextSummarizer && r.status() == v1::TOOL_STATUS_OK) {
    StatusOr<std::string> focus = ParseContextSummarizerArgs(c.calls[index].arguments_json);
    c.compact_focus = focus.ok() ? *focus : "";
  }
  CallChanges changes = ChangesOf(tool, r, o_.workspace);
  auto& changed = c.outcome.changed_files;
  for (const std::string& file : changes.changed) {
    if (std::find(changed.begin(), changed.end(), file) == changed.end()) changed.push_back(file);
  }
  c.outcome.not_validated.insert(c.outcome.not_validated.end(), changes.not_validated.begin(),
                                 changes.not_validated.end());
  NoteForReviews(execution_id, tool, c.calls[index], r, !changes.changed.empty());
  if (observer_) observer_->OnToolEnd(execution_id, tool, r);
  if (c.running.empty()) {
    bool all = true;
    for (const auto& res : c.results) all = all && res.has_value();
    if (all) AllToolsDone();
  }
}

void Agent::AllToolsDone() {
  Current& c = *current_;
  ChatMessage results{ChatMessage::Role::kToolResults, "", {}, {}};
  for (auto& r : c.results) results.results.push_back(std::move(*r));
  results.images = std::move(c.images);
  c.images.clear();
  history_.push_back(std::move(results));
  DropOldToolImages(&history_);
  c.results.clear();
  c.calls.clear();
  if (c.cancelled) return Finish("cancelled");
  if (!c.stopping.empty()) return Finish(c.stopping, c.stop_error);
  if (std::optional<std::string> limit = c.budget->Exceeded()) return StopForBudget(*limit);
  // Gate 6: the stall detector reads the turn, step by step.
  // (The host's digest, kept from the change sets: no look at the tree.)
  const std::string workspace_now = WorkspaceNow(c.message.mode);
  std::vector<StallDetection> found;
  for (std::optional<StallStep>& step : c.steps) {
    if (!step) continue;
    step->workspace = c.workspace_before;
    if (std::optional<StallDetection> d = stall_.AddStep(*step)) found.push_back(std::move(*d));
  }
  c.steps.clear();
  if (std::optional<StallDetection> d = stall_.EndTurn(workspace_now, clock_->Now())) found.push_back(std::move(*d));
  for (const StallDetection& d : found) {
    if (HandleStall(d)) return;
  }
  ReviewTurn([this] { AskModel(); });
}

std::string Agent::WorkspaceNow(Mode mode) {
  // Ask and plan run with the workspace read-only: nothing they do changes it.
  if (mode != Mode::kEdit) return "read-only";
  return host_->WorkspaceDigest();
}

bool Agent::HandleStall(const StallDetection& d) {
  Current& c = *current_;
  json detail = {{"rule", d.rule},
                 {"action", d.stop ? "stop" : "nudge"},
                 {"count", d.count},
                 {"loop_start", d.execution_ids.empty() ? json() : json(d.execution_ids.front())},
                 {"execution_ids", d.execution_ids},
                 {"span_ms", ToMillis(d.span)},
                 {"description", d.description}};
  RecordGateEvent("stall", d.execution_ids.empty() ? "" : d.execution_ids.back(),
                  detail.dump(-1, ' ', false, json::error_handler_t::replace));
  std::string ids;
  for (const std::string& id : d.execution_ids) ids += (ids.empty() ? "" : ", ") + id;
  if (d.stop) {
    // Told to the user: what blocked, when completion was being refused
    // (the loop was only the model's answer to it).
    std::string why = c.last_refusal.empty()
                          ? "the model went round the same loop again after being warned (" + d.rule +
                                (ids.empty() ? "" : "; " + ids) + ")"
                          : "the model kept answering the same way while completion stayed refused (" + d.rule + "). " +
                                c.last_refusal;
    StopSoon("stalled", Status::FailedPrecondition(why), v1::CANCEL_REASON_USER);
    return true;
  }
  std::string text = "[runtime] Loop detected (" + d.rule + "): " + d.description +
                     (ids.empty() ? "" : " (executions " + ids + ")") +
                     ". Repeating it will not give a different result. Change your approach: look at what the results "
                     "say, use memory_query for the facts, or try something else. If this loop happens again, the run "
                     "stops as stalled.";
  c.nudge += (c.nudge.empty() ? "" : "\n") + text;
  return false;
}

void Agent::StopForBudget(const std::string& limit) {
  Current& c = *current_;
  if (!c.stopping.empty()) return;
  std::string described = c.budget->Describe(limit);
  BudgetUse used = c.budget->used();
  RecordGateEvent("budget_exceeded", "",
                  json({{"limit", limit},
                        {"detail", described},
                        {"turns", used.turns},
                        {"tool_calls", used.tool_calls},
                        {"tokens", used.tokens},
                        {"cost_usd", static_cast<double>(used.cost_microusd) / 1e6},
                        {"wall_ms", ToMillis(used.wall)}})
                      .dump());
  c.outcome.budget_limit = limit;
  StopSoon("budget_exceeded", Status::ResourceExhausted("budget exceeded", described), v1::CANCEL_REASON_BUDGET);
}

void Agent::StopSoon(const std::string& status, Status error, int cancel_reason) {
  Current& c = *current_;
  if (c.finishing) return;  // ended already
  c.stopping = status;
  c.stop_error = error;
  if (c.llm_call) {
    llm_->Cancel(*c.llm_call);
    c.llm_call.reset();
  }
  if (!c.check_running.empty()) {
    std::string check = c.check_running;  // its end finishes the message
    return host_->Cancel(check, cancel_reason);
  }
  uint64_t generation = generation_;
  AbandonWebAnswers(status);
  if (generation != generation_ || !current_) return;
  AbandonPlanReviews(status);
  if (generation != generation_ || !current_) return;
  if (c.running.empty()) return Finish(status, error);
  // The running calls are killed (their process groups with them); their
  // results close the turn, and the message finishes then.
  std::vector<std::string> running;
  for (const auto& [id, index] : c.running) running.push_back(id);
  for (const std::string& id : running) host_->Cancel(id, cancel_reason);
}

std::optional<SteadyTime> Agent::NextTimer() const {
  if (!current_ || !current_->budget || !current_->stopping.empty() || current_->cancelled || current_->finishing) {
    return std::nullopt;
  }
  return current_->budget->deadline();
}

void Agent::Tick() {
  if (persist_due_) {
    persist_due_ = false;
    PersistHistory();
  }
  if (!current_ || !current_->budget || !current_->stopping.empty() || current_->cancelled || current_->finishing) {
    return;
  }
  // The wall clock, or what subagents spent of this message's budget while
  // the loop waits for them.
  if (std::optional<std::string> limit = current_->budget->Exceeded()) StopForBudget(*limit);
}

// A model call added to a message's (or the session's) totals.
static void AddModelCall(const LlmCallRecord& call, MessageOutcome* to) {
  ++to->llm_calls;
  to->usage.input_tokens += call.input_tokens;
  to->usage.output_tokens += call.output_tokens;
  to->usage.cache_read_tokens += call.cache_read_tokens;
  to->usage.cache_write_tokens += call.cache_write_tokens;
  if (call.cost_microusd < 0) ++to->unpriced_calls;
  to->cost_microusd += std::max<int64_t>(call.cost_microusd, 0);
}

LlmCallRecord Agent::AccountModelCall(const std::string& role, const std::string& model, SteadyTime started,
                                      int64_t started_wall, const StatusOr<ChatResponse>& response) {
  LlmCallRecord rec;
  rec.id = NewId("llm");
  rec.session_id = host_->session_id();
  rec.agent_id = o_.agent_id;
  rec.role = role;
  rec.provider = llm_->provider();
  rec.model = model;
  rec.started_at_ms = started_wall;
  rec.duration_us = std::chrono::duration_cast<microseconds>(clock_->Now() - started).count();
  rec = RecordModelCall(std::move(rec), response, o_.prices);
  if (ledger_ != nullptr) NoteLedgerWrite(ledger_->AddLlmCall(rec));
  AddModelCall(rec, &totals_);
  if (current_) {
    AddModelCall(rec, &current_->outcome);
    current_->budget->ChargeModel(rec.input_tokens + rec.output_tokens, std::max<int64_t>(rec.cost_microusd, 0));
  }
  if (observer_) observer_->OnLlmCall(rec);
  return rec;
}

void Agent::RecordGateEvent(const std::string& kind, const std::string& execution_id, const std::string& detail) {
  host_->RecordGateEvent(o_.agent_id, current_->message.id, kind, execution_id, detail);
}

void Agent::CancelCurrent() {
  if (current_ && current_->finishing) {
    // The message has ended: only its reflection is dropped.
    auto [status, error] = *current_->finishing;
    current_->finishing.reset();
    CancelReviews();
    return Finish(status, error);
  }
  if (!current_) {
    // A /compact under way: its summary is dropped, masking stands.
    if (compaction_ && compaction_->call) llm_->Cancel(*compaction_->call);
    if (compaction_) FinishCompaction("masked", "", "", Status::Cancelled("compaction", "cancelled by the user"));
    return;
  }
  current_->cancelled = true;
  host_->MessageCancelled(o_.agent_id);
  // Answers over fetched pages are dropped; their ends may close the turn.
  uint64_t generation = generation_;
  AbandonWebAnswers("cancelled");
  if (generation != generation_ || !current_) return;
  AbandonPlanReviews("cancelled");
  if (generation != generation_ || !current_) return;
  Current& c = *current_;
  if (c.llm_call || compaction_ || !reviews_.empty()) {
    CancelReviews();
    if (c.llm_call) llm_->Cancel(*c.llm_call);
    c.llm_call.reset();
    return Finish("cancelled");  // drops a compaction under way
  }
  if (!c.check_running.empty()) {
    std::string check = c.check_running;  // its end clears (or destroys) c
    return host_->Cancel(check);
  }
  // Running tools end as cancelled; their results close the turn.
  std::vector<std::string> running;
  for (const auto& [id, index] : c.running) running.push_back(id);
  for (const std::string& id : running) host_->Cancel(id);
}

bool Agent::ClearHistory() {
  if (current_ || compaction_) return false;
  history_.clear();
  persisted_ = 0;
  PersistHistory("clear", "{}");
  return true;
}

void Agent::NoteLedgerWrite(const Status& recorded) {
  if (recorded.ok()) return;
  LogLedgerWriteFailure(recorded);
  if (ledger_failure_.ok()) ledger_failure_ = recorded;
}

void Agent::Finish(const std::string& status_in, Status error) {
  Current& c = *current_;
  if (c.finishing) return;  // ended already: the reflection's end finishes it
  if (compaction_) {
    // Ended while the utility model wrote a handoff: the handoff is dropped.
    if (compaction_->call) llm_->Cancel(*compaction_->call);
    compaction_.reset();
  }
  if (c.llm_call) {
    llm_->Cancel(*c.llm_call);
    c.llm_call.reset();
  }
  CancelReviews();
  // The end of a strict run: the reflection, before the report.
  if (!c.reflected && status_in != "cancelled" && !c.message.review && !c.message.slash_command &&
      ReviewerOn(ReviewRole::kReflection)) {
    c.reflected = true;
    c.finishing.emplace(status_in, error);
    return Reflect(status_in, error);
  }
  host_->SetMutationHold(o_.agent_id, MutationHold());
  // A message the ledger could not record cannot be shown done: the ledger is
  // the proof.
  std::string status = status_in;
  if (status == "done" && !ledger_failure_.ok()) {
    status = "error";
    error = ledger_failure_.WithContext("the ledger could not record the message");
  }
  ledger_failure_ = Status::OK();
  // The report first: what it finds may change how the message ended.
  if (ledger_ != nullptr) {
    ReportInput in;
    in.session_id = host_->session_id();
    in.agent_id = o_.agent_id;
    in.message_id = c.message.id;
    in.workspace = o_.workspace;
    in.status = status;
    in.profile = c.message.mode == Mode::kEdit ? ProfileName(o_.profile) : "";
    in.call_ids = c.model_call_ids;
    in.inherited_call_ids = c.inherited_call_ids;
    in.started_at_ms = c.started_wall_ms;
    in.wall_ms = ToMillis(clock_->Now() - c.started);
    StatusOr<Report> report = BuildReport(ledger_, in);
    // Work that did not land is not done: a command's changes were set
    // aside because something else changed the same paths meanwhile.
    if (report.ok() && status == "done" && !report->conflicts.empty()) {
      status = RunOutcomeName(RunOutcome::kConflict);
      report->status = status;
      const ReportConflict& first = report->conflicts.front();
      std::string who = first.by_session.empty() ? "something else" : "another Odin session (" + first.by_session + ")";
      std::string more =
          report->conflicts.size() > 1 ? " and " + std::to_string(report->conflicts.size() - 1) + " more path(s)" : "";
      error = Status::FailedPrecondition(first.path + more + " changed by " + who + " while " + first.execution_id +
                                         " ran; its version did not land and is in " + first.kept_in);
    }
    if (report.ok()) {
      c.outcome.report_text = RenderReport(*report);
      c.outcome.report_json = ReportJson(*report);
    } else {
      c.outcome.report_text = "(no report: " + report.status().message() + ")\n";
    }
  }
  c.outcome.status = status;
  c.outcome.error = error;
  c.outcome.budget_limits = c.budget->limits();
  c.outcome.budget_used = c.budget->used();
  if (status != "done" && !history_.empty() && history_.back().role != ChatMessage::Role::kAssistant) {
    // Keep the conversation well formed: a turn cut short.
    history_.push_back({ChatMessage::Role::kAssistant,
                        status == "cancelled" ? "(cancelled by the user)" : "(stopped: " + status + ")",
                        {},
                        {}});
  }
  if (ledger_ != nullptr) {
    std::string text = status == "error" ? error.message() : c.outcome.text;
    Status recorded = ledger_->AddMessage({NewId("msg"), host_->session_id(), o_.agent_id, "assistant",
                                           ModeName(c.message.mode), text, status, clock_->WallMillis()});
    LogLedgerWriteFailure(recorded);
  }
  totals_.turns += c.outcome.turns;
  for (const std::string& id : c.outcome.execution_ids) totals_.execution_ids.push_back(id);
  for (const std::string& f : c.outcome.changed_files) {
    if (std::find(totals_.changed_files.begin(), totals_.changed_files.end(), f) == totals_.changed_files.end()) {
      totals_.changed_files.push_back(f);
    }
  }
  PersistHistory();
  MessageOutcome outcome = std::move(c.outcome);
  current_.reset();
  ++generation_;  // late callbacks of this message are ignored
  if (observer_) observer_->OnMessageDone(outcome);
  StartNext();
}

}  // namespace odin
