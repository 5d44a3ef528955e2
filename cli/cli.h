#pragma once
// The subcommands of `odin`, one function each; odin_main.cc parses the command
// line (CLI11) and calls them. Each returns the process exit code and prints
// errors as one line on stderr.
//
#include <string>
#include <vector>

#include "planner/run_outcome.h"  // exit codes
#include "session/llm_config.h"

namespace odin {

struct McpServerSpec;

struct GlobalFlags {
  std::string dir;       // -C DIR
  std::string sandbox;   // --sandbox auto|require|off
  bool network = false;  // --network: edit-mode commands reach the network
};

struct KeysFlags {
  std::string dir;                 // --dir; "": $XDG_CONFIG_HOME/odin/keys
  std::vector<std::string> hosts;  // --host NAME (repeatable); none: host-1
};

struct HostFlags {
  std::string connect;          // --connect tcp://HOST:PORT
  std::string keys;             // --keys DIR
  std::string key;              // --key FILE: this host's secret key
  std::string coordinator_key;  // --coordinator-key FILE|KEY
  std::string name;             // --name
  int workers = 0;              // --workers
  bool once = false;            // --once: one coordinator's session, then exit
};

struct ExecFlags {
  double timeout_seconds = 0;     // --timeout; 0: none
  bool json = false;              // --json
  std::string mode;               // --mode ask|plan|edit: that mode's sandbox policy; "": odin exec's
  std::vector<std::string> argv;  // after --
};

struct ToolFlags {
  std::string name;               // the tool, e.g. "Read"
  std::string arguments = "{}";   // its JSON arguments
  std::string session;            // --session: continue this session
  std::string mode = "edit";      // --mode ask|plan|edit
  bool json = false;              // --json
  std::string approval = "deny";  // --approval deny|allow: a call that needs approval
};

struct IndexFlags {
  bool rebuild = false;  // --rebuild: from an empty index
  bool stats = false;    // --stats: what the index holds, by language
  bool json = false;     // --json
};

struct AgentFlags {
  std::string prompt;                  // -p / run: the message; empty: interactive
  std::string output_format = "text";  // --output-format text|json|stream-json
  std::string mode = "edit";           // --mode ask|plan|edit
  int max_turns = 0;                   // --max-turns; 0: from the config
  int64_t max_tool_calls = 0;          // --max-tool-calls
  int64_t max_tokens = 0;              // --max-tokens (input plus output, over the message)
  double max_budget_usd = 0;           // --max-budget-usd
  double max_wall_seconds = 0;         // --max-wall-seconds
  std::string profile;                 // --profile fast|auto|safe|strict; "": from the config
  std::string workflow;                // --workflow NAME (planner/workflows.h); "": the config's, or routed
  std::string approval;                // --approval deny|allow|prompt; "": deny headless, prompt interactive
  LlmFlags llm;                        // --provider, --model, --utility-model, --base-url
  std::string resume;                  // -r/--resume SESSION_ID: take that session up again
  bool continue_last = false;          // -c/--continue: the workspace's newest session
  bool fork_session = false;           // --fork-session: with -r/-c, go on in a copy (session/rewind.h)
  bool init = false;                   // odin init: the message is /init's (writes ODIN.md)
  bool force = false;                  // odin init --force: update an existing ODIN.md
  bool review = false;                 // odin review: the QA verifier on the uncommitted change
  // --json-schema (--output-schema): a file, or the schema inline; -p only.
  std::string json_schema;
  std::vector<std::string> images;  // --image FILE...: attached to the -p message
  bool isolated = false;            // --isolated: in a view of its own (workspace/isolated_views.h)
  int attempts = 0;                 // --attempts N: that many at once (cli_attempts.cc); 0: attempts.count
};

struct UndoFlags {
  std::string execution_id;  // EXECUTION_ID: that call's changes
  std::string message_id;    // --message: every call of that message
  bool last = false;         // --last: the newest call that changed files, not undone yet
  bool dry_run = false;      // --dry-run: print the diff, change nothing
  bool force = false;        // --force: over later changes; skip what cannot be undone
  bool json = false;
};

// odin diff|apply|discard SESSION (cli_views.cc).
struct ViewFlags {
  std::string action;   // diff, apply, discard
  std::string session;  // the isolated session's id or a unique prefix
  bool json = false;
  bool no_recheck = false;  // apply: land without running the checks on the workspace as it is now
};

struct RewindFlags {
  std::string message_id;          // --message: back to before this user message
  bool code_only = false;          // --code-only: the files, not the conversation
  bool conversation_only = false;  // --conversation-only: the conversation, not the files
  bool json = false;
};

// odin permissions list|remove.
struct PermissionsFlags {
  std::string action = "list";  // list, remove
  std::string key;              // remove: a number from list, or the key
  bool json = false;
};

struct TrustFlags {
  bool revoke = false;  // --revoke: stop trusting the workspace
  bool show = false;    // --show: only say whether it is trusted and what it sets
};

// odin mcp add|remove|list.
struct McpFlags {
  std::string action;  // add, remove, list, login, logout
  std::string name;
  std::vector<std::string> command;  // add: after "--" (an http server: its URL)
  std::string transport = "stdio";
  std::vector<std::string> env;      // KEY=VALUE
  std::vector<std::string> headers;  // NAME: VALUE
  bool writable = false;
  bool network = false;
  bool no_sandbox = false;
  bool json = false;
  // login
  bool no_browser = false;
  int timeout_seconds = 300;
  int callback_port = 0;  // 0: the last login's, else any free one
};
// Exit 0 on success, 1 on an error (one line naming it; the file is untouched).
int RunMcp(const GlobalFlags& g, const McpFlags& f);
// odin mcp login|logout NAME (cli_mcp_login.cc): the same exits.
int RunMcpLogin(const GlobalFlags& g, const McpFlags& f);
int RunMcpLogout(const GlobalFlags& g, const McpFlags& f);
// "oauth: logged in (expires in 41 min)" for a server with a stored token, else "".
std::string DescribeMcpLogin(const McpServerSpec& spec);
// odin mcp serve: an MCP server on stdio until stdin ends; 0, or 1 when it
// cannot start (one line on stderr).
int RunMcpServe(const GlobalFlags& g, const std::string& mode, const std::string& approval);
// odin acp: an Agent Client Protocol agent on stdio until stdin ends
// (cli_acp.cc); the model and budget flags are f's, --mode the sessions'
// first mode. 0, or 1 when the client stopped reading or sent a line over
// 64 MiB (one line on stderr).
int RunAcp(const GlobalFlags& g, const AgentFlags& f);

int RunExec(const GlobalFlags& g, const ExecFlags& f);
// odin -p: exit 0 when the agent finished the message (the convergence gate
// accepted it), 3 when it did not converge, 4 when a budget ran out (turns
// included), 5 when the stall detector stopped it, 1 on an error, 130 when
// interrupted.
int RunPrompt(const GlobalFlags& g, const AgentFlags& f);
int RunInteractive(const GlobalFlags& g, const AgentFlags& f);
// Exit 0 iff the call succeeded; 1 if it failed or a gate refused it.
int RunTool(const GlobalFlags& g, const ToolFlags& f);
// odin index: brings the symbol index (.odin/index.db) up to date.
int RunIndex(const GlobalFlags& g, const IndexFlags& f);
int RunLog(const GlobalFlags& g, bool json, int limit);
// odin sessions: the workspace's agent sessions, newest first.
int RunSessions(const GlobalFlags& g, bool json);
int RunShow(const GlobalFlags& g, const std::string& id, bool json, bool output_only);
int RunLedgerVerify(const GlobalFlags& g, bool json);
// Moves the ledger aside and starts a new chain (Ledger::Reset).
int RunLedgerReset(const GlobalFlags& g, bool json);
int RunDoctor(const GlobalFlags& g, bool json);
// odin keys generate; odin host --connect tcp://HOST:PORT.
int RunKeysGenerate(const KeysFlags& f);
int RunHost(const GlobalFlags& g, const HostFlags& f);
// odin trust: trusts the workspace's odinconfig.json at the hash of its
// trusted-only settings (trust.h), or revokes that. Exit 0 unless an error
// (a malformed config, an unwritable trust store) stops it.
int RunTrust(const GlobalFlags& g, const TrustFlags& f);
// odin permissions: the saved approvals (config/approval_store.h), listed,
// or one removed. Exit 0, or 1 with one line (nothing matched, a store that
// is not the user's).
int RunPermissions(const GlobalFlags& g, const PermissionsFlags& f);
// Exit 0 when the changes were put back (or, with --dry-run, shown); 1 when
// refused (a later change, a change that cannot be undone) or on an error.
int RunUndo(const GlobalFlags& g, const UndoFlags& f);
int RunView(const GlobalFlags& g, const ViewFlags& f);
// odin rewind and odin sessions fork (session/rewind.h).
int RunRewind(const GlobalFlags& g, const RewindFlags& f);
int RunSessionsFork(const GlobalFlags& g, const std::string& id, bool json);

}  // namespace odin
