#pragma once
// Coordinator: the single authority that runs tool calls.
// Long file: one class holds the gates' shared state; its code is split by
// concern across coordinator*.cc, command_changes.cc and the gates.
//
// For each call it assigns an execution id and puts the call through the
// gates: the mode gate (the tool must belong to the call's mode), the blocked
// state (below), then, for tools that change files, the read-before-edit gate
// against the calling agent's file cache, one write per file at a time. A
// call that passes goes to a worker; its start is recorded in the ledger
// *before* the worker sees it, and its end (with the output, the diff and
// content hashes as artifacts) before the caller hears of it. A call a gate
// refuses is recorded too, as a rejected execution. TodoWrite and
// memory_query run here, in the coordinator.
//
// The validation gate: after a write succeeds, the file is validated by the
// lsp host (a language server, else a check command) as an lsp_check
// execution of its own, linked to the write. Only diagnostics that are new
// against the file as it was before the session first changed it count. The
// write's caller hears of it only after the verdict (clean, errors,
// timed_out, no_validator), which rides on the write's result; the next
// write to the file waits for it too. While the latest verdict of any file is
// errors or timed_out the session is blocked: edit-mode calls other than
// reads, memory_query, lsp_check and corrective writes are refused, and
// Blocking() says why (the agent refuses completion on it). The model may run
// lsp_check itself, e.g. after fixing a header, to re-validate a file.
//
// Every change is a mutation (command_changes.cc): what a command that can
// write changed (its overlay's upper directory, else the ChangeTracker)
// becomes mutation records in the ledger, marks the file stale in every
// agent's cache, rides on its result, and each changed source file is
// validated like a file tool's write; the command's caller hears of it
// after the verdicts. A file-tool write is recorded as a mutation too;
// changes made between calls by no call are recorded as external.
//
// Each agent has its own file cache and todo list; a session's caches can be
// rebuilt from the ledger (ResumeSession).
//
// Passive: calls advance only inside Poll(). Thread-safety: none.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/background_tasks.h"
#include "base/clock.h"
#include "base/process_launcher.h"
#include "base/status.h"
#include "workspace/change_digest.h"
#include "workspace/change_tracker.h"
#include "workspace/overlay_changes.h"
#include "gates/breaker_bank.h"
#include "gates/call_gates.h"
#include "gates/command_rules.h"
#include "gates/file_cache.h"
#include "mcp/mcp_registry.h"
#include "ledger/ledger.h"
#include "llm/llm.h"
#include "planner/claude_defs.h"
#include "planner/stall_detector.h"
#include "workspace/protected_paths.h"
#include "workspace/workspace_files.h"
#include "coordinator/background_jobs.h"
#include "coordinator/network_log.h"
#include "coordinator/change_numbers.h"
#include "coordinator/first_look_thread.h"
#include "coordinator/index_refresh.h"
#include "coordinator/mcp_servers.h"
#include "coordinator/mutation_holds.h"
#include "coordinator/todo_list.h"
#include "coordinator/web_page_cache.h"
#include "coordinator/worker_capabilities.h"
#include "coordinator/writers_lane.h"
#include "planner/tool_host.h"
#include "tools/tool_catalog.h"
#include "gates/approval_gate.h"
#include "gates/validation_gate.h"
#include "gates/validators.h"
#include "pool/worker_pool.h"
#include "pool/worker_transport.h"
#include "index/index_query.h"

