#include "session/agent_session.h"

#include "gates/tool_rules.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "config/config_loader.h"
#include "llm/demo_model.h"
#include "llm/http_llm_client.h"
#include "llm/images.h"
#include "planner/instructions.h"
#include "session/resume.h"
#include "session/rewind.h"
#include "odin/v1/worker.pb.h"
#include "base/file_util.h"
#include "base/ids.h"
#include "workspace/isolated_views.h"
#include "workspace/overlay_changes.h"
#include "workspace/workspace_files.h"
#include "tools/exec_command.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

// The writes of the session's commands a crash cut off, waiting in their
// overlays: applied as theirs, validated before the model hears of them,
// and handed to the next message (its completion runs the checks for them).
// Not where a workflow's or a reviewer's hold could have judged them (the
// hold went with the process), nor after the machine restarted (same_boot
// false: the overlay is volatile, its files may not have reached the disk).
// Returns what the model is told.
StatusOr<std::string> ApplyInterruptedWrites(Coordinator& coordinator, Ledger& ledger, const std::string& session_id,
                                             const std::string& state_dir, bool may_hold, bool same_boot,
                                             Agent* agent) {
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger.ListSessionExecutions(session_id));
  StatusOr<WorkspaceFiles> state = WorkspaceFiles::Open(state_dir);
  if (!state.ok()) return std::string();
  std::string told;
  for (const ExecutionRow& row : rows) {
    const std::string& id = row.start.execution_id;
    if (row.end) continue;
    StatusOr<std::vector<std::string>> upper = state->List("overlay/" + id + "/u");
    if (!upper.ok() || upper->empty()) continue;
    if (std::string why = WhyAResumeLeavesWrites("agent", row.end.has_value(), same_boot, may_hold); !why.empty()) {
      told += " What " + id + " wrote was not applied (" + why + "): it is in .odin/overlay/" + id + "/u.";
      continue;
    }
    auto applied = std::make_shared<std::optional<v1::ToolResult>>();  // outlives an early return
    if (!coordinator.ApplyInterruptedCommand(
            row.start, {nullptr, [applied](const v1::ToolResult& r, const Status&) { *applied = r; }})) {
      // Its call is closed below: no later resume applies them either.
      told += " What " + id +
              " wrote was not applied (the strict profile's holds went with the process, or another process "
              "holds its directory): it is in .odin/overlay/" +
              id + "/u.";
      continue;
    }
    while (!*applied) RETURN_IF_ERROR(coordinator.Poll(milliseconds(100)));
    const v1::ToolResult& result = **applied;
    agent->AddInheritedChanges(id, ChangesOf(kExecuteCommandTool, result, coordinator.workspace()));  // a hook's too
    std::vector<std::string> files;
    for (const v1::FileChange& fc : result.changes()) {
      if (fc.file_type() != "directory") files.push_back(DisplayPath(fc.path(), coordinator.workspace()));
    }
    for (const v1::IgnoredChanges& ic : result.ignored_changes()) {
      files.push_back(std::to_string(ic.entries()) + " entries under " + ic.path() + " (ignored by git)");
    }
    // What did not land (conflicts, protected paths) is in the result's note.
    std::string note = result.output_tail();
    if (files.empty() && note.empty()) continue;
    told += " What " + id + " wrote before it ended was applied now, recorded as its changes: ";
    if (files.empty()) told += "nothing landed.";
    for (size_t i = 0; i < files.size() && i < 20; ++i) told += (i == 0 ? "" : ", ") + files[i];
    if (!files.empty()) told += files.size() > 20 ? " and " + std::to_string(files.size() - 20) + " more." : ".";
    std::replace(note.begin(), note.end(), '\n', ' ');
    if (note.size() > 2000) note = note.substr(0, 2000) + "...";
    if (note.find_first_not_of(' ') != std::string::npos) told += " What did not land:" + note;
  }
  return told;
}

}  // namespace

