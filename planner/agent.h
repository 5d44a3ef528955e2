#pragma once
// Agent: the planner loop of one agent, as a state machine the coordinator
// loop drives.
//
//   message -> model -> tool calls -> gates, workers, ledger -> results -> model
//
// until the model ends its turn without calling a tool (or a limit, an error
// or a cancel ends it).
//
// Ending the turn is a claim of completion, and in edit mode it meets the
// convergence gate: it is refused while the coordinator's validation gate
// has the session blocked (the refusal names the blocking executions and the
// errors), and, when the message changed files, the profile's backpressure
// checks (build, lint, tests) run as ExecuteCommand calls; a failure injects
// the tail of its output and the loop goes on. The same refusal repeated
// `retry_cap` times ends the message as not_converged. The answer then gets a
// report built from the ledger. Tool calls the model returns together are submitted
// together, so they run concurrently on different workers (writes to one file
// take turns); their results go back to the model in the model's order, each
// as a ground-truth record: {execution_id, tool, status, authority:
// "ground_truth", summary, ...}.
//
// Messages that arrive while the agent works wait in a queue, each with its
// own mode, and run in order. The model never changes anything itself: bad
// output (malformed JSON arguments, an unknown tool, missing fields, a stream
// cut off) becomes an error result it can read, and the loop goes on.
//
// Passive: it advances only on callbacks from the model client and the
// coordinator. Thread-safety: none.

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json_schema.h"
#include "planner/budget.h"
#include "planner/checks.h"
#include "planner/compaction.h"
#include "planner/context_window.h"
#include "planner/claude_defs.h"
#include "planner/instructions.h"
#include "planner/convergence_gate.h"
#include "planner/reviewers.h"
#include "planner/workflows.h"
#include "planner/tool_calls.h"
#include "planner/tool_host.h"
#include "ledger/ledger.h"
#include "llm/llm.h"
#include "planner/stall_detector.h"
#include "tools/tool_catalog.h"