namespace odin {

namespace v1 {
class McpQuestion;
class WebFetchOptions;
}  // namespace v1

struct CoordinatorOptions {
  std::string session_kind = "exec";  // recorded with the session
  std::string workspace;              // absolute root, symlinks resolved
  // Odin's state directory (Workspace::state_dir): the workspace's .odin,
  // or the user's where that is not Odin's. "": workspace/.odin.
  std::string state_dir;
  CallMode mode = CallMode::kExec;  // default mode of calls
  std::string agent_id = "main";    // default agent of calls
  uint64_t artifact_cap_bytes = 8u << 20;
  FileCacheOptions file_cache;
  WorkerPoolOptions pool;
  // Validation after writes; off unless the caller turns it on.
  ValidationOptions validation = [] {
    ValidationOptions v = DefaultValidationOptions();
    v.enabled = false;
    return v;
  }();
  // Finds validators' programs; null: PATH, then <odin's bin>/../lsp.
  ProgramLookup program_lookup;
  // The strict profile: after a failed validation, an agent's next write is
  // refused until it has run memory_query.
  bool memory_forced = false;
  // The strict profile's grounded edits (index_calls.cc): a change to an
  // existing file must cite, in "evidence", analysis executions of the same
  // message that covered the file.
  bool grounded_edits = false;
  // Circuit breakers, one per tool and one per worker kind.
  BreakerOptions breakers;
  // rlimits of every command (ExecuteCommand) that sets none of its own.
  SpawnLimits command_limits;
  // Rules for the agents' commands (not odin exec's), and what happens to a
  // command that needs approval: "deny" (refused, with a clear result),
  // "allow", or "prompt" (the call waits for AnswerApproval; the front end
  // hears of it through on_approval_request).
  CommandRules command_rules;
  std::string home;  // the user's HOME: where a path rule's "~/" starts
  std::string approval = "deny";
  // Subagents (AgentTool): their deadline and stall thresholds.
  Duration subagent_timeout = seconds(600);
  StallOptions subagent_stall;
  // What commands that can write change is tracked (false: only for
  // benchmarks that measure what tracking costs).
  bool track_changes = true;
  // Writable workers are given the workspace overlay (their commands' change
  // sets are their upper directories): odin exec then skips the look at
  // the tree, unless a worker's Hello says it has no overlay.
  bool overlay_commands = false;
  // Edit mode's commands reach the network (--network, sandbox.network):
  // each such command's record says "network": true.
  bool commands_network = false;
  // sandbox.network's rules: the control socket of the commands' proxy
  // (workers/net_proxy.h; the runtime keeps it open), -1 without one.
  int commands_proxy_fd = -1;
  // Background commands (ExecuteCommand with run_in_background) that may
  // run at once (commands.max_background; 0: none). The pool's
  // background_size matches it.
  int max_background = 4;
  // Before-images kept per file and per command (past a cap only the hash
  // is, and the mutation is not undoable).
  int64_t image_cap_bytes = 1 << 20;
  int64_t images_per_command_bytes = 64 << 20;
  // Hooks (planner/hooks.h), and the session's JSONL transcript they are
  // told of.
  HooksConfig hooks;
  std::string transcript_dir;  // the transcript is <dir>/<session id>.jsonl
  // MCP servers (mcp_servers.h), started by StartMcpServers, and their
  // OAuth tokens (null: none; it outlives the coordinator).
  std::vector<McpServerSpec> mcp_servers;
  McpAuthorizer* mcp_authorizer = nullptr;
  // WebFetch (web_fetch_calls.cc): the options every fetch gets (the
  // user's web.*; null: the defaults), and how long a URL's page is kept
  // (0: never).
  std::shared_ptr<const v1::WebFetchOptions> web_fetch_options;
  Duration web_cache_ttl = seconds(15 * 60);
};

class Budget;

// A command waiting for the user's approval.
struct ApprovalRequest {
  std::string execution_id;
  std::string agent_id;
  std::string command;
  std::string reason;  // why it needs approval: the ask rule, a computed name, ...
  // What "always" would save: exactly this call ("command:<text>", or
  // "call:<tool> <canonical arguments>"); "" when it may not be saved (a
  // command with substitutions), so only once and the session are offered.
  std::string saved_key;
};

// An MCP server's form (elicitation/create) during one of its calls.
struct McpQuestionRequest {
  std::string execution_id;
  std::string question_id;
  std::string server;
  std::string message;      // the server's words
  std::string schema_json;  // its requestedSchema
};

// kWorkspace and kAlways save the call's saved_key (for this workspace, for
// every one) through on_approval_saved, and allow it for the session too;
// for a request with no saved_key they are kSession.
enum class ApprovalAnswer { kOnce, kSession, kWorkspace, kAlways, kDeny };
// "once", "session", "workspace", "always", "deny" (the gRPC Approve
// answers); nullopt for another word.
std::optional<ApprovalAnswer> ParseApprovalAnswer(std::string_view word);

// How the coordinator calls the model for subagents (which have no network):
// the session's client, model and prices.
struct ModelAccess {
  LlmClient* llm = nullptr;  // null: AgentTool is refused (no agent session)
  std::string model;
  PriceTable prices;
  int max_tokens = 0;
  std::string instructions;                  // ODIN.md / AGENTS.md text, handed to each subagent
  int max_turns = 0;                         // model calls of each subagent; 0: no limit
  std::map<std::string, int> tool_timeouts;  // seconds, as AgentOptions::tool_timeouts
  int64_t context_window = 0;                // tokens of the subagents' model; 0: its family's default
  double compact_at = 0.8;
  // Custom agents (AgentTool's subagent_type) and skills (the Skill tool).
  ClaudeDefs defs;
};

// A circuit breaker's state, for front ends.

class Coordinator final : public ToolHost, private WorkerPool::Listener {
 public:
  Coordinator(CoordinatorOptions options, Clock* clock, ProcessLauncher* launcher, WorkerTransport* transport);
  ~Coordinator() override;

  // Starts the workers. Their sandboxes come up while the caller opens the
  // ledger, which is the slow part of a cold start.
  Status StartWorkers();
  // Records a new session in ledger, which must outlive the coordinator.
  // REQUIRES: called once (or ResumeSession), before Submit.
  Status AttachLedger(Ledger* ledger);
  // Continues session_id instead: its agents' file caches and todo lists are
  // rebuilt from the calls the ledger holds. NotFound if there is no such
  // session. REQUIRES: instead of AttachLedger.
  Status ResumeSession(Ledger* ledger, const std::string& session_id);
  // A command a crash ended (start: its row): its overlay's writes land now
  // as its, validated; on_done gets the result. False: none, no on_done.
  bool ApplyInterruptedCommand(const ExecutionStart& start, CallHandlers handlers);