AgentSession::~AgentSession() {
  // Background commands end first, each end recorded while those who hear
  // of it are there.
  if (runtime_) runtime_->coordinator().EndBackgroundCommands("the session ended", seconds(10));
  // SessionEnd hooks run to their end (each has its timeout) before the
  // workers go.
  if (runtime_ && agent_ && runtime_->coordinator().HasHooks(HookEvent::kSessionEnd)) {
    bool ended = false;
    json fields = {{"reason", end_reason_}};
    runtime_->coordinator().RunHooks({HookEvent::kSessionEnd, "main", std::nullopt, "", "", fields.dump()},
                                     [&ended](const HookOutcome&) { ended = true; });
    while (!ended && runtime_->coordinator().Poll(milliseconds(100)).ok()) {
    }
  }
  // Calls still running end while the agent and the model client can still
  // hear of them: subagents' model calls are dropped through the live client,
  // then the workers go.
  if (runtime_) {
    runtime_->coordinator().AbandonSubagents();
    // The change tracker's watches are released (the kernel's grace period
    // for them), and the ledger's last records reach the disk, while the
    // workers exit.
    runtime_->coordinator().StopTracking();
    runtime_->coordinator().Shutdown(milliseconds(200), [this] { runtime_->FlushLedger(); });
  }
  agent_.reset();
  client_.reset();
  http_.reset();
}