namespace odin {

struct AgentOptions {
  std::string agent_id = "main";
  std::string provider;  // for the ledger
  std::string model;
  std::string workspace;                   // absolute root
  std::string cwd;                         // where the user started
  std::string instructions;                // ODIN.md, AGENTS.md, CLAUDE.md text (planner/instructions.h)
  InstructionSources instruction_sources;  // what LoadInstructions reads again after a compaction
  // The budget of each message: model turns, tool calls, tokens, cost,
  // wall time (0: no limit). Running out ends the message as budget_exceeded.
  BudgetLimits budget = [] {
    BudgetLimits b;
    b.turns = 50;
    return b;
  }();
  StallOptions stall;  // the stall detector's thresholds
  // Per-tool timeouts in seconds ("*": any other tool; absent or 0: none,
  // except for ExecuteCommand, whose default is then 120 s). ExecuteCommand's
  // is the default when the model gives no timeout_seconds.
  std::map<std::string, int> tool_timeouts;
  int max_tokens = 0;       // per model response; 0: the provider's default
  double temperature = -1;  // the planner's sampling temperature; below 0: the provider's default
  PriceTable prices;
  Profile profile = Profile::kAuto;  // which backpressure checks run
  // context.repo_map: the repository map's budget in tokens in the system
  // prompt (0: no map).
  size_t repo_map_tokens = 0;
  ChecksConfig checks;     // their commands (else detected), timeout, retry cap
  bool fail_open = false;  // a check that could not run does not block
  // A subagent's loop (in a subagent worker): never offered AgentTool, and
  // told that its answer goes to the agent that started it.
  bool subagent = false;
  // The context: the model's window in tokens (0: its family's default), the
  // share of it past which the conversation is compacted before a request,
  // and the model that writes handoff summaries ("": the planner model).
  int64_t context_window = 0;
  double compact_at = 0.8;
  std::string utility_model;
  // Hooks: the JSONL transcript they read (kept current; "" for none), and
  // how often Stop hooks may send the model back before the message ends
  // anyway.
  std::string transcript_path;
  int max_stop_blocks = 3;
  // Edit mode's commands reach the network (--network): ExecuteCommand's
  // description says so.
  bool commands_network = false;
  // Reviewers and workflows (planner/reviewers.h, planner/workflows.h): their
  // settings, and the workflow every message takes (kNone: the hydrator
  // routes each message).
  ReviewConfig reviews;
  Workflow workflow = Workflow::kNone;
  // Custom agents and skills (planner/claude_defs.h): AgentTool's subagent
  // types, the skills listed in the system prompt for the Skill tool.
  ClaudeDefs defs;
  // A custom agent's subagent: its name and its definition's body, which
  // leads its system prompt.
  std::string agent_type;
  std::string agent_prompt;
  // A trusted workspace: the CLAUDE.md files below the root are read when
  // the agent reads or writes a file there (planner/instructions.h
  // NestedInstructions).
  bool nested_instructions = false;
  // --json-schema: the final answer must be JSON valid against this schema
  // (its text; "" for none). It is sent back to the model once with the
  // errors; a second invalid answer ends the message as invalid_output.
  std::string answer_schema;
  // The planner model accepts images (llm.vision, else guessed from its
  // name: llm/images.h): images attached to a message are sent as images,
  // else each is replaced by a note saying the model cannot see it.
  bool vision = false;
};

// The most bytes of images Read calls returned that requests carry: what
// the turn's Read calls send, and what older turns keep (the newest first;
// older ones are dropped from the history, their results' notes stay).
// Under every provider's request limit in base64.
constexpr size_t kMaxToolImageBytes = 15'000'000;
void DropOldToolImages(std::vector<ChatMessage>* history);

// How one message ended.
struct MessageOutcome {
  std::string message_id;
  Mode mode = Mode::kEdit;
  // done, not_converged, budget_exceeded, stalled, error, cancelled, halted
  std::string status;
  std::string text;  // the model's final answer (its own words)
  // With AgentOptions::answer_schema: the answer as canonical JSON, valid
  // against it ("" otherwise).
  std::string structured_output;
  Status error;  // when status is error
  std::vector<std::string> execution_ids;
  std::vector<std::string> changed_files;  // relative to the workspace
  std::vector<std::string> not_validated;  // changed files no validator looked at: the checks must vouch for them
  int turns = 0;
  int64_t llm_calls = 0;
  LlmUsage usage;
  int64_t cost_microusd = 0;   // of the calls with a price
  int64_t unpriced_calls = 0;  // calls whose model has no price (their cost unknown, not 0)
  // The message's budget and what it used.
  BudgetLimits budget_limits;
  BudgetUse budget_used;
  std::string budget_limit;  // when budget_exceeded: which limit ran out
  // The report from the ledger (text and JSON), when the message ran in a
  // session with a ledger.
  std::string report_text;
  std::string report_json;
};

// What a front end (terminal, JSON stream, the daemon's event stream) hears.
class AgentObserver {
 public:
  virtual ~AgentObserver() = default;
  virtual void OnMessageStart(const std::string& message_id, const std::string& text, Mode mode) {}
  virtual void OnTextDelta(const std::string& text) {}
  virtual void OnToolStart(const std::string& execution_id, const ToolCallRequest& call) {}
  virtual void OnToolProgress(const v1::ToolProgress& progress) {}
  virtual void OnToolEnd(const std::string& execution_id, const std::string& tool, const v1::ToolResult& result) {}
  virtual void OnLlmCall(const LlmCallRecord& call) {}
  // A model request failed and will be made again after retry.delay_ms.
  virtual void OnLlmRetry(const LlmRetry& retry) {}
  // The conversation was compacted: its size before and after, in tokens,
  // and how (masked, summarized, handoff_without_summary).
  virtual void OnCompaction(const std::string& id, int64_t tokens_before, int64_t tokens_after,
                            const std::string& how) {}
  virtual void OnMessageDone(const MessageOutcome& outcome) {}
};

class Agent {
 public:
  // All pointers must outlive the agent. ledger may be the coordinator's, or
  // null (a subagent's loop: the coordinator records for it).
  Agent(AgentOptions options, ToolHost* host, LlmClient* llm, Ledger* ledger, Clock* clock, AgentObserver* observer);