  // Queues a tool call. Returns its execution id.
  std::string Submit(ToolCall call, CallHandlers handlers) override;
  // Hooks (hook_runs.cc): each run is a Hook execution of its own, in a
  // hook worker of the mode's sandbox, a child of request.parent_id.
  bool HasHooks(HookEvent event, const std::string& tool = "") const override;
  void RunHooks(HookRequest request, std::function<void(const HookOutcome&)> done) override;
  const HooksConfig& hooks() const { return o_.hooks; }
  // MCP servers (mcp_servers.h): each stdio server starts in an MCP worker
  // of its own, in the background (its McpListTools execution); their tools
  // join ExtraToolSpecs as they become known. REQUIRES: a ledger attached.
  void StartMcpServers() { mcp_.Start(); }
  std::vector<ToolSpec> ExtraToolSpecs(Mode mode) const override;
  // What changed in the MCP servers' listings since the agent last heard
  // (the main agent's; once), for its conversation.
  std::string TakeMcpNews(const std::string& agent_id) override;
  // Gets an MCP server's prompt (McpGetPrompt in its worker, the user's
  // call, recorded); done hears the result. REQUIRES: the server is ready.
  void GetMcpPrompt(const std::string& server, const std::string& name, const std::string& arguments_json,
                    CallMode mode, std::function<void(const v1::ToolResult&)> done);
  // Whether the rules deny every tool of server (mcp__SERVER, mcp__*): its
  // resources and prompts are denied with them.
  bool McpServerDenied(const std::string& server) const;
  void NarrowToolSpecs(const std::vector<std::string>& list, std::vector<ToolSpec>* specs) const override;
  bool CommandWithinList(const std::vector<std::string>& list, const std::string& command) const override;
  const McpRegistry& mcp() const { return mcp_.registry(); }
  // /init: while set, the main agent's InitTool may write ODIN.md; nothing else may.
  void set_init_active(bool active) { init_active_ = active; }
  bool init_active() const { return init_active_; }
  // Whether edit mode's commands reach the network (--network, sandbox.network).
  bool commands_network() const { return o_.commands_network; }
  // Told when a server is ready or failed.
  std::function<void(const McpRegistry::Server&)> on_mcp_server;
  // The session's JSONL transcript, which hooks read ("" without hooks).
  std::string TranscriptPath() const;
  // Told of what hooks say to the user (non-blocking errors, systemMessage).
  std::function<void(const std::string& note)> on_hook_note;
  // reason: a v1::CancelReason (a budget's end kills as budget_exceeded).
  void Cancel(const std::string& execution_id, int reason = 2 /* CANCEL_REASON_USER */) override;
  Status Poll(Duration max_wait, std::vector<PollFd>* extra_fds = nullptr);
  void Shutdown(Duration wait, const std::function<void()>& meanwhile = nullptr) {
    shut_down_ = true;
    pool_.Shutdown(wait, meanwhile);
  }
  // No more commands will be tracked: a first look under way stops; the watches go.
  void StopTracking();
  // For a process about to end without destructors (odin exec): tracking
  // stops and what commands' overlays used is removed. The workers are not
  // waited for: their launchers have this process's end for their
  // parent-death signal and take the sandboxes down.
  void FinishBeforeExit();
  // Edit mode: the first look starts on a thread while the model thinks.
  // An ask or plan request stops the background commands first: an edit
  // mode's process never serves a mode that must not write.
  void ModelRequestStarted(Mode mode) override;
  // Background commands (background_commands.cc): the ones kept, running
  // and ended, for /jobs, the status line and odin doctor.
  const BackgroundJobs& background() const { return jobs_; }
  // Stops every running background command (why is recorded); each one's
  // end is recorded when its worker says it ended (Poll).
  void StopBackgroundCommands(const std::string& why);
  // Stops one (/jobs stop ID); false if no such command runs.
  bool StopBackgroundCommand(const std::string& id, const std::string& why);
  // Stops them and polls until they ended, at most wait: before the session
  // ends, so that each end is in the ledger.
  void EndBackgroundCommands(const std::string& why, Duration wait);
  // The main agent's message was cancelled: its background commands stop.
  void MessageCancelled(const std::string& agent_id) override;
  const std::string& session_id() const override { return session_id_; }
  WorkerPool& pool() { return pool_; }
  // The files an agent has cached, for the planner's context.
  std::vector<CachedFileInfo> CachedFiles(const std::string& agent_id) override;
  const TodoList& Todos(const std::string& agent_id);
  std::string TodosText(const std::string& agent_id) override;
  void RecordGateEvent(const std::string& agent_id, const std::string& message_id, const std::string& kind,
                       const std::string& execution_id, const std::string& detail_json) override;
  // Files whose latest verdict is errors or timed_out: while there are any,
  // the session is blocked. Sorted by path.
  std::vector<FileVerdict> Blocking() const override;
  std::string WorkspaceDigest() override;
  // The latest verdict of every file the session changed, sorted by path.
  std::vector<FileVerdict> Verdicts() const;
  // Every breaker that has seen a call, sorted by name.
  std::vector<BreakerInfo> Breakers();
  Ledger* ledger() { return ledger_; }
  const std::string& workspace() const { return o_.workspace; }
  // Odin's state directory (CoordinatorOptions::state_dir).
  std::string StateDir() const { return o_.state_dir.empty() ? o_.workspace + "/.odin" : o_.state_dir; }
  // Lets AgentTool start subagents, whose model calls go through access.llm.
  void set_model_access(ModelAccess access) { model_ = std::move(access); }
  // Drops the subagents' model calls and forgets them (and model access):
  // before the model client or the parent's budget goes away.
  void AbandonSubagents();
  // The user's answer to an approval request: the call runs (once, or every
  // command like it for the rest of the session) or is refused.
  // Returns false if nothing waits under that id (answered, or cancelled).
  bool AnswerApproval(const std::string& execution_id, ApprovalAnswer answer);
  // With approval "prompt": told of each command that waits for an answer.
  std::function<void(const ApprovalRequest&)> on_approval_request;
  // Set by a front end that can ask the user: an MCP server's form, asked
  // while its call's deadline is held. Unset: every form is declined.
  std::function<void(const McpQuestionRequest&)> on_mcp_question;
  // The user's answer: "accept" (content_json: the values), "decline" or
  // "cancel". False when nothing waits under those ids.
  bool AnswerMcpQuestion(const std::string& execution_id, const std::string& question_id, const std::string& action,
                         const std::string& content_json);
  // Saves an "always" answer (config/approval_store.h): key, and whether
  // for every workspace. Its failure is recorded; the call runs anyway.
  std::function<Status(const std::string& key, bool every_workspace)> on_approval_saved;
  // The user's saved approvals that answer in this session.
  void AddSavedApprovals(const std::vector<std::string>& keys) { approvals_.AddSaved(keys); }
  // Told of each gate event, after the ledger recorded it.
  std::function<void(const GateEvent&)> on_gate_event;
  // The symbol index (index_calls.cc): brings .odin/index.db up to date
  // (from scratch with rebuild) in read-only workers; done hears how it
  // went and how many files were parsed. The query tools do this
  // themselves before they answer.
  void RefreshSymbolIndex(bool rebuild, std::function<void(const Status&, size_t parsed)> done);
  // The index, once a refresh has opened it (else null).
  index::IndexDb* symbol_index();
  // The repository map: the last one made, at once ("" before the index's
  // first refresh ends). A refresh starts when files changed since, and a
  // new map is made once it ends.
  std::string RepoMap(size_t budget_tokens) override;
  void SetMutationHold(const std::string& agent_id, MutationHold hold) override;
  // Told of the index's one-line notes (a rebuilt index file).
  std::function<void(const std::string& note)> on_index_note;
  // Called for each worker's Hello (e.g. to warn that it runs unsandboxed).
  std::function<void(const v1::Hello&)> on_worker_ready;

