#pragma once
// AgentSession: an agent at work in a workspace. It puts together the runtime
// (workers, ledger, coordinator), the HTTP client and model client, and the
// planner loop, and drives them all from one poll loop. Front ends (odin -p,
// the interactive terminal, the daemon's hosted sessions) own one and call Poll.

#include <functional>
#include <memory>
#include <vector>

#include "planner/agent.h"
#include "llm/http_client.h"
#include "session/llm_config.h"
#include "session/runtime.h"

namespace odin {

struct LoadedConfig;

struct AgentSessionFlags {
  RuntimeFlags runtime;
  LlmFlags llm;
  // Budget flags; 0: from the config.
  int max_turns = 0;
  int64_t max_tool_calls = 0;
  int64_t max_tokens = 0;
  double max_budget_usd = 0;
  double max_wall_seconds = 0;
  std::string profile;  // fast, auto, safe, strict; "": from the config
  // The workflow every message takes (planner/workflows.h); "": from the
  // config's workflows.default, else the hydrator routes each message.
  std::string workflow;
  // Take up a session of the workspace instead of starting one: this id
  // (--resume), or the newest (--continue).
  std::string resume;
  bool continue_last = false;
  // With resume or continue_last: take up a copy of that session instead
  // (session/rewind.h), leaving it as it was.
  bool fork_session = false;
  // --isolated: the session works in a view of its own, a copy of the
  // workspace (workspace/isolated_views.h); its changes land only when the
  // user applies them. A resumed session that ran in a view runs in it again;
  // with fork_session, the copy of a session goes on in a new view.
  bool isolated = false;
  // An attempt's (session/attempts.h): the budget's tokens, cost and tool
  // calls are divided among this many.
  int budget_share = 1;
  // The workspace's config, loaded already by the caller (odin -p reads
  // attempts.count from it), its notices said: not loaded again. Null: Start
  // loads it.
  std::shared_ptr<const LoadedConfig> config;
  // --json-schema: the schema the final answer must be valid against, as
  // JSON text, compiled by the caller ("": none).
  std::string answer_schema;
  // Where the session's notices go (an MCP server ready or failed, a hook's
  // note), one line each; unset: stderr. An interactive terminal prints
  // them above the line being edited, not over it.
  std::function<void(const std::string&)> notice;
};

class AgentSession {
 public:
  // Resolves the model settings first (a missing API key fails here, before
  // anything starts), then starts the runtime. observer must outlive it.
  static StatusOr<std::unique_ptr<AgentSession>> Start(const AgentSessionFlags& flags, AgentObserver* observer);
  ~AgentSession();

  Agent& agent() { return *agent_; }
  Runtime& runtime() { return *runtime_; }
  // The custom commands, agents and skills in force (config/claude_defs.h).
  const ClaudeDefs& defs() const { return defs_; }
  const LlmSettings& llm() const { return llm_; }
  // The budget of each message.
  const BudgetLimits& budget() const { return budget_; }
  // Why the session ends, for SessionEnd hooks: "exit" by default,
  // "prompt_input_exit", "clear", "other".
  void set_end_reason(std::string reason) { end_reason_ = std::move(reason); }

  // One turn of the loop: waits at most max_wait for the workers, the model's
  // connection, a timer or one of the caller's extra fds (whose readiness it
  // fills in), then handles whatever is due.
  Status Poll(Duration max_wait, std::vector<PollFd>* extra_fds = nullptr);

 private:
  AgentSession() = default;

  LlmSettings llm_;
  BudgetLimits budget_;
  ClaudeDefs defs_;
  std::string end_reason_ = "other";  // SessionEnd's reason, in Claude Code's words
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<LlmClient> client_;
  std::unique_ptr<Agent> agent_;  // last: destroyed first
};

}  // namespace odin