  // Queues a message; it starts now if the agent is idle. Returns its id.
  // A slash command's message (/init) is never planned by the hydrator.
  // tool_list narrows the tools of this message alone (a custom command's
  // allowed-tools): only what it names is offered, and the coordinator's
  // gate refuses the rest.
  // images go with the text (AgentOptions::vision).
  std::string Send(const std::string& text, Mode mode, bool slash_command = false,
                   std::optional<std::vector<std::string>> tool_list = std::nullopt,
                   std::vector<ImageData> images = {});
  // Queues a review of the workspace's uncommitted change (/review, odin
  // review): the QA verifier judges `git diff HEAD` (run in a read-only
  // sandboxed worker) against the session's requests, and its verdict is
  // the message's answer.
  std::string SendReview();
  // The user clears the reviewers' hold on the running message (/unblock: a
  // drift BLOCK, a critic's REVISE, a vague spec). Returns the rule cleared,
  // "" when nothing was held.
  std::string ClearReviewHold();
  // Runs the SessionStart hooks (source: startup, resume, clear); messages
  // wait for them, and what they print reaches the model with the first.
  void RunStartHooks(const std::string& source);
  // Cancels the message being worked on (the queue stays).
  void CancelCurrent();
  // When Tick must run next (the wall-time budget), if ever.
  std::optional<SteadyTime> NextTimer() const;
  // Writes the conversation's messages a request took out, and ends the
  // message if its budget ran out meanwhile: the wall time, or what its
  // subagents spent. Called every loop turn.
  void Tick();
  bool busy() const { return current_.has_value(); }
  size_t queued() const { return queue_.size(); }
  // Forgets the conversation so far (not the ledger). Returns false, and does
  // nothing, while a message is being worked on.
  bool ClearHistory();
  // Something the model must know that happened outside its calls (the
  // user's /undo): it reads it, as [runtime] words, before the next message.
  void AddNote(const std::string& text) { notes_ += (notes_.empty() ? "" : "\n") + text; }
  // Changes the next message answers for as if its calls had made them
  // (what an interrupted command wrote, applied on resume): its completion
  // runs the checks for them, and waits for them where not validated.
  void AddInheritedChanges(const std::string& execution_id, const CallChanges& changes);
  void set_model(const std::string& model) {
    o_.model = model;
    if (o_.context_window == 0) context_.window = DefaultContextWindow(model);
  }
  const std::string& model() const { return o_.model; }
  // The workflow the next messages take (/workflow NAME); kNone lets the
  // hydrator route them.
  void set_workflow(Workflow workflow) { o_.workflow = workflow; }
  Workflow workflow() const { return o_.workflow; }
  // Totals over the session so far.
  const MessageOutcome& totals() const { return totals_; }
  // The context: the window, the last request's reported size and the next
  // one's estimate.
  ContextUse context() const;
  // Compacts the conversation now (/compact FOCUS), masking and summarising
  // whatever is older than the recent turns. Returns false, doing nothing,
  // while a message is being worked on or a compaction runs; messages sent
  // meanwhile wait for it.
  bool CompactNow(const std::string& focus);
  bool compacting() const { return compaction_.has_value(); }
  // Takes up the conversation of a resumed session from its ledger entries
  // (planner/conversation_log.h); a turn a crash cut off is closed with
  // "interrupted" results. Only while idle, before any message.
  Status Restore(const std::vector<ConversationEntry>& entries);
  // Takes the conversation back to before a message of this agent (its full
  // id): records a "rewind" entry and replays the ledger's
  // entries with it. Only while idle. The message's changes to files are
  // the caller's to undo first (workspace/undo.h).
  Status Rewind(const std::string& message_id);
  // An entry for the conversation's record (conversation_log.h), written
  // with the next messages.
  void QueueEntry(const std::string& kind, const std::string& content_json) {
    queued_entries_.push_back({kind, content_json});
  }
  // Writes what is queued now.
  void Flush() { PersistHistory(); }