 private:
  struct Held;  // a write waiting for its validation (coordinator.cc)
  struct Call {
    ToolCall call;          // what was asked (the planner's)
    WorkerRequest request;  // how it runs, as the coordinator decides
    CallHandlers handlers;
    // What the registry (tools/tool_catalog.h) says the tool is: looked up
    // once, the first time it is asked. The coordinator dispatches on it,
    // never on the tool's name.
    ToolHandler handler() const {
      if (handler_ == ToolHandler::kUnknown) handler_ = HandlerOf(call.tool);
      return handler_;
    }
    // What a refusal calls it: "command" for a command, else the tool.
    std::string shown_name() const { return handler() == ToolHandler::kCommand ? "command" : call.tool; }
    mutable ToolHandler handler_ = ToolHandler::kUnknown;
    SteadyTime dispatched_at{};
    bool started = false;
    bool remote = false;             // ran on another host's worker: its changes are looked for in full
    std::string write_path;          // the file a writing tool holds the lock of
    std::string output;              // the first artifact_cap bytes of output, in arrival order
    bool validate = true;            // false for a rollback, which is not validated
    std::string approval_key;        // waiting for the user: what "for the session" would allow
    std::string approval_saved_key;  // and what "always" would save ("" for none)
    std::unique_ptr<ProtectedSnapshot> protected_before;  // a writable command: the protected files before it
    // odin exec's command, dispatched before its worker said whether it has
    // the overlay: the snapshot is taken if it has not (OnWorkerReady).
    bool protected_deferred = false;
    // For lsp_check: the file, and the content validated.
    std::string check_path;
    std::string check_content;
    std::unique_ptr<Held> held;      // the write this lsp_check validates
    std::string validates_command;   // the command whose changed file this lsp_check validates
    bool tracked = false;            // a command whose changes are tracked
    int64_t dispatched_wall_ns = 0;  // CLOCK_REALTIME when it went to its worker
    // CLOCK_REALTIME_COARSE then, the clock file times are taken from (0:
    // not known, a resumed command's).
    int64_t dispatched_coarse_ns = 0;
    uint64_t start_change = 0;
    std::vector<std::string> external;  // paths found changed (by no call) when it started, absolute
    Budget* run_budget = nullptr;       // the run's budget, for AgentTool (charged already)
    bool hooks_pending = false;         // waiting for its PreToolUse hooks
    bool mcp_waiting = false;           // waiting for its MCP server to list its tools
    std::string web_url;                // WebFetch: its URL, as gate 8 parsed it (the cache's key)
    std::string span_file_sha256;       // EditSymbol: the file as its span was checked (once resolved)
    std::vector<std::string> evidence;  // strict: the analysis ids a write cites (taken out of its arguments)
    BreakerHolds breakers;              // the breakers that let it through (gate 7)
    // The arguments, parsed once at Submit (null for Odin's own calls,
    // which never pass there). Handlers that run in the coordinator read
    // this; the gates and the worker read the typed input
    // (request.typed->input(), tools/tool_input.h).
    std::shared_ptr<nlohmann::json> args;
    // A background command (run_in_background): its caller was answered
    // once it started (answered); its end is the job's.
    bool background = false;
    bool answered = false;
    // CommandOutput waiting for a job's end, StopCommand for its stop: the job.
    std::string waits_for_job;
    Call();
    ~Call();
    Call(Call&&) noexcept;
    Call& operator=(Call&&) noexcept;
  };
  struct AgentState {
    std::unique_ptr<FileCache> cache;
    TodoList todos;
    AgentProfileState profile;  // the memory-forced and strict profiles' (gates/call_gates.h)
    // What the strict profile accepts as evidence, by execution id: its
    // analysis executions (symbols, references, impact, outline) with the
    // files each answer covered, and its Reads with the file read (absolute
    // paths), each with the message it belongs to.
    struct Evidence {
      std::string message_id;
      bool read = false;  // a Read: evidence only for a file the index does not parse
      std::set<std::string> files;
    };
    std::map<std::string, Evidence> evidence;
  };
  Status OnDispatch(const WorkerRequest& request, const std::string& worker_id) override;
  void OnProgress(const v1::ToolProgress& progress) override;
  void OnResult(const v1::ToolResult& result) override;
  void OnWorkerReady(const v1::Hello& hello) override;
  void OnWorkerRefused(const std::string& peer, const std::string& reason) override;
  bool OnWorkerMessage(const std::string& worker_id, const std::string& execution_id, const v1::Envelope& env) override;
  void OnMcpListing(const std::string& lane, const std::string& output_json) override;
  // An MCP server's elicitation during execution_id, its worker's call;
  // false if that worker has no business asking.
  bool OnMcpQuestion(const std::string& execution_id, const v1::McpQuestion& question);
  // Sends a form's answer to the server's worker, recorded (recorded: the
  // question's words and fields; answered_by "user" or "headless").
  void AnswerMcpQuestionAs(const std::string& execution_id, const std::string& question_id, const std::string& recorded,
                           const std::string& action, const std::string& content_json, const char* answered_by);

