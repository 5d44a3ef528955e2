#pragma once
// Config: Odin's settings, with defaults for everything. They come from the
// user's odinconfig.json ($XDG_CONFIG_HOME/odin/, default ~/.config/odin/)
// and the workspace's <workspace>/odinconfig.json, which config_loader.h
// layers (the workspace's only as far as the user trusts it: trust.h).
// Command-line flags override them (the CLI applies flags after loading).
// Both files have this schema:
//
// {
//   "sandbox": {"policy": "auto", "require": false, "bwrap": "/usr/bin/bwrap", "hide_home": true,
//               "hide": ["/srv/secrets"], "root_hidden": ["/etc/shadow", "/root", ...],
//               "limits": {"processes": 1024, "memory_mb": 8192, "cpu_seconds": 0,
//                          "file_size_mb": 8192, "open_files": 4096, "address_space_mb": 0}},
//   "serve": {"tls_cert": "/etc/odin/tls.crt", "tls_key": "/etc/odin/tls.key", "tls_ca": "/etc/odin/ca.crt"},
//   "workers": {"count": 0, "heartbeat_ms": 500, "idle_seconds": 300,
//               "remote": {"launcher": "off", "listen": "tcp://0.0.0.0:7171", "keys": "DIR",
//                          "kinds": ["subagent", "readonly"], "wait_hosts": 0, "wait_seconds": 30,
//                          "slurm": {"partition": "", "cpus": 2, "memory_mb": 4096, "time": "1:00:00",
//                                    "max_hosts": 2, "connect": "tcp://HOST:PORT"}}},
//   "ledger":  {"artifact_cap_bytes": 8388608},
//   "output":  {"head_bytes": 65536, "tail_bytes": 65536},
//   "file_cache": {"max_total_bytes": 104857600, "max_file_bytes": 10485760,
//                  "max_entries": 500, "max_segments": 50, "eviction": "hybrid"},
//   "llm": {"provider": "openai", "model": "...", "utility_model": "...",
//           "base_url": "...", "max_retries": 4, "timeout_seconds": 300,
//           "max_tokens": 8192,
//           "prices": {"MODEL": {"input_per_mtok": 3.0, "output_per_mtok": 15.0,
//                                "cache_read_per_mtok": 0.3, "cache_write_per_mtok": 3.75}}},
//   "agent": {"max_turns": 0, "profile": "auto", "subagent_concurrency": 0,
//             "subagent_timeout_seconds": 600, "subagent_model": "planner"},
//   "validation": {"enabled": true, "start_timeout_ms": 45000, "file_timeout_ms": 5000,
//                  "settle_ms": 150, "check_timeout_ms": 30000,
//                  "validate_specs": false, "validate_progress": false, "progress_every": 5,
//                  "revert_on_new_errors": false, "fail_open": false,
//                  "servers": {"NAME": {"command": [...], "extensions": [".x"],
//                                       "start_timeout_ms": N, "file_timeout_ms": N}},
//                  "check_commands": {".x": ["prog", "{file}"]}},
//   "checks": {"build": "make", "lint": "", "tests": "make test",
//              "timeout_seconds": 120, "retry_cap": 5},
//   "budgets": {"max_turns": 0, "max_tool_calls": 0, "max_tokens": 0,
//               "max_budget_usd": 0, "max_wall_seconds": 0,
//               "tool_timeouts": {"ExecuteCommand": 120, "*": 300}},
//   "stall": {"enabled": true, "repeat": 3, "failures": 3, "messages": 3,
//             "alternation_steps": 6, "no_progress_turns": 10},
//   "breakers": {"enabled": true, "failures": 5, "cooldown_seconds": 30,
//                "trials": 1, "successes": 2},
//   "reviewers": {"hydrator": {"enabled": true, "model": "...", "prompt": "..."},
//                 "critic": {..., "max_rounds": 2},
//                 "drift": {..., "every": 10, "probability": 0.15, "seed": 7},
//                 "qa": {...}, "reflection": {...}},
//   "workflows": {"default": "tdd", "tdd": {"test_patterns": ["tests/*"]}},
//   "telemetry": {"enabled": false}  (the user's config only: telemetry/telemetry_settings.h)
// }
// "permissions": {"deny": ["rm", "git push"], "ask": ["npm install*"], "allow": ["make"]}
// "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...",
//                                                        "timeout": 60, "sandbox": true}]}],
//           "max_stop_blocks": 3, "network": false}  (planner/hooks.h; a file's hooks join the base's)
// "mcpServers": {"NAME": {"command": "npx", "args": [...], "env": {...}, "writable": false,
//                         "network": false, "sandbox": true}}  (coordinator/mcp_config.h)
// Budgets are per message; 0 means no limit. agent.max_turns is the same
// setting as budgets.max_turns.
// A file parsed onto a base (ParseConfig's base: the user's settings under
// the workspace's) replaces plain settings and merges maps key by key, but
// lists that only ever tighten combine: permissions.deny, ask and allow
// (ForbiddenCommands, AllowedCommands) and sandbox.hide.
// A server named like a default one replaces it; an empty command or check
// command turns one off.
// API keys are never read from these files: a workspace's is part of the
// repository.
// Unknown keys and wrong types are errors: a typo must not silently weaken a
// setting such as sandbox.require.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "planner/budget.h"
#include "planner/checks.h"
#include "mcp/mcp_config.h"
#include "planner/hooks.h"
#include "planner/reviewers.h"
#include "planner/workflows.h"
#include "gates/circuit_breaker.h"
#include "gates/command_rules.h"
#include "gates/file_cache.h"
#include "planner/stall_detector.h"
#include "gates/validators.h"
#include "sandbox/sandbox_options.h"