  // The system prompt for a mode (exposed for tests).
  std::string SystemPrompt(Mode mode);
  // What changes from turn to turn (the file cache, the todo list, the
  // budget left), for the request's tail (ChatRequest::tail), "" if nothing.
  std::string TurnFacts();

 private:
  struct Pending {
    std::string id;
    std::string text;
    Mode mode;
    bool review = false;  // SendReview's
    bool slash_command = false;
    std::optional<std::vector<std::string>> tool_list;
    std::vector<ImageData> images;
  };
  struct Current {
    Pending message;
    MessageOutcome outcome;
    std::optional<uint64_t> llm_call;  // the model call in flight
    SteadyTime llm_started{};
    int64_t llm_started_wall = 0;
    std::vector<ToolCallRequest> calls;                     // the tool calls of the last response
    std::vector<std::optional<ToolResultMessage>> results;  // in the model's order
    std::vector<ImageData> images;          // what Read calls of images returned, sent after the results
    std::map<std::string, size_t> running;  // execution id -> index
    bool cancelled = false;
    int64_t started_wall_ms = 0;
    SteadyTime started{};
    std::vector<std::string> model_call_ids;
    std::vector<std::string> inherited_call_ids;  // AddInheritedChanges'
    // The convergence gate: how often each distinct refusal happened, and the
    // checks of the completion claim being judged.
    RefusalCounter refusals{0};
    // The last refusal of completion, in one line for the user ("" when
    // none): what a stall behind it really was.
    std::string last_refusal;
    std::vector<CheckSpec> checks;
    size_t check_index = 0;
    std::string check_running;                        // execution id
    std::vector<Refusal> check_failures;              // what failed, for the model
    std::map<std::string, std::string> check_status;  // by check name: passed, failed, not_run
    std::unique_ptr<Budget> budget;
    // Set when a budget or the stall detector ends the message while calls
    // still run: their cancelled results close the turn, then it finishes.
    std::string stopping;
    Status stop_error;
    // The stall detector's view of the turn's calls, in the model's order.
    std::vector<std::optional<StallStep>> steps;
    std::string workspace_before;  // the host's workspace digest as the turn's calls began
    std::string nudge;             // a stall nudge waiting for the next request
    // Context: the bytes of the request in flight (calibrates the estimate),
    // whether this request was compacted already, how many compactions
    // context-length errors have asked for since the last answer (each
    // harder: CompactAfterOverflow), and a compaction the model asked for
    // (ContextSummarizer) with its focus.
    int64_t request_bytes = 0;
    bool compacted = false;
    int overflow_level = 0;
    std::optional<std::string> compact_focus;
    int stop_blocks = 0;     // times Stop hooks sent the model back to work
    int answer_retries = 0;  // invalid answers sent back (answer_schema)
    // WebFetch calls whose page the utility model is answering over
    // (agent_web.cc): execution id -> the call and the fetch's result.
    struct WebAnswer {
      uint64_t call;
      size_t index;
      std::string fetched;  // the serialized v1::ToolResult
    };
    std::map<std::string, WebAnswer> web_answers;
    // Reviewers and workflows (agent_review.cc): the plan, the workflow, the
    // reviewer holding mutations until the plan is revised ("plan", "spec",
    // "critic", "drift"; "" for none) and why, the critic's rounds, tdd's
    // failing test, the batch's step checks, and plan_update calls whose
    // result waits for the critic (execution id -> index).
    std::optional<Plan> plan;
    Workflow workflow = Workflow::kNone;
    std::string review_hold;
    std::string review_hold_reason;
    int critic_rounds = 0;
    std::string tdd_failing_command;
    std::string tdd_failing_id;
    bool drift_due = false;
    int progress_turn = 0;  // the turn the progress check last ran after
    bool reflected = false;
    // The message has ended (this status) and its reflection runs: nothing
    // but the reflection's end (or a cancel, which drops it) finishes it.
    std::optional<std::pair<std::string, Status>> finishing;
    std::map<std::string, size_t> plan_updates;
  };
  // A reviewer's call under way (agent_review.cc).
  struct ReviewCall {
    ReviewRole role = ReviewRole::kQa;
    std::string model;  // reviewers.ROLE.model, else the utility model
    std::string evidence;
    std::vector<std::string> ids;  // what the answer may cite
    int attempt = 1;
    std::optional<uint64_t> llm_call;
    std::vector<std::string> llm_call_ids;
    SteadyTime started{};
    int64_t started_wall = 0;
    std::string detail_json;  // extra fields for its gate event
  };
  struct ReviewOutcome {
    ReviewRole role = ReviewRole::kQa;
    std::string verdict;  // the answer's, or cannot_assess
    std::string text;     // for the planner
    std::string answer_json;
    std::string problem;  // why cannot_assess
  };
  // A compaction under way (agent_compaction.cc).
  struct Compaction {
    std::string id;
    std::string trigger;  // threshold, context_error, user, tool
    std::string focus;
    int level = 0;  // StartCompaction's
    size_t keep_from = 0;
    size_t mask_to = 0;  // results masked in [0, mask_to): keep_from, or all at level 3
    MaskResult mask;
    std::string summary_form;  // the utility model's answer's (HandoffSummary::form), if it gave one
    int64_t tokens_before = 0;
    int64_t history_bytes = 0;     // the conversation's, before masking
    std::optional<uint64_t> call;  // the utility model writing the handoff
    SteadyTime started{};
    int64_t started_wall = 0;
    std::function<void()> then;  // what goes on once it is done
  };