  // A running subagent (subagents.cc), by its AgentTool execution.
  struct Subagent {
    std::string agent_id;  // "sub_..."
    std::string parent_agent;
    Mode mode = Mode::kAsk;
    Budget* budget = nullptr;  // the parent's run; outlives the AgentTool call
    int64_t started_at_ms = 0;
    std::vector<std::string> calls;          // its tool calls, in order
    std::map<std::string, std::string> ids;  // the id it proposed -> the id we gave the call
    std::map<uint64_t, bool> model_calls;    // model calls in flight (ids)
    // A custom agent's type; its tools, and those of the message that
    // started it (none: every tool of its mode).
    std::string agent_type;
    std::vector<std::vector<std::string>> tool_lists;
  };
  // Checks an AgentTool call and makes it a task for a subagent worker.
  Status PrepareSubagent(Call& c, Budget* budget);
  void HandleModelRequest(const std::string& execution_id, const v1::ModelRequest& request);
  void HandleSubagentCall(const std::string& execution_id, const v1::SubagentCall& call);
  // A subagent would finish: its SubagentStop hooks run, and it hears what
  // they decided (a block sends it back to work).
  void RunSubagentStopHooks(const std::string& execution_id, const v1::SubagentCall& call);
  // The AgentTool call ended: the subagent's leftovers stop, and its answer
  // gets the ledger's report of its calls.
  void FinishSubagent(const std::string& execution_id, v1::ToolResult* result);