StatusOr<std::unique_ptr<AgentSession>> AgentSession::Start(const AgentSessionFlags& flags, AgentObserver* observer) {
  std::unique_ptr<AgentSession> s(new AgentSession());
  ASSIGN_OR_RETURN(Workspace ws, FindWorkspace(flags.runtime.dir));
  std::map<std::string, std::string> env = EnvironmentMap();
  std::shared_ptr<const LoadedConfig> given = flags.config;
  if (!given) {
    ASSIGN_OR_RETURN(LoadedConfig own, LoadConfig(ws, env));
    PrintConfigNotices(own);
    given = std::make_shared<const LoadedConfig>(std::move(own));
  }
  const LoadedConfig& loaded = *given;
  const Config& config = loaded.config;
  ASSIGN_OR_RETURN(s->llm_, ResolveLlm(flags.llm, config, env));

  std::string profile_name = flags.profile.empty() ? config.profile : flags.profile;
  Profile profile;
  if (!ParseProfile(profile_name, &profile)) {
    return Status::InvalidArgument("profile '" + profile_name + "'", "must be fast, auto, safe or strict");
  }
  std::string workflow_name = flags.workflow.empty() ? config.workflow : flags.workflow;
  std::optional<Workflow> workflow = ParseWorkflow(workflow_name);
  if (!workflow) {
    return Status::InvalidArgument("workflow '" + workflow_name + "'",
                                   std::string("must be one of ") + WorkflowNames());
  }
  // The budget, checked before anything starts.
  BudgetLimits budget;
  budget.turns = flags.max_turns > 0 ? flags.max_turns : config.max_turns;
  budget.tool_calls = flags.max_tool_calls > 0 ? flags.max_tool_calls : config.max_tool_calls;
  budget.tokens = flags.max_tokens > 0 ? flags.max_tokens : config.max_tokens;
  double usd = flags.max_budget_usd > 0 ? flags.max_budget_usd : config.max_budget_usd;
  budget.cost_microusd = static_cast<int64_t>(std::llround(usd * 1e6));
  double wall = flags.max_wall_seconds > 0 ? flags.max_wall_seconds : static_cast<double>(config.max_wall_seconds);
  budget.wall = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(wall));
  const PriceTable& prices = s->llm_.prices;
  if (budget.cost_microusd > 0 && prices.count(s->llm_.model) == 0 && prices.count("*") == 0) {
    // Without a price every call costs 0, and the limit could never stop anything.
    return Status::InvalidArgument("max_budget_usd",
                                   "llm.prices (the user's odinconfig.json, or a trusted workspace's) has no price "
                                   "for model '" +
                                       s->llm_.model + "' (nor \"*\"), so the cost cannot be counted");
  }
  if (flags.budget_share > 1) {
    // An attempt's: attempts.budget where set, else its share of the message's.
    int64_t n = flags.budget_share;
    const Config::AttemptBudget& own = config.attempt_budget;
    if (budget.tokens > 0) budget.tokens = std::max<int64_t>(1, budget.tokens / n);
    if (budget.tool_calls > 0) budget.tool_calls = std::max<int64_t>(1, budget.tool_calls / n);
    if (budget.cost_microusd > 0) budget.cost_microusd = std::max<int64_t>(1, budget.cost_microusd / n);
    if (own.max_tokens > 0) budget.tokens = own.max_tokens;
    if (own.max_tool_calls > 0) budget.tool_calls = own.max_tool_calls;
    if (own.max_budget_usd > 0) budget.cost_microusd = static_cast<int64_t>(std::llround(own.max_budget_usd * 1e6));
  }
  s->budget_ = budget;
  RuntimeFlags runtime = flags.runtime;
  if (flags.fork_session && flags.resume.empty() && !flags.continue_last) {
    return Status::InvalidArgument("--fork-session", "goes with -r SESSION_ID or -c: which session to copy");
  }
  if (flags.isolated && (!flags.resume.empty() || flags.continue_last) && !flags.fork_session) {
    return Status::InvalidArgument("--isolated",
                                   "starts a session (or, with --fork-session, a copy of one); one resumed runs where "
                                   "it ran before");
  }
  if (!flags.resume.empty() || flags.continue_last) {
    ASSIGN_OR_RETURN(runtime.resume_session, PickResumableSession(ws.ledger_path, flags.resume, flags.continue_last));
  }
  // An isolated session works in a view of its own; one taken up again, in
  // the view it ran in.
  std::string new_view;
  if (!runtime.resume_session.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<Ledger> ledger, Ledger::Open(ws.ledger_path, Redactor()));
    StatusOr<SessionView> ran = FindSessionView(ledger.get(), ws.state_dir, runtime.resume_session);
    // Fails closed: a session whose view cannot be told must not run here.
    if (!ran.ok() && ran.status().code() != StatusCode::kNotFound) return ran.status();
    if (ran.ok() && ran->session_id != runtime.resume_session) {
      return Status::FailedPrecondition("session " + runtime.resume_session, "its view record is ambiguous");
    }
    if (ran.ok()) {
      if (!ran->applied.empty() || ran->discarded || !ran->tree_exists) {
        return Status::FailedPrecondition("session " + ran->session_id,
                                          "ran in a view that was " +
                                              std::string(!ran->applied.empty() ? "applied" : "discarded") +
                                              ": it cannot be taken up again");
      }
      if (flags.fork_session) {
        return Status::InvalidArgument(
            "--fork-session",
            "session " + ran->session_id + " ran in a view: it cannot be copied (apply or discard it)");
      }
      ws = ViewWorkspace(ws, ran->view);
    }
  }
  if (flags.isolated && ws.view.empty()) {
    RETURN_IF_ERROR(PrepareStateDir(ws));
    ASSIGN_OR_RETURN(View view, MakeView(ws, static_cast<uint64_t>(config.isolation_max_view_mb) << 20));
    ws = ViewWorkspace(ws, view);
    new_view = view.id;
  }
  if (flags.fork_session) {
    StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::Open(ws.ledger_path, Redactor());
    StatusOr<std::string> fork =
        ledger.ok() ? ForkSession(ledger->get(), runtime.resume_session, RealClock::Get()->WallMillis())
                    : StatusOr<std::string>(ledger.status());
    if (!fork.ok()) {
      // A view made for the copy is no session's yet: it goes.
      if (!new_view.empty()) (void)RemoveView(ws.state_dir, new_view);
      return fork.status();
    }
    runtime.resume_session = *fork;
  }
  runtime.validate = true;
  runtime.profile = profile_name;
  // The HTTP client (it loads libcurl) before the runtime: the first model
  // request waits for it, the workers are needed only after the first
  // answer, and their start would slow the loading down on a busy machine.
  s->http_ = std::make_unique<HttpClient>();
  StatusOr<std::unique_ptr<Runtime>> started = Runtime::Start(runtime, ws, config);
  if (!started.ok() && !new_view.empty()) (void)RemoveView(ws.state_dir, new_view);
  ASSIGN_OR_RETURN(s->runtime_, std::move(started));
  if (!new_view.empty()) {
    // Written before the session can do anything, or it does not start.
    RETURN_IF_ERROR(s->runtime_->ledger().AddGateEvent({NewId("gate"), s->runtime_->coordinator().session_id(), "main",
                                                        "", kIsolatedViewEvent, "",
                                                        nlohmann::json({{"view", new_view},
                                                                        {"workspace", ws.view_of},
                                                                        {"network", runtime.network},
                                                                        {"sandbox", runtime.sandbox}})
                                                            .dump(),
                                                        RealClock::Get()->WallMillis()}));
  }
  if (s->llm_.endpoint.provider == "demo") {
    s->client_ = std::make_unique<DemoModel>();
  } else {
    const std::string& provider = s->llm_.endpoint.provider;
    auto format = provider == "anthropic"          ? NewAnthropicFormat()
                  : provider == "openai-responses" ? NewOpenAiResponsesFormat()
                                                   : NewOpenAiFormat();
    s->client_ = std::make_unique<HttpLlmClient>(s->llm_.endpoint, std::move(format), s->http_.get(), RealClock::Get(),
                                                 s->llm_.retry, s->llm_.timeout);
  }
  AgentOptions o;
  o.provider = s->llm_.endpoint.provider;
  o.model = s->llm_.model;
  o.workspace = ws.root;
  o.cwd = ws.cwd;
  std::vector<std::string> refused;
  const char* home = getenv("HOME");
  o.instruction_sources = {loaded.claude_sha256, loaded.user_claude_md,
                           UnreadablePatterns(config.permissions, ws.root, home != nullptr ? home : "")};
  o.instructions = LoadInstructions(ws.root, ws.cwd, &refused, o.instruction_sources);
  // A refusal by the safe file layer: one line, and a gate event; the
  // session goes on without the file.
  for (const std::string& why : refused) {
    std::cerr << "odin: instructions not read: " << why << "\n";
    s->runtime_->coordinator().RecordGateEvent("main", "", "workspace_file_refused", "",
                                               nlohmann::json({{"what", "instructions"}, {"why", why}})
                                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  o.budget = budget;
  o.stall = config.stall;
  o.tool_timeouts = config.tool_timeouts;
  o.max_tokens = s->llm_.max_tokens;
  o.temperature = s->llm_.temperature;
  o.prices = s->llm_.prices;
  o.profile = profile;
  if (config.context_repo_map.value_or(profile == Profile::kStrict)) {
    o.repo_map_tokens = static_cast<size_t>(config.context_repo_map_tokens);
  }
  o.checks = config.checks;
  o.fail_open = config.validation.fail_open;
  o.context_window = s->llm_.context_window;
  o.compact_at = s->llm_.compact_at;
  o.utility_model = s->llm_.utility_model;
  o.transcript_path = s->runtime_->coordinator().TranscriptPath();
  o.max_stop_blocks = config.hooks.max_stop_blocks;
  o.commands_network = s->runtime_->coordinator().commands_network();
  o.reviews = config.reviews;
  o.workflow = *workflow;
  o.defs = loaded.defs;
  o.nested_instructions = loaded.trust == WorkspaceTrust::kTrusted;
  o.answer_schema = flags.answer_schema;
  o.vision = ModelSeesImages(o.model, config.llm_vision);
  s->defs_ = loaded.defs;
  // Subagents' model calls go through the session's client, from the coordinator.
  std::string subagent_model = config.subagent_model == "utility" ? s->llm_.utility_model : o.model;
  s->runtime_->coordinator().set_model_access(
      {s->client_.get(), subagent_model, o.prices, o.max_tokens, o.instructions, static_cast<int>(o.budget.turns),
       o.tool_timeouts, o.context_window > 0 ? o.context_window : DefaultContextWindow(subagent_model), o.compact_at,
       o.defs});
  s->agent_ = std::make_unique<Agent>(o, &s->runtime_->coordinator(), s->client_.get(), &s->runtime_->ledger(),
                                      RealClock::Get(), observer);
  // The repository map's index starts filling now, in the background.
  if (o.repo_map_tokens > 0) s->runtime_->coordinator().RepoMap(o.repo_map_tokens);
  Ledger& ledger = s->runtime_->ledger();
  const std::string& session_id = s->runtime_->coordinator().session_id();
  int64_t now = RealClock::Get()->WallMillis();
  if (!runtime.resume_session.empty()) {
    // A command's writes cut off by the crash land first: a crash during
    // that leaves its call open, for the next resume. Then what was cut off
    // is closed, and the conversation taken up.
    bool may_hold = o.workflow != Workflow::kNone;
    for (ReviewRole role : {ReviewRole::kHydrator, ReviewRole::kCritic, ReviewRole::kSpec, ReviewRole::kDrift}) {
      may_hold = may_hold || ReviewerOn(o.reviews, o.profile, role);
    }
    ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries, ledger.ListConversation(session_id, "main"));
    ASSIGN_OR_RETURN(std::string landed, ApplyInterruptedWrites(s->runtime_->coordinator(), ledger, session_id,
                                                                s->runtime_->workspace().state_dir, may_hold,
                                                                LastRanOnThisBoot(entries), s->agent_.get()));
    ASSIGN_OR_RETURN(std::vector<std::string> interrupted, EndInterruptedCalls(&ledger, session_id, now));
    RETURN_IF_ERROR(s->agent_->Restore(entries).WithContext("resume " + session_id));
    if (!interrupted.empty()) {
      std::string ids;
      for (const std::string& id : interrupted) ids += (ids.empty() ? "" : ", ") + id;
      s->agent_->AddNote("This session is being resumed: the odin process that ran it before ended during " + ids +
                         ", recorded as interrupted. What those calls did may be partial: check before relying on it." +
                         landed);
    }
  }
  // The owner goes to the ledger with the conversation's first entries, so
  // the first model request does not wait for a write of its own; a session
  // that may sit idle (interactive, an editor's, the daemon's) writes it
  // now, or another process could take it up meanwhile.
  s->agent_->QueueEntry("owner", SessionOwnerJson());
  const std::string& kind = flags.runtime.session_kind;
  if (kind == "interactive" || kind == "acp" || kind == "daemon") s->agent_->Flush();
  Coordinator& coordinator = s->runtime_->coordinator();
  std::function<void(const std::string&)> notice = flags.notice;
  if (!notice) notice = [](const std::string& line) { std::cerr << line << "\n"; };
  if (!coordinator.on_hook_note) {
    coordinator.on_hook_note = [notice](const std::string& note) { notice("odin: hook " + note); };
  }
  if (!coordinator.on_mcp_server) {
    coordinator.on_mcp_server = [notice](const McpRegistry::Server& server) {
      if (server.state == McpRegistry::State::kFailed) {
        notice("odin: MCP server " + server.spec.name + " failed: " + server.error);
      } else if (server.state == McpRegistry::State::kReady) {
        notice("odin: MCP server " + server.spec.name + " ready: " + std::to_string(server.tools.size()) + " tools" +
               (server.error.empty() ? "" : " (" + server.error + ")"));
      }
    };
  }
  // SessionStart hooks: what they print is context for the model's first
  // message, which waits for them.
  if (coordinator.HasHooks(HookEvent::kSessionStart)) {
    s->agent_->RunStartHooks(runtime.resume_session.empty() ? "startup" : "resume");
  }
  return s;
}

Status AgentSession::Poll(Duration max_wait, std::vector<PollFd>* extra_fds) {
  SteadyTime now = RealClock::Get()->Now();
  Duration wait = max_wait;
  for (std::optional<SteadyTime> t : {http_->NextTimer(), client_->NextTimer(), agent_->NextTimer()}) {
    if (t) wait = std::min(wait, std::max(Duration::zero(), *t - now));
  }
  std::vector<PollFd> fds;
  if (extra_fds != nullptr) fds = *extra_fds;
  size_t http_first = fds.size();
  size_t http_count = http_->AddWatchFds(&fds);
  Status s = runtime_->coordinator().Poll(wait, &fds);
  if (extra_fds != nullptr) {
    for (size_t i = 0; i < extra_fds->size(); ++i) (*extra_fds)[i] = fds[i];
  }
  http_->Process(fds, http_first, http_count);
  client_->Tick();
  agent_->Tick();
  return s;
}

}  // namespace odin