  // Reviewers and workflows (agent_review.cc).
  // The message's start: the hydrator's plan and routing, the spec check,
  // the critic, then the model.
  void PrepareMessage();
  void OnHydrated(const ReviewOutcome& r);
  void JudgePlan(std::function<void(const std::string& text)> then);
  // Starts a reviewer's call; `then` hears the outcome (once, unless the
  // message ends first).
  // `evidence_json` (a JSON object) is merged into the evidence.
  void Review(ReviewRole role, const std::string& detail_json, std::function<void(const ReviewOutcome&)> then,
              const std::string& evidence_json = "");
  // Asks the reviewer's model (again, told `problem`, on a retry).
  void AskReviewer(uint64_t key, const std::string& problem);
  void OnReviewAnswer(uint64_t key, const StatusOr<ChatResponse>& response);
  std::string ReviewEvidenceFor(ReviewRole role, const std::vector<std::string>& execution_ids,
                                const std::string& extra_json, std::vector<std::string>* ids);
  bool ReviewerOn(ReviewRole role) const;
  // The hold the coordinator keeps on this agent's mutations now.
  void UpdateHold();
  // plan_update's result waits for the critic (true).
  bool StartPlanReview(size_t index, const std::string& execution_id, const v1::ToolResult& result);
  // Ends a plan_update call with Odin's record (fields_json: a JSON object
  // merged into it).
  void EndPlanUpdate(size_t index, const std::string& execution_id, bool ok, const std::string& fields_json);
  // A call's result, for the workflows' and the drift audit's bookkeeping.
  void NoteForReviews(const std::string& execution_id, const std::string& tool, const ToolCallRequest& call,
                      const v1::ToolResult& result, bool changed);
  // Between turns: the drift audit and the progress check, then `then`.
  void ReviewTurn(std::function<void()> then);
  // Completion: the workflow's rules and the QA verifier, after the checks.
  void ReviewCompletion();
  // The checks the workflow adds to the profile's (tdd's test, batch's steps).
  void AddWorkflowChecks(std::vector<CheckSpec>* checks);
  // Why completion is refused by a reviewer's hold or the workflow's rules
  // (minor-edit's file count, tdd without a failing test), if it is.
  std::optional<Refusal> WorkflowRefusal();
  // batch: each plan step's verdict (its files, its check), a gate event each.
  void RecordBatchItems();
  void CancelReviews();
  // SendReview's message: the diff, then the QA verifier.
  void StartChangeReview();
  // plan_update calls whose critic is abandoned (the run stops) end now.
  void AbandonPlanReviews(const std::string& why);
  // The run halts (the critic): running calls stop, the message ends halted.
  void Halt(const std::string& text, Status error, const std::function<void(const std::string&)>& then);
  // The reflection at the end of a strict run, then Finish.
  void Reflect(const std::string& status, Status error);
  std::map<uint64_t, std::pair<ReviewCall, std::function<void(const ReviewOutcome&)>>> reviews_;
  uint64_t next_review_ = 0;
  uint64_t drift_seed_ = 0;
  bool drift_seed_recorded_ = false;
  int64_t mutating_calls_ = 0;  // the session's, for the drift audit