  AgentState& Agent(const std::string& agent_id);
  // A compaction's record names the files whose bytes the model no longer
  // sees: they leave that agent's file cache.
  void ForgetCompactedFiles(const std::string& agent_id, const std::string& detail_json);
  // Ends a call without a worker (refused by a gate, or run here).
  void EndHere(const std::string& id, int tool_status, const Status& why, const std::string& text = "",
               int exit_reason = 1 /* EXIT_REASON_NORMAL */);
  void RunTodoWrite(const std::string& id);
  // Background commands (background_commands.cc).
  Status BackgroundAllowed(const Call& c) const;
  void StartBackground(Call& c);
  void AnswerBackgroundStart(Call& c);
  // A background command's end came (Deliver): recorded and told to those
  // who wait; true when its caller was answered already.
  bool EndBackground(const Call& c, const v1::ToolResult& r);
  // What the tracker found while background commands run: the newest's.
  bool RecordBackgroundChanges(const ChangeSet& changes);
  // The job a CommandOutput or StopCommand call names, in edit mode and the
  // caller's to reach (its waits_for_job set); else null, the call ended
  // with why. wait_seconds: CommandOutput's, null for StopCommand.
  const BackgroundJob* JobOfCall(Call& c, double* wait_seconds);
  void RunCommandOutput(const std::string& id);
  void RunStopCommand(const std::string& id);
  void AnswerJobWaiter(const std::string& waiter);
  void AnswerDueJobWaiters();
  void RunMemoryQuery(const std::string& id);
  void RunSkill(const std::string& id);
  // The symbol index (index_calls.cc, index_refresh.h): made on first use;
  // a query tool's call waits for it to be up to date (IndexRefresh::Wait),
  // then is answered here.
  IndexRefresh& Index();
  void AnswerIndexQuery(Call& c);
  // `references` (index_calls.cc): asks the language server that serves the
  // symbol's file, through the lsp host; false when none does (the index
  // answers). Its answer, or the index's when the server gives none, ends c.
  bool AskServerForReferences(Call& c);
  void AnswerWithServerReferences(const std::string& id, const index::ReferenceTarget& target, const v1::ToolResult& r);
  // Ends an index query with its answer; what it covered is evidence.
  void EndIndexQuery(Call& c, StatusOr<index::QueryAnswer> answer);
  // A changed file (absolute, or relative to the workspace) is parsed again
  // at the next refresh.
  void MarkIndexDirty(const std::string& path);
  // Sends a call to the pool if the gates of its turn (RunTurnGates: a
  // write's read-before-edit, the breakers of its tool and worker kind) let
  // it through; else ends it. A writer waits for its turn in the lane
  // first; InitTool runs here.
  void Dispatch(Call& c);
  void DispatchNow(Call& c);
  // What a call that passed the gates before the hooks does next: the
  // approval it needs (if any), then the rest of Submit (Proceed).
  void AfterPreToolUse(const std::string& id, std::optional<ApprovalNeed> need, const HookOutcome& hooks);
  void Proceed(Call& c);
  // A writing tool's call, its file judged by the gates (c.write_path): its
  // place in the file's write queue. EditSymbol's file, found by the index,
  // meets the same judgment (JudgeWriteTarget) first.
  void QueueWrite(Call& c);
  void QueueEditSymbolWrite(Call& c);
  // lsp_check asked by the model: the file read here, then SubmitLspCheck.
  void ProceedLspCheck(Call& c);
  // EditSymbol (index_calls.cc): finds the symbol's span in the index,
  // refuses drift, and gives the worker the file and span to splice.
  void PrepareEditSymbol(Call& c);
  // The strict profile (index_calls.cc): takes a write's "evidence" out of
  // its arguments (before its own parser sees them), and judges it against
  // the file the write resolved to.
  // The gates a taken call meets, in order, up to its dispatch (Submit
  // after parsing the arguments; a held MCP call once its server listed
  // its tools). canonical: whether the arguments parsed.
  void Admit(Call& c, const Status& canonical);
  // The call's typed request (made on first use): the typed input and what
  // the coordinator adds for the worker (WebFetch's options, AgentTool's
  // task), merged into the worker's request by the pool.
  static v1::ToolRequest& Typed(WorkerRequest& request);
  // cited: the analysis ids the call cites; existed: the file was there
  // before the call.
  Status CheckEvidence(const Call& c, const std::vector<std::string>& cited, const std::string& path, bool existed);
  // A command's changes to existing files the call's evidence does not
  // cover are put back (from the tracker's before-images) and leave the
  // change set; the result says which, and which could not be.
  void HoldToEvidence(const Call& c, ChangeSet* changes, v1::ToolResult* result);
  // A mutation hold (reviewers, workflows; holds_): a write to a path it does
  // not allow is refused (the refusal's text); a command's changes there are
  // put back (HoldCommand).
  Status CheckHold(const Call& c, const std::string& path);
  void HoldCommand(const Call& c, ChangeSet* changes, v1::ToolResult* result);
  // Runs the call's PostToolUse hooks before its caller hears of it.
  void WrapForPostToolUse(Call& c);
  // The MCP servers' port (mcp_servers.cc): their McpListTools executions,
  // the calls that waited for them, the news of each.
  McpServers::Port McpPort();
  // What the gates of gates/call_gates.h (the safeguards included) read
  // of the coordinator, for c.
  CallGateContext GateContext(Call& c);
  WriteTargetContext WriteContext(Call& c);
  // InitTool (init_tool.cc): writes ODIN.md here, in the coordinator, as
  // WriteFile would (the workers' sandboxes keep it read-only), once the
  // read-before-edit gate has passed.
  void RunInitTool(Call& c);
  // Approval of need.what (shown to the user) for need.reason; its keys are
  // what "for the session" allows. *wait is set when the call waits for the
  // user's answer (AnswerApproval).
  Status AskApproval(Call& c, const ApprovalNeed& need, bool* wait);
  bool IsSubagent(const std::string& agent_id) const;
  // Submits the lsp_check of the call `id` (a model's lsp_check, or one made
  // for a write) on path's content.
  void SubmitLspCheck(const std::string& id, const std::string& path, std::string content);
  void StartValidation(Call write, const v1::ToolResult& result, const Status& recorded);
  void FinishLspCheck(Call check, v1::ToolResult result);
  Status RecordEnd(Call& c, const v1::ToolResult& r, const ValidationRecord* validation = nullptr,
                   const std::vector<DiagnosticRecord>& diagnostics = {}, std::vector<Artifact> artifacts = {});
  // Tells the caller, and gives the file's next write its turn.
  void Deliver(Call& c, const v1::ToolResult& r, const Status& recorded);
  // Dispatches the next write queued on path (its turn's gates, then the
  // worker); one they end gives the next its turn, until one is in flight or
  // none is left.
  void DispatchNextWrite(const std::string& path);
  void ApplyToCache(const Call& c, const v1::ToolResult& r);
  std::string ResultJson(const Call& c, const v1::ToolResult& r) const;