namespace odin {

struct Config {
  // telemetry.enabled: OpenTelemetry export, opted into in the user's own
  // config (a workspace's says nothing: config_loader.cc keeps the user's).
  bool telemetry_enabled = false;
  bool sandbox_require = false;           // sandbox.require: fail instead of running unsandboxed
  std::string bwrap_path;                 // sandbox.bwrap: "" searches PATH
  bool sandbox_hide_home = true;          // sandbox.hide_home: HOME and /root show empty
  std::vector<std::string> sandbox_hide;  // sandbox.hide: more directories shown empty (secrets)
  // sandbox.root_hidden: hidden from commands that run as the host's root
  // (globs; replaces the default list).
  std::vector<std::string> sandbox_root_hidden = DefaultRootHiddenPaths();
  // sandbox.policy: auto, require, fallback or off (sandbox.require: true is
  // require).
  SandboxPolicy sandbox_policy = SandboxPolicy::kAuto;
  // sandbox.network: edit-mode commands reach the network (never ask or
  // plan). Trusted-only: a repository cannot turn it on.
  bool sandbox_network = false;
  // sandbox.network as {"allow": [...], "deny": [...], "hosts": {...}}:
  // edit mode's commands reach the hosts the rules allow through the
  // commands' proxy (web/network_rules.h, workers/net_proxy.h); hosts maps
  // names to addresses (tests, a local mirror). Trusted-only too.
  struct NetworkRules {
    bool on = false;
    std::vector<std::string> allow;
    std::vector<std::string> deny;
    std::map<std::string, std::string> hosts;
  };
  NetworkRules sandbox_network_rules;
  // sandbox.limits: per worker sandbox (a cgroup) and per command (rlimits);
  // 0: no limit.
  using Limits = SandboxLimits;
  Limits sandbox_limits;
  int worker_count = 0;  // workers.count: 0 = number of cores
  // commands.max_background: background commands (run_in_background) at
  // once; 0 turns them off. A workspace may lower it.
  int max_background = 4;
  // isolation.max_view_mb: the most a view of an isolated session (a copy
  // of the workspace, workspace/isolated_views.h) may take, in MB.
  int64_t isolation_max_view_mb = 8192;
  // attempts.count: how many agents try each -p message at once, each in an
  // isolated view (--attempts N overrides it); attempts.variants: what sets
  // them apart, taken in turn (attempt K gets variant (K-1) mod their
  // number): a model, and a hint added to the message.
  int attempts = 1;
  struct AttemptVariant {
    std::string model;        // "": the session's
    double temperature = -1;  // below 0: the provider's default
    std::string hint;
  };
  std::vector<AttemptVariant> attempt_variants;
  // attempts.local: how many attempts run their workers on this machine
  // when workers.remote has hosts (0: one per core); the others' work goes
  // to the hosts (a Slurm launch where configured).
  int attempts_local = 0;
  // attempts.budget: each attempt's own limits, where set (0: its share,
  // the message's budgets.* divided by the attempts' number).
  struct AttemptBudget {
    int64_t max_tool_calls = 0;
    int64_t max_tokens = 0;
    double max_budget_usd = 0;
  } attempt_budget;
  int heartbeat_ms = 500;  // workers.heartbeat_ms
  // workers.idle_seconds: a worker started on a host for waiting calls
  // retires after this long idle; a Slurm host with no workers for as long
  // is given back.
  int idle_seconds = 300;
  // serve: odin serve's gRPC port. Beyond loopback it requires TLS with this
  // certificate and key (PEM files); clients verify the daemon against
  // tls_ca (else the system's roots). Trusted-only, like every key a
  // workspace may not set.
  struct Serve {
    std::string tls_cert;
    std::string tls_key;
    std::string tls_ca;
  } serve;
  // workers.remote: workers on other machines, run by host agents that
  // connect over TCP with CURVE (docs/remote.md). Trusted-only, like every
  // key a workspace may not set.
  struct RemoteWorkers {
    std::string launcher = "off";  // off, static (hosts started by others connect) or slurm
    std::string listen;            // tcp://HOST:PORT the coordinator listens on
    std::string keys;              // `odin keys generate`'s directory ("": $XDG_CONFIG_HOME/odin/keys)
    // Which workers may run on a host: subagent, readonly, writable.
    std::vector<std::string> kinds = {"subagent", "readonly"};
    int wait_hosts = 0;     // hosts a session waits for before its first call
    int wait_seconds = 30;  // how long it waits for them
    struct Slurm {
      std::string partition;         // "": the cluster's default
      int cpus = 2;                  // per host agent (srun --cpus-per-task)
      int memory_mb = 4096;          // per host agent (srun --mem)
      std::string time = "1:00:00";  // srun --time
      int max_hosts = 2;             // host agents at most
      // The address host agents dial ("": listen's, a wildcard as our host
      // name; without a port: listen's port). Loopback only when named here.
      std::string connect;
    } slurm;
  } remote;
  uint64_t artifact_cap_bytes = 8u << 20;  // ledger.artifact_cap_bytes: full output kept up to this
  // ledger.before_image_cap_bytes, ledger.before_images_per_command_bytes:
  // a change's bytes before are kept (undoable) up to these; past them only
  // the hash. Protected files are never subject to them.
  uint64_t before_image_cap_bytes = 1u << 20;
  uint64_t before_images_per_command_bytes = 64u << 20;
  uint32_t output_head_bytes = 64 * 1024;  // output.head_bytes
  uint32_t output_tail_bytes = 64 * 1024;  // output.tail_bytes
  FileCacheOptions file_cache;             // file_cache.*; eviction: lru, lfu or hybrid
  // llm.*: the model. Empty strings: decided by flags, environment, defaults.
  std::string llm_provider;  // openai, anthropic, demo
  std::string llm_model;
  std::string llm_utility_model;
  std::string llm_base_url;
  int llm_max_retries = 4;
  int llm_timeout_seconds = 300;
  int llm_max_tokens = 0;  // 0: the provider's default (Anthropic: 8192)
  // llm.context_window: the model's window in tokens (0: its family's
  // default); llm.compact_at: the share of it past which the conversation is
  // compacted before a request.
  int64_t llm_context_window = 0;
  double llm_compact_at = 0.8;
  // llm.prompt_cache: send the providers' prompt-cache fields ("auto": to
  // the official OpenAI and Anthropic endpoints only; "on"; "off").
  std::string llm_prompt_cache = "auto";
  // context.repo_map: the repository map in the system prompt (unset: on in
  // the strict profile only); context.repo_map_tokens: its budget.
  std::optional<bool> context_repo_map;
  int64_t context_repo_map_tokens = 1000;
  struct Price {
    double input_per_mtok = 0;
    double output_per_mtok = 0;
    std::optional<double> cache_read_per_mtok;   // unset: the input price
    std::optional<double> cache_write_per_mtok;  // unset: the input price
  };
  std::map<std::string, Price> llm_prices;  // USD per million tokens, by model ("*": any)
  // llm.vision: whether a model accepts images, by model ("*": any; true or
  // false alone: every model). Unset for a model: guessed from its name
  // (llm/images.h ModelSeesImages).
  std::map<std::string, bool> llm_vision;
  int max_turns = 0;                       // agent.max_turns: model calls per message (0: no limit)
  std::string profile = "auto";            // agent.profile: fast, auto, safe, strict
  int subagent_concurrency = 0;            // agent.subagent_concurrency: subagents at once; 0 = 2 x cores
  int subagent_timeout_seconds = 600;      // agent.subagent_timeout_seconds: an AgentTool call's deadline
  std::string subagent_model = "planner";  // agent.subagent_model: planner or utility
  // reviewers.* (planner/reviewers.h), validation.validate_specs,
  // validate_progress and progress_every, workflows.tdd.test_patterns; and
  // workflows.default, the workflow every message takes ("": the hydrator
  // routes). Trusted-only: a repository cannot set its own reviewers' prompts.
  ReviewConfig reviews;
  std::string workflow;
  ValidationOptions validation = DefaultValidationOptions();  // validation.*
  ChecksConfig checks;                                        // checks.*
  // budgets.*: besides max_turns (above).
  int64_t max_tool_calls = 0;
  int64_t max_tokens = 0;  // input plus output, over the message
  double max_budget_usd = 0;
  int64_t max_wall_seconds = 0;
  std::map<std::string, int> tool_timeouts = {{"ExecuteCommand", 120}, {"*", 300}};  // seconds
  StallOptions stall;                                                                // stall.*
  // permissions.{deny,ask,allow}: command rules (ForbiddenCommands and
  // AllowedCommands, the seed's names, are accepted as deny and allow).
  CommandRules permissions;
  BreakerOptions breakers;  // breakers.*
  HooksConfig hooks;        // hooks.*: the user's, then a trusted workspace's
  // mcpServers (coordinator/mcp_config.h): the user's, then a trusted
  // workspace's odinconfig.json and .mcp.json, by name.
  std::map<std::string, McpServerSpec> mcp_servers;
  // web.*: WebFetch. Trusted-only, like every key an untrusted workspace
  // may not set.
  struct Web {
    std::vector<std::string> allow_private;  // "host:port" pairs that may be private addresses
    std::string proxy;                       // "" none; the environment's proxy variables never apply
    uint64_t max_bytes = 5u << 20;           // a body is cut here
    int timeout_seconds = 30;                // a whole fetch
    int max_redirects = 5;
    int cache_minutes = 15;  // a URL's page is fetched again after this
  } web;
};

// Bounds of llm.context_window and --context-window, in tokens.
constexpr int64_t kMinContextWindow = 1000;
constexpr int64_t kMaxContextWindow = 100'000'000;
// Bound of attempts.count and --attempts.
constexpr int kMaxAttempts = 16;

// Parses config text onto base (by default the defaults); `origin` names the
// file in errors, with the key: "<origin>: unknown key 'sandbox.requir'".
StatusOr<Config> ParseConfig(const std::string& text, const std::string& origin, const Config& base = Config());

}  // namespace odin