  void StartNext();
  bool starting_ = false;      // SessionStart hooks run
  std::string start_context_;  // what they printed, for the first message
  void AskModel();
  // Builds the next request and sends it, compacting first when it would
  // pass the threshold or the model asked for it.
  void SendRequest();
  ChatRequest BuildRequest();
  // Compaction (agent_compaction.cc): masks, then, when that is not enough
  // or a person, the model or a context-length error asked, replaces the
  // older turns with a handoff (the utility model's summary in it, if it
  // gave one). level (context-length errors): 1 keeps the last
  // kRecentTurnsKept turns, 2 the last one, 3 the last one with its results
  // masked too.
  void StartCompaction(const std::string& trigger, const std::string& focus, int64_t tokens_before,
                       std::function<void()> then, int level = 0);
  // A request the model refused as too long: compacts one level harder and
  // sends it again if that made the conversation smaller; ends the message
  // (context_exhausted, with why) once no level does.
  void CompactAfterOverflow(const Status& why);
  void CompactNowAfterHooks();
  void OnSummary(const StatusOr<ChatResponse>& response);
  void FinishCompaction(const std::string& how, const std::string& handoff, const std::string& llm_call_id,
                        const Status& failure);
  void OnModel(const StatusOr<ChatResponse>& response);
  void RunTools(const std::vector<ToolCallRequest>& calls, bool truncated);
  // record: what the model reads, when not GroundTruthRecord's (a
  // WebFetch's answer).
  void OnToolDone(size_t index, const std::string& execution_id, const std::string& tool, const v1::ToolResult& result,
                  const std::string* record = nullptr);
  // A Read of an image (agent_images.cc): for a model that sees images,
  // the bytes the worker read, read again through the safe file layer and
  // checked against the worker's hash, go after the turn's results; else
  // the result says the model cannot see it.
  void AttachReadImage(size_t index, const v1::ToolResult& result);
  // WebFetch (agent_web.cc): the utility model answers the prompt over the
  // page (true: the result waits for it); abandoned when the turn stops.
  bool StartWebAnswer(size_t index, const std::string& execution_id, const v1::ToolResult& result);
  void OnWebAnswer(const std::string& execution_id, SteadyTime started, int64_t started_wall,
                   const StatusOr<ChatResponse>& response);
  void AbandonWebAnswers(const std::string& why);
  void AllToolsDone();
  // The model ended its turn: the convergence gate decides.
  void ClaimCompletion();
  // With answer_schema: true when the final answer is valid against it (it
  // is kept as structured_output); else it was sent back to the model, or
  // the message ended as invalid_output.
  bool AnswerValid();
  // The gate accepted completion: the Stop hooks may still send the model
  // back to work (at most max_stop_blocks times).
  void AcceptCompletion();
  // The message starts for the model (after its UserPromptSubmit hooks),
  // with what they added.
  void BeginMessage(const std::string& hook_context);
  void RunPromptHooks();
  // Appends history_[from, to) to the transcript, in Claude Code's shape.
  void AppendTranscript(size_t from, size_t to);
  // The CLAUDE.md files of the directories a Read or write reached, not
  // given yet, added to its result (the conversation's tail).
  void AddNestedInstructions(const std::string& tool, const std::string& arguments_json, ToolResultMessage* result);
  // What changed in the MCP servers' listings since the model last heard,
  // added to a tool result (field mcp_news), once.
  void AddMcpNews(ToolResultMessage* result);
  void RunNextCheck();
  void OnCheckDone(const std::string& execution_id, const v1::ToolResult& result);
  // Tells the model why completion was refused and goes on, unless this
  // refusal has come back retry_cap times.
  void Refuse(const Refusal& refusal);
  // A budget ran out: cancels what runs, then finishes as budget_exceeded.
  void StopForBudget(const std::string& limit);
  // Ends the message now, or once the running calls have ended.
  void StopSoon(const std::string& status, Status error, int cancel_reason);
  // Records a detection; returns true if it stops the message (the caller
  // must then return without going on).
  bool HandleStall(const StallDetection& d);
  // The fingerprint of the workspace now (ask and plan cannot change it):
  // a full rescan, or only the written files when no command ran.
  std::string WorkspaceNow(Mode mode);
  void RecordGateEvent(const std::string& kind, const std::string& execution_id, const std::string& detail_json);
  void Finish(const std::string& status, Status error = Status::OK());
  // Records a finished model call: the ledger, the session's totals, the
  // message's usage and budget (if one runs), the observer.
  LlmCallRecord AccountModelCall(const std::string& role, const std::string& model, SteadyTime started,
                                 int64_t started_wall, const StatusOr<ChatResponse>& response);
  const std::string& UtilityModel() const { return o_.utility_model.empty() ? o_.model : o_.utility_model; }
  int64_t HistoryBytes() const;
  // Remembers a failed ledger write: the message it belongs to cannot end done.
  void NoteLedgerWrite(const Status& recorded);
  // Writes the conversation's new messages to the ledger (and `extra`, an
  // entry of another kind, after them).
  void PersistHistory(const std::string& extra_kind = "", const std::string& extra_json = "");