  // Change tracking (command_changes.cc).
  struct CommandHold;  // a command whose changed files are being validated
  bool TracksChanges(const Call& c) const;
  // A command, or a hook, that runs where the workspace is writable.
  bool CanWriteWorkspace(const Call& c) const;
  // Whether a command judged one that only reads may run in the workers'
  // read-only view (ToolCall::read_only_view).
  bool ReadOnlyViewUsable(const Call& c) const;
  // A tracked command starts: the tree's state before it (and what changed
  // since the last look, by no call: external).
  void StartTracking(Call& c);
  // The tracker's first look at the tree: the reference later looks are
  // compared with. Takes the one under way in the background, if any,
  // waiting for it to end.
  void FirstLook();
  std::unique_ptr<ChangeTracker> NewTracker() const;
  void StartFirstLook();
  // Without watches (first_look.cc): the look at the paths an overlay lands on, before it lands
  // (what changed there: deletions into meanwhile, the rest into looked), and after.
  void LookWhereItLands(Call& c, const std::string& upper, std::set<std::string>* meanwhile,
                        std::set<std::string>* looked);
  void TakeLandedWithoutWatches(const OverlayApplied& applied);
  // A command that ran over the workspace overlay: reads its upper
  // directory and applies it (command_changes.cc).
  OverlayApplied ApplyCommandOverlay(Call& c);
  // What did not land from it (conflicts, protected paths, errors): gate
  // events, and a note for the model at the end of the output.
  void NoteOverlayOutcome(const Call& c, const OverlayApplied& applied, v1::ToolResult* result);
  // Records a change set as mutations of `source` by execution_id (""
  // for external changes), marks the paths stale in every cache, and fills
  // *result's changes. Returns the files to validate.
  struct ChangedFile {
    std::string path;  // absolute
    bool existed = false;
    std::optional<std::string> before;
    std::string content;
    bool unvalidatable = false;  // too big, or changed again while read: not_validated
  };
  std::vector<ChangedFile> RecordChanges(const std::string& execution_id, const std::string& agent_id,
                                         const char* source, const ChangeSet& changes, v1::ToolResult* result);
  // The protected-path index brought up to date from the tracker's word (false: refresh it yourself).
  bool RefreshProtectedIndex(const Call& c);
  // Takes c.protected_before: what the protected files hold before it runs.
  void SnapshotProtectedFor(Call& c);
  std::set<std::string> PutBackProtected(Call& c, const v1::ToolResult& r, std::optional<v1::ToolResult>* amended);
  // The commands' proxy (commands_network.cc): reads what it said (records,
  // questions), records what ended, and, at a command's end, its
  // connections and a note on its result naming each host refused.
  void ServiceProxy();
  void NoteNetwork(const Call& c, const v1::ToolResult& r, std::optional<v1::ToolResult>* amended);
  void RecordNetwork(const std::string& agent_id, const std::vector<NetworkAggregate>& aggregates);
  void AnswerProxy(uint64_t connection, bool allow);
  // A host no rule names: asked of the user (one question a host, a few at
  // once), else allowed by an earlier answer or refused.
  void AskProxyQuestion(uint64_t connection, const std::string& target, const std::string& execution);
  // Tells the proxy the command workers' names when they changed.
  void TellProxyClients();
  // A proxy question the user answered (AnswerApproval with its id).
  bool AnswerProxyQuestion(const std::string& id, ApprovalAnswer answer);
  // The writers' lane (writers_lane.h), while changes are tracked: which kind of writer a call is
  // (LaneCaller: a command over an overlay of its own, SharesLane, has what changed after it started
  // as a conflict, changes_).
  bool UsesLane(const Call& c) const;
  bool SharesLane(const Call& c) const;
  WritersLane::Caller LaneCaller(const Call& c) const;
  void EnterLane(Call& c);
  // c's turn is over: the calls waiting for the lane go, as far as it admits
  // them (PumpLane).
  void LeaveLane(Call& c);
  // Forgets the change numbers no command can ask about any more (a
  // command asks only of those after its start; one not dispatched yet
  // starts after all), once there are many: a long session's numbers do
  // not grow without end.
  void ForgetOldChangeNumbers();
  void PumpLane();
  // What changed while no call of ours could write: recorded as external
  // changes, staled in the caches. Called at each call's boundary; a cheap
  // look while the tracker's watches hold.
  void DetectExternalChanges(const std::string& agent_id);
  // The tracker's word on why the tree is not watched, said once per cause
  // (a gate event the report shows).
  void NoteTrackerCoverage();
  // Records external changes; their absolute paths go to *paths if given.
  void RecordExternal(const std::string& agent_id, const ChangeSet& external, std::vector<std::string>* paths);
  void RecordFileToolWrite(const Call& c, const v1::ToolResult& r);
  // A gate event for the ledger only (not the session's event stream).
  void AppendGateEvent(const GateEvent& g);
  void RecordGitHead(const std::string& agent_id, const std::string& execution_id);
  // Tells the tracker of a file read (a later change has its bytes before).
  void NoteReadForTracking(const v1::FileSnapshot& read);
  // Validates a command's changed files; its caller hears of it after.
  void ValidateCommandChanges(Call command, v1::ToolResult result, const Status& recorded,
                              std::vector<ChangedFile> files);
  void FinishCommandCheck(const std::string& command_id, const v1::ToolResult& check);
  // An lsp_check of a file a command changed, under parent (the command);
  // validates_command: its verdict goes to the command's result.
  void CheckChangedFile(ChangedFile& f, const std::string& agent, std::optional<CallMode> mode,
                        const std::string& parent, bool validates_command);

  CoordinatorOptions o_;
  Ledger* ledger_ = nullptr;
  Clock* clock_;
  WorkerPool pool_;
  std::string session_id_;
  std::map<std::string, Call> calls_;         // by execution id
  std::map<std::string, AgentState> agents_;  // by agent id
  FileWriteQueues write_queues_;              // one write per file at a time
  // The safe file layer over the workspace and over Odin's state
  // (workspace/workspace_files.h): every host-side access to either goes
  // through these. Opened at first use; null when the directory cannot be
  // opened (then nothing is touched there).
  const WorkspaceFiles* WorkspaceLayer();
  const WorkspaceFiles* StateLayer();
  // A path in the state directory as the user is shown it.
  std::string ShownStatePath(const std::string& rel) const;
  std::optional<WorkspaceFiles> workspace_files_, state_files_;
  std::unique_ptr<ProtectedIndex> protected_index_;  // where nested git directories and instructions are
  ApprovalGate approvals_;                           // what the user allowed for the session; the policy
  std::unique_ptr<ChangeTracker> tracker_;           // change tracking (command_changes.cc)
  // odin exec over the overlay put the first look off (StartTracking); a tool worker's
  // Hello without the overlay makes it (OnWorkerReady), before its first command.
  bool first_look_deferred_ = false;
  // The first look is wanted (ModelRequestStarted): the next Poll that may wait starts it
  // on a thread (looking_), whose tracker and protected-path index FirstLook takes.
  bool look_wanted_ = false;
  FirstLookThread looking_;
  // Without watches (coverage lost): a command landed since the tracker's last look, so the
  // next Poll that may wait looks at the tree on looking_ (a later look, whose findings
  // FirstLook records as external); tree_fresh_: a whole-tree look was made since the last
  // command's start, which then need not make one.
  bool later_look_due_ = false;
  bool later_look_ = false;
  bool tree_fresh_ = false;
  std::vector<std::string> unshown_external_;  // what a later look found, for the next call's result
  BackgroundTasks removals_;                   // of what commands' overlays used; waited for at the end
  WorkerCapabilities capabilities_;            // the overlay and the read-only view, as the writers' Hellos said
  BackgroundJobs jobs_;                        // the background commands (background_jobs.h)
  NetworkLog network_;                         // the commands' connections (network_log.h)
  // The proxy's questions waiting for the user: the approval's id -> the
  // connection, the host:port asked for and the agent.
  struct ProxyQuestion {
    std::vector<uint64_t> connections;  // every request of its command for it while it waits
    std::string target;
    std::string agent_id;
    std::string execution_id;
    SteadyTime asked{};
  };
  std::map<std::string, ProxyQuestion> proxy_questions_;
  std::set<std::string> proxy_refused_;  // keys refused without asking: recorded once
  // The command a connection asked about was the question's: its record
  // is that command's, whatever its worker runs by then.
  std::map<uint64_t, std::string> proxy_asked_by_;
  std::set<std::string> proxy_clients_;  // the command workers' proxy names the proxy was last told
  bool shut_down_ = false;               // the pool was shut down: nothing runs any more
  WritersLane lane_;                     // which writing calls may run now (writers_lane.h)
  ChangeNumbers changes_;                // every change recorded, numbered (change_numbers.h)
  ChangeDigest digest_;                  // the workspace's content as the changes left it (each result carries it)
  std::string coverage_lost_;            // the tracker's unwatched() as last said
  std::map<std::string, std::unique_ptr<CommandHold>> command_holds_;  // by command execution id
  ValidationGate validation_;                                          // the files' verdicts, and the blocked state
  uint64_t event_seq_ = 0;
  ModelAccess model_;
  std::string prompt_id_;                              // the hooks' prompt_id: the last user message's id
  std::map<std::string, Subagent> subagents_;          // by AgentTool execution id
  std::map<std::string, std::string> subagent_calls_;  // a subagent's call -> its AgentTool execution
  McpServers mcp_;
  std::string mcp_news_;  // for the main agent's conversation (TakeMcpNews)
  // MCP forms asked of the user: (execution, question) -> server, field names.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> mcp_questions_;
  BreakerBank breakers_;                 // gate 7
  bool init_active_ = false;             // /init is running: InitTool may write ODIN.md
  MutationHolds holds_;                  // the reviewers' and workflows', by agent
  WebPageCache web_pages_;               // WebFetch's pages fetched in the last web_cache_ttl
  std::unique_ptr<IndexRefresh> index_;  // the symbol index (index_calls.cc)
};

}  // namespace odin