  AgentOptions o_;
  ToolHost* host_;
  LlmClient* llm_;
  Ledger* ledger_;
  Clock* clock_;
  AgentObserver* observer_;
  std::vector<ChatMessage> history_;
  std::string notes_;                         // for the next message (AddNote)
  CallChanges inherited_;                     // for the next message (AddInheritedChanges)
  std::vector<std::string> inherited_calls_;  // whose changes those are, for its report
  std::deque<Pending> queue_;
  std::optional<Current> current_;
  MessageOutcome totals_;
  StallDetector stall_;
  Status ledger_failure_;    // a ledger write of the current message that failed
  uint64_t generation_ = 0;  // bumps on ClearHistory/cancel so stale callbacks are ignored
  // Context accounting and compaction.
  TokenEstimator estimator_;
  ContextUse context_;
  std::vector<std::string> user_requests_;  // every message the user sent, verbatim
  std::optional<Compaction> compaction_;
  std::optional<JsonSchema> answer_schema_;  // AgentOptions::answer_schema, compiled
  size_t persisted_ = 0;                     // history_[0, persisted_) is in the ledger
  std::string transcript_parent_;            // the transcript's last line's uuid
  std::set<std::string> nested_given_;       // directories whose CLAUDE.md files were looked at
  bool persist_due_ = false;                 // a request went out: its messages are written at the next Tick
  std::vector<std::pair<std::string, std::string>> queued_entries_;  // kind, content
};

}  // namespace odin
