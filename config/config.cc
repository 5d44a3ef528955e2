// Long file: the parser of every odinconfig.json key with its range checks,
// one section after another, reads best as one walk over the document.
#include "config/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "config/config_reading.h"
#include "tools/tool_catalog.h"
#include "web/address_policy.h"
#include "web/network_rules.h"

namespace odin {
namespace {

using config_reading::CheckKeys;
using config_reading::ParseHooks;
using config_reading::Read;
using config_reading::ReadNumber;
using nlohmann::json;

constexpr uint32_t kMaxTimeoutMs = 3600 * 1000;
constexpr int64_t kMaxWallSeconds = 30 * 24 * 3600;
constexpr double kMaxBudgetUsd = 1e6;

// An array of strings.
Status ReadStrings(const json& value, const std::string& name, std::vector<std::string>* out,
                   const std::string& origin) {
  if (!value.is_array()) return Status::InvalidArgument(origin, name + " must be an array of strings");
  out->clear();
  for (const json& v : value) {
    if (!v.is_string()) return Status::InvalidArgument(origin, name + " must be an array of strings");
    out->push_back(v.get<std::string>());
  }
  return Status::OK();
}

// workers.remote.
Status ParseRemoteWorkers(const json& r, const std::string& origin, Config::RemoteWorkers* out) {
  RETURN_IF_ERROR(CheckKeys(r, "workers.remote",
                            {"launcher", "listen", "keys", "kinds", "wait_hosts", "wait_seconds", "slurm"}, origin));
  RETURN_IF_ERROR(Read(r, "workers.remote", "launcher", &out->launcher, origin));
  if (out->launcher != "off" && out->launcher != "static" && out->launcher != "slurm") {
    return Status::InvalidArgument(origin, "workers.remote.launcher must be off, static or slurm");
  }
  RETURN_IF_ERROR(Read(r, "workers.remote", "listen", &out->listen, origin));
  if (!out->listen.empty() && out->listen.compare(0, 6, "tcp://") != 0) {
    return Status::InvalidArgument(origin,
                                   "workers.remote.listen must be tcp://HOST:PORT (there is no other transport)");
  }
  RETURN_IF_ERROR(Read(r, "workers.remote", "keys", &out->keys, origin));
  if (r.contains("kinds")) {
    RETURN_IF_ERROR(ReadStrings(r["kinds"], "workers.remote.kinds", &out->kinds, origin));
    for (const std::string& k : out->kinds) {
      if (k != "subagent" && k != "readonly" && k != "writable") {
        return Status::InvalidArgument(origin,
                                       "workers.remote.kinds: '" + k + "' is not subagent, readonly or writable");
      }
    }
  }
  RETURN_IF_ERROR(Read(r, "workers.remote", "wait_hosts", &out->wait_hosts, origin));
  RETURN_IF_ERROR(Read(r, "workers.remote", "wait_seconds", &out->wait_seconds, origin));
  if (out->launcher != "off" && out->listen.empty()) {
    return Status::InvalidArgument(origin,
                                   "workers.remote.listen is needed when workers.remote.launcher is " + out->launcher);
  }
  if (out->launcher == "slurm" && out->wait_hosts > 0) {
    return Status::InvalidArgument(origin,
                                   "workers.remote.wait_hosts is for static hosts: Slurm's hosts come when calls wait");
  }
  if (r.contains("slurm")) {
    const json& s = r["slurm"];
    RETURN_IF_ERROR(CheckKeys(s, "workers.remote.slurm",
                              {"partition", "cpus", "memory_mb", "time", "max_hosts", "connect"}, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "partition", &out->slurm.partition, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "cpus", &out->slurm.cpus, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "memory_mb", &out->slurm.memory_mb, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "time", &out->slurm.time, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "max_hosts", &out->slurm.max_hosts, origin));
    RETURN_IF_ERROR(Read(s, "workers.remote.slurm", "connect", &out->slurm.connect, origin));
    if (out->slurm.max_hosts < 1 || out->slurm.cpus < 1 || out->slurm.memory_mb < 1) {
      return Status::InvalidArgument(origin, "workers.remote.slurm: max_hosts, cpus and memory_mb must be at least 1");
    }
    if (!out->slurm.connect.empty() && out->slurm.connect.compare(0, 6, "tcp://") != 0) {
      return Status::InvalidArgument(origin, "workers.remote.slurm.connect must be tcp://HOST:PORT");
    }
    // srun takes these as arguments of their own: nothing that could read as another option.
    for (const std::string* v : {&out->slurm.partition, &out->slurm.time}) {
      for (char c : *v) {
        if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != ':' && c != '.' && c != ',') {
          return Status::InvalidArgument(origin, "workers.remote.slurm: '" + *v + "' is not a partition or time");
        }
      }
    }
  }
  return Status::OK();
}

// reviewers.ROLE: {"enabled", "model", "prompt"} and the role's own keys.
// sandbox.network as an object: {"allow": [...], "deny": [...], "hosts":
// {"name": "address"}}; each rule and name checked here, where the error
// names the file.
Status ReadNetworkRules(const json& n, const std::string& origin, Config::NetworkRules* out) {
  RETURN_IF_ERROR(CheckKeys(n, "sandbox.network", {"allow", "deny", "hosts"}, origin));
  if (n.empty()) {
    return Status::InvalidArgument(origin, "sandbox.network: {} names no host; false for no network, or allow hosts");
  }
  Config::NetworkRules r;
  r.on = true;
  if (n.contains("allow")) RETURN_IF_ERROR(ReadStrings(n["allow"], "sandbox.network.allow", &r.allow, origin));
  if (n.contains("deny")) RETURN_IF_ERROR(ReadStrings(n["deny"], "sandbox.network.deny", &r.deny, origin));
  StatusOr<NetworkRules> parsed = ParseNetworkRules(r.allow, r.deny);
  if (!parsed.ok()) return Status::InvalidArgument(origin, parsed.status().message());
  if (n.contains("hosts")) {
    const json& h = n["hosts"];
    if (!h.is_object()) return Status::InvalidArgument(origin, "sandbox.network.hosts must map names to addresses");
    for (const auto& [name, address] : h.items()) {
      StatusOr<std::string> host = NormalizeHostName(name);
      if (!host.ok()) return Status::InvalidArgument(origin, "sandbox.network.hosts: " + host.status().message());
      in6_addr bytes;
      if (!address.is_string() || (inet_pton(AF_INET, address.get<std::string>().c_str(), &bytes) != 1 &&
                                   inet_pton(AF_INET6, address.get<std::string>().c_str(), &bytes) != 1)) {
        return Status::InvalidArgument(origin, "sandbox.network.hosts: '" + *host + "' must map to an IP address");
      }
      r.hosts[*host] = address.get<std::string>();
    }
  }
  *out = std::move(r);
  return Status::OK();
}

Status ParseReviewers(const json& r, const std::string& origin, ReviewConfig* out) {
  RETURN_IF_ERROR(CheckKeys(r, "reviewers", {"hydrator", "critic", "drift", "qa", "reflection"}, origin));
  for (auto it = r.begin(); it != r.end(); ++it) {
    ReviewRole role = *ParseReviewRole(it.key());
    std::string path = "reviewers." + it.key();
    const json& s = it.value();
    switch (role) {
      case ReviewRole::kCritic:
        RETURN_IF_ERROR(CheckKeys(s, path, {"enabled", "model", "prompt", "max_rounds"}, origin));
        RETURN_IF_ERROR(Read(s, path, "max_rounds", &out->critic_max_rounds, origin));
        if (out->critic_max_rounds > 10) return Status::InvalidArgument(origin, path + ".max_rounds is at most 10");
        break;
      case ReviewRole::kDrift:
        RETURN_IF_ERROR(CheckKeys(s, path, {"enabled", "model", "prompt", "every", "probability", "seed"}, origin));
        RETURN_IF_ERROR(Read(s, path, "every", &out->drift_every, origin));
        RETURN_IF_ERROR(ReadNumber(s, path, "probability", 0, 1, &out->drift_probability, origin));
        if (s.contains("seed")) {
          uint64_t seed = 0;
          RETURN_IF_ERROR(Read(s, path, "seed", &seed, origin));
          out->drift_seed = seed;
        }
        break;
      default: RETURN_IF_ERROR(CheckKeys(s, path, {"enabled", "model", "prompt"}, origin));
    }
    ReviewerSettings& settings = out->of(role);
    if (s.contains("enabled")) {
      bool on = false;
      RETURN_IF_ERROR(Read(s, path, "enabled", &on, origin));
      settings.enabled = on;
    }
    RETURN_IF_ERROR(Read(s, path, "model", &settings.model, origin));
    RETURN_IF_ERROR(Read(s, path, "prompt", &settings.prompt, origin));
    if (settings.prompt.size() > 16 * 1024) return Status::InvalidArgument(origin, path + ".prompt is over 16 KiB");
  }
  return Status::OK();
}

Status ParseValidation(const json& v, const std::string& origin, ValidationOptions* o) {
  RETURN_IF_ERROR(CheckKeys(v, "validation",
                            {"enabled", "start_timeout_ms", "file_timeout_ms", "settle_ms", "check_timeout_ms",
                             "revert_on_new_errors", "fail_open", "max_files_per_command", "servers", "check_commands"},
                            origin));
  RETURN_IF_ERROR(Read(v, "validation", "enabled", &o->enabled, origin));
  RETURN_IF_ERROR(Read(v, "validation", "start_timeout_ms", &o->start_timeout_ms, origin));
  RETURN_IF_ERROR(Read(v, "validation", "file_timeout_ms", &o->file_timeout_ms, origin));
  RETURN_IF_ERROR(Read(v, "validation", "settle_ms", &o->settle_ms, origin));
  RETURN_IF_ERROR(Read(v, "validation", "check_timeout_ms", &o->check_timeout_ms, origin));
  RETURN_IF_ERROR(Read(v, "validation", "revert_on_new_errors", &o->revert_on_new_errors, origin));
  RETURN_IF_ERROR(Read(v, "validation", "fail_open", &o->fail_open, origin));
  RETURN_IF_ERROR(Read(v, "validation", "max_files_per_command", &o->max_files_per_command, origin));
  if (o->start_timeout_ms == 0 || o->file_timeout_ms == 0 || o->check_timeout_ms == 0) {
    return Status::InvalidArgument(origin, "validation timeouts must be at least 1 ms");
  }
  if (o->start_timeout_ms > kMaxTimeoutMs || o->file_timeout_ms > kMaxTimeoutMs ||
      o->check_timeout_ms > kMaxTimeoutMs || o->settle_ms > kMaxTimeoutMs) {
    return Status::InvalidArgument(origin, "validation timeouts are at most one hour (3600000 ms)");
  }
  if (v.contains("servers")) {
    const json& servers = v["servers"];
    if (!servers.is_object()) return Status::InvalidArgument(origin, "validation.servers must be an object");
    for (auto it = servers.begin(); it != servers.end(); ++it) {
      std::string where = "validation.servers." + it.key();
      const json& s = it.value();
      RETURN_IF_ERROR(
          CheckKeys(s, where, {"command", "extensions", "start_timeout_ms", "file_timeout_ms", "settle_ms"}, origin));
      ServerSpec spec;
      spec.name = it.key();
      auto existing =
          std::find_if(o->servers.begin(), o->servers.end(), [&](const ServerSpec& x) { return x.name == it.key(); });
      if (existing != o->servers.end()) spec = *existing;
      if (s.contains("command")) RETURN_IF_ERROR(ReadStrings(s["command"], where + ".command", &spec.command, origin));
      if (s.contains("extensions")) {
        RETURN_IF_ERROR(ReadStrings(s["extensions"], where + ".extensions", &spec.extensions, origin));
        for (const std::string& ext : spec.extensions) {
          if (ext.size() < 2 || ext[0] != '.') {
            return Status::InvalidArgument(origin, where + ".extensions: '" + ext + "' must start with a dot");
          }
        }
      }
      RETURN_IF_ERROR(Read(s, where, "start_timeout_ms", &spec.start_timeout_ms, origin));
      RETURN_IF_ERROR(Read(s, where, "file_timeout_ms", &spec.file_timeout_ms, origin));
      RETURN_IF_ERROR(Read(s, where, "settle_ms", &spec.settle_ms, origin));
      if (spec.start_timeout_ms > kMaxTimeoutMs || spec.file_timeout_ms > kMaxTimeoutMs ||
          spec.settle_ms > kMaxTimeoutMs) {
        return Status::InvalidArgument(origin, where + ": timeouts are at most one hour");
      }
      if (existing != o->servers.end()) {
        *existing = spec;
      } else {
        // Configured servers come before the defaults: they are the user's choice.
        o->servers.insert(o->servers.begin(), spec);
      }
    }
  }
  if (v.contains("check_commands")) {
    const json& checks = v["check_commands"];
    if (!checks.is_object()) return Status::InvalidArgument(origin, "validation.check_commands must be an object");
    for (auto it = checks.begin(); it != checks.end(); ++it) {
      std::vector<std::string> argv;
      RETURN_IF_ERROR(ReadStrings(it.value(), "validation.check_commands." + it.key(), &argv, origin));
      o->check_commands[it.key()] = argv;
    }
  }
  return Status::OK();
}

// mcpServers: NAME -> {"command", "args", "env"} or {"type": "http", "url",
// "headers"}, plus "writable", "network", "sandbox", "roots". A file's servers join
// the base's; one named like a base's replaces it.
Status ParseMcpServers(const json& m, const std::string& origin, std::map<std::string, McpServerSpec>* out) {
  if (!m.is_object()) return Status::InvalidArgument(origin, "mcpServers must be an object");
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& name = it.key();
    std::string at = "mcpServers." + name;
    // No "__" and no "_" at either end: mcp__NAME__TOOL splits one way only.
    bool valid_name = !name.empty() && name.size() <= 64 && name.find("__") == std::string::npos &&
                      name.front() != '_' && name.back() != '_';
    for (char ch : name) valid_name = valid_name && (isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-');
    if (!valid_name) {
      return Status::InvalidArgument(
          origin, at + ": a server's name is 1 to 64 letters, digits, _ or - (no __, no _ at either end)");
    }
    const json& e = it.value();
    RETURN_IF_ERROR(CheckKeys(e, at,
                              {"type", "command", "args", "env", "url", "headers", "writable", "network", "sandbox",
                               "roots", "timeout", "startup_timeout", "concurrency"},
                              origin));
    McpServerSpec spec;
    spec.name = name;
    spec.source = origin;
    std::string type = e.contains("url") ? "http" : "stdio";
    RETURN_IF_ERROR(Read(e, at, "type", &type, origin));
    if (type == "http" || type == "streamable-http") {
      spec.transport = McpServerSpec::Transport::kHttp;
      RETURN_IF_ERROR(Read(e, at, "url", &spec.url, origin));
      if (spec.url.rfind("http://", 0) != 0 && spec.url.rfind("https://", 0) != 0) {
        return Status::InvalidArgument(origin, at + ".url must be an http:// or https:// URL");
      }
    } else if (type == "stdio") {
      RETURN_IF_ERROR(Read(e, at, "command", &spec.command, origin));
      if (spec.command.empty()) return Status::InvalidArgument(origin, at + ".command must be a non-empty string");
      if (e.contains("args")) RETURN_IF_ERROR(ReadStrings(e["args"], at + ".args", &spec.args, origin));
    } else {
      return Status::InvalidArgument(origin, at + ".type must be stdio or http");
    }
    for (auto [key, into] :
         {std::pair<const char*, std::map<std::string, std::string>*>{"env", &spec.env}, {"headers", &spec.headers}}) {
      if (!e.contains(key)) continue;
      const json& kv = e[key];
      if (!kv.is_object()) return Status::InvalidArgument(origin, at + "." + key + " must be an object of strings");
      for (auto v = kv.begin(); v != kv.end(); ++v) {
        if (!v.value().is_string()) {
          return Status::InvalidArgument(origin, at + "." + key + " must be an object of strings");
        }
        (*into)[v.key()] = v.value().get<std::string>();
      }
    }
    RETURN_IF_ERROR(Read(e, at, "writable", &spec.writable, origin));
    RETURN_IF_ERROR(Read(e, at, "network", &spec.network, origin));
    RETURN_IF_ERROR(Read(e, at, "sandbox", &spec.sandbox, origin));
    RETURN_IF_ERROR(Read(e, at, "roots", &spec.roots, origin));
    for (auto [key, into] : {std::pair<const char*, int*>{"timeout", &spec.timeout_seconds},
                             {"startup_timeout", &spec.startup_timeout_seconds}}) {
      RETURN_IF_ERROR(Read(e, at, key, into, origin));
      if (*into < 1 || *into > 3600) {
        return Status::InvalidArgument(origin, at + "." + key + " must be 1 to 3600 seconds");
      }
    }
    RETURN_IF_ERROR(Read(e, at, "concurrency", &spec.concurrency, origin));
    if (spec.concurrency < 1 || spec.concurrency > 16) {
      return Status::InvalidArgument(origin, at + ".concurrency must be 1 to 16 calls");
    }
    (*out)[name] = std::move(spec);
  }
  return Status::OK();
}

Status ParseBudgets(const json& b, const std::string& origin, Config* c) {
  RETURN_IF_ERROR(CheckKeys(
      b, "budgets",
      {"max_turns", "max_tool_calls", "max_tokens", "max_budget_usd", "max_wall_seconds", "tool_timeouts"}, origin));
  RETURN_IF_ERROR(Read(b, "budgets", "max_turns", &c->max_turns, origin));
  RETURN_IF_ERROR(Read(b, "budgets", "max_tool_calls", &c->max_tool_calls, origin));
  RETURN_IF_ERROR(Read(b, "budgets", "max_tokens", &c->max_tokens, origin));
  RETURN_IF_ERROR(Read(b, "budgets", "max_wall_seconds", &c->max_wall_seconds, origin));
  if (c->max_wall_seconds > kMaxWallSeconds) {
    return Status::InvalidArgument(origin, "budgets.max_wall_seconds is at most 2592000 (30 days)");
  }
  RETURN_IF_ERROR(ReadNumber(b, "budgets", "max_budget_usd", 0, kMaxBudgetUsd, &c->max_budget_usd, origin));
  if (b.contains("tool_timeouts")) {
    const json& t = b["tool_timeouts"];
    if (!t.is_object()) return Status::InvalidArgument(origin, "budgets.tool_timeouts must be an object");
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (it.key() != "*" && FindTool(it.key()) == nullptr) {
        return Status::InvalidArgument(origin, "budgets.tool_timeouts: unknown tool '" + it.key() + "'");
      }
      int secs = 0;
      RETURN_IF_ERROR(Read(t, "budgets.tool_timeouts", it.key().c_str(), &secs, origin));
      if (secs > 3600) {
        return Status::InvalidArgument(origin, "budgets.tool_timeouts." + it.key() + " is at most 3600 seconds");
      }
      c->tool_timeouts[it.key()] = secs;
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<Config> ParseConfig(const std::string& text, const std::string& origin, const Config& base) {
  ASSIGN_OR_RETURN(json root, ParseJsonOrError(text, origin));
  Config c = base;
  if (!root.is_object()) return Status::InvalidArgument(origin, "must hold a JSON object");
  RETURN_IF_ERROR(CheckKeys(root, "", {"sandbox",   "workers",    "ledger",      "output",          "file_cache",
                                       "llm",       "agent",      "validation",  "checks",          "budgets",
                                       "stall",     "breakers",   "permissions", "AllowedCommands", "ForbiddenCommands",
                                       "hooks",     "mcpServers", "web",         "context",         "reviewers",
                                       "workflows", "serve",      "commands",    "telemetry",       "isolation",
                                       "attempts"},
                            origin));
  if (root.contains("telemetry")) {
    const json& x = root["telemetry"];
    RETURN_IF_ERROR(CheckKeys(x, "telemetry", {"enabled"}, origin));
    RETURN_IF_ERROR(Read(x, "telemetry", "enabled", &c.telemetry_enabled, origin));
  }
  if (root.contains("commands")) {
    const json& x = root["commands"];
    RETURN_IF_ERROR(CheckKeys(x, "commands", {"max_background"}, origin));
    RETURN_IF_ERROR(Read(x, "commands", "max_background", &c.max_background, origin));
    if (c.max_background < 0 || c.max_background > 16) {
      return Status::InvalidArgument(origin, "commands.max_background must be between 0 and 16");
    }
  }
  RETURN_IF_ERROR(config_reading::ParseAttempts(root, origin, &c));
  if (root.contains("context")) {
    const json& x = root["context"];
    RETURN_IF_ERROR(CheckKeys(x, "context", {"repo_map", "repo_map_tokens"}, origin));
    if (x.contains("repo_map")) {
      if (!x["repo_map"].is_boolean()) return Status::InvalidArgument(origin, "context.repo_map must be true or false");
      c.context_repo_map = x["repo_map"].get<bool>();
    }
    RETURN_IF_ERROR(Read(x, "context", "repo_map_tokens", &c.context_repo_map_tokens, origin));
    if (c.context_repo_map_tokens < 100 || c.context_repo_map_tokens > 16000) {
      return Status::InvalidArgument(origin, "context.repo_map_tokens must be between 100 and 16000");
    }
  }
  if (root.contains("sandbox")) {
    const json& s = root["sandbox"];
    RETURN_IF_ERROR(CheckKeys(
        s, "sandbox", {"require", "policy", "bwrap", "hide_home", "hide", "root_hidden", "limits", "network"}, origin));
    if (s.contains("limits")) {
      const json& l = s["limits"];
      RETURN_IF_ERROR(CheckKeys(
          l, "sandbox.limits",
          {"processes", "memory_mb", "cpu_seconds", "file_size_mb", "open_files", "address_space_mb"}, origin));
      Config::Limits& o = c.sandbox_limits;
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "processes", &o.processes, origin));
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "memory_mb", &o.memory_mb, origin));
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "cpu_seconds", &o.cpu_seconds, origin));
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "file_size_mb", &o.file_size_mb, origin));
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "open_files", &o.open_files, origin));
      RETURN_IF_ERROR(Read(l, "sandbox.limits", "address_space_mb", &o.address_space_mb, origin));
      if ((o.processes > 0 && o.processes < 16) || (o.memory_mb > 0 && o.memory_mb < 64)) {
        return Status::InvalidArgument(origin,
                                       "sandbox.limits: processes at least 16 and memory_mb at least 64 "
                                       "(a worker needs some), or 0 for none");
      }
      if (o.memory_mb > (1ull << 30) || o.file_size_mb > (1ull << 30) || o.address_space_mb > (1ull << 30)) {
        return Status::InvalidArgument(origin, "sandbox.limits: sizes are in megabytes and at most 2^30");
      }
    }
    RETURN_IF_ERROR(Read(s, "sandbox", "require", &c.sandbox_require, origin));
    RETURN_IF_ERROR(Read(s, "sandbox", "bwrap", &c.bwrap_path, origin));
    RETURN_IF_ERROR(Read(s, "sandbox", "hide_home", &c.sandbox_hide_home, origin));
    if (s.contains("network") && s["network"].is_object()) {
      RETURN_IF_ERROR(ReadNetworkRules(s["network"], origin, &c.sandbox_network_rules));
      c.sandbox_network = false;
    } else if (s.contains("network")) {
      RETURN_IF_ERROR(Read(s, "sandbox", "network", &c.sandbox_network, origin));
      c.sandbox_network_rules = Config::NetworkRules();
    }
    if (s.contains("hide")) {
      // Combined with the base's: what the user hides stays hidden.
      std::vector<std::string> more;
      RETURN_IF_ERROR(ReadStrings(s["hide"], "sandbox.hide", &more, origin));
      for (const std::string& p : more) {
        if (p.empty() || p[0] != '/')
          return Status::InvalidArgument(origin, "sandbox.hide: '" + p + "' must be absolute");
      }
      c.sandbox_hide.insert(c.sandbox_hide.end(), more.begin(), more.end());
    }
    if (s.contains("root_hidden")) {
      c.sandbox_root_hidden.clear();
      RETURN_IF_ERROR(ReadStrings(s["root_hidden"], "sandbox.root_hidden", &c.sandbox_root_hidden, origin));
      for (const std::string& p : c.sandbox_root_hidden) {
        if (p.empty() || p[0] != '/') {
          return Status::InvalidArgument(origin, "sandbox.root_hidden: '" + p + "' must be absolute");
        }
      }
    }
    if (s.contains("policy")) {
      std::string policy;
      RETURN_IF_ERROR(Read(s, "sandbox", "policy", &policy, origin));
      StatusOr<SandboxPolicy> parsed = ParseSandboxPolicy(policy);
      if (!parsed.ok()) return Status::InvalidArgument(origin, "sandbox.policy: " + parsed.status().message());
      c.sandbox_policy = *parsed;
    }
    if (c.sandbox_require) c.sandbox_policy = SandboxPolicy::kRequire;
  }
  if (root.contains("web")) {
    const json& w = root["web"];
    RETURN_IF_ERROR(CheckKeys(
        w, "web", {"allow_private", "proxy", "max_bytes", "timeout_seconds", "max_redirects", "cache_minutes"},
        origin));
    if (w.contains("allow_private")) {
      c.web.allow_private.clear();
      RETURN_IF_ERROR(ReadStrings(w["allow_private"], "web.allow_private", &c.web.allow_private, origin));
      for (const std::string& entry : c.web.allow_private) {
        StatusOr<PrivateAllow> parsed = ParsePrivateAllow(entry);
        if (!parsed.ok()) return Status::InvalidArgument(origin, "web.allow_private: " + parsed.status().message());
      }
    }
    RETURN_IF_ERROR(Read(w, "web", "proxy", &c.web.proxy, origin));
    RETURN_IF_ERROR(Read(w, "web", "max_bytes", &c.web.max_bytes, origin));
    RETURN_IF_ERROR(Read(w, "web", "timeout_seconds", &c.web.timeout_seconds, origin));
    RETURN_IF_ERROR(Read(w, "web", "max_redirects", &c.web.max_redirects, origin));
    RETURN_IF_ERROR(Read(w, "web", "cache_minutes", &c.web.cache_minutes, origin));
    if (c.web.max_bytes < 1024 || c.web.max_bytes > (1ull << 30)) {
      return Status::InvalidArgument(origin, "web.max_bytes must be between 1024 and 1073741824");
    }
    if (c.web.timeout_seconds < 1 || c.web.timeout_seconds > 600) {
      return Status::InvalidArgument(origin, "web.timeout_seconds must be between 1 and 600");
    }
    if (c.web.max_redirects < 0 || c.web.max_redirects > 20) {
      return Status::InvalidArgument(origin, "web.max_redirects must be between 0 and 20");
    }
    if (c.web.cache_minutes < 0 || c.web.cache_minutes > 1440) {
      return Status::InvalidArgument(origin, "web.cache_minutes must be between 0 and 1440");
    }
  }
  if (root.contains("serve")) {
    const json& sv = root["serve"];
    RETURN_IF_ERROR(CheckKeys(sv, "serve", {"tls_cert", "tls_key", "tls_ca"}, origin));
    RETURN_IF_ERROR(Read(sv, "serve", "tls_cert", &c.serve.tls_cert, origin));
    RETURN_IF_ERROR(Read(sv, "serve", "tls_key", &c.serve.tls_key, origin));
    RETURN_IF_ERROR(Read(sv, "serve", "tls_ca", &c.serve.tls_ca, origin));
  }
  if (root.contains("workers")) {
    const json& w = root["workers"];
    RETURN_IF_ERROR(CheckKeys(w, "workers", {"count", "heartbeat_ms", "idle_seconds", "remote"}, origin));
    RETURN_IF_ERROR(Read(w, "workers", "count", &c.worker_count, origin));
    RETURN_IF_ERROR(Read(w, "workers", "heartbeat_ms", &c.heartbeat_ms, origin));
    RETURN_IF_ERROR(Read(w, "workers", "idle_seconds", &c.idle_seconds, origin));
    if (c.heartbeat_ms < 10) return Status::InvalidArgument(origin, "workers.heartbeat_ms must be at least 10");
    if (w.contains("remote")) RETURN_IF_ERROR(ParseRemoteWorkers(w["remote"], origin, &c.remote));
  }
  if (root.contains("ledger")) {
    const json& l = root["ledger"];
    RETURN_IF_ERROR(CheckKeys(
        l, "ledger", {"artifact_cap_bytes", "before_image_cap_bytes", "before_images_per_command_bytes"}, origin));
    RETURN_IF_ERROR(Read(l, "ledger", "artifact_cap_bytes", &c.artifact_cap_bytes, origin));
    RETURN_IF_ERROR(Read(l, "ledger", "before_image_cap_bytes", &c.before_image_cap_bytes, origin));
    RETURN_IF_ERROR(Read(l, "ledger", "before_images_per_command_bytes", &c.before_images_per_command_bytes, origin));
    // Kept in the coordinator's memory while a command runs: bounded.
    constexpr uint64_t kMaxImages = 1ull << 30;
    if (c.before_image_cap_bytes > kMaxImages || c.before_images_per_command_bytes > kMaxImages) {
      return Status::InvalidArgument(origin, "ledger.before_image caps are at most 1073741824 bytes");
    }
  }
  if (root.contains("output")) {
    const json& o = root["output"];
    RETURN_IF_ERROR(CheckKeys(o, "output", {"head_bytes", "tail_bytes"}, origin));
    RETURN_IF_ERROR(Read(o, "output", "head_bytes", &c.output_head_bytes, origin));
    RETURN_IF_ERROR(Read(o, "output", "tail_bytes", &c.output_tail_bytes, origin));
  }
  if (root.contains("file_cache")) {
    const json& f = root["file_cache"];
    RETURN_IF_ERROR(CheckKeys(
        f, "file_cache", {"max_total_bytes", "max_file_bytes", "max_entries", "max_segments", "eviction"}, origin));
    FileCacheOptions& o = c.file_cache;
    RETURN_IF_ERROR(Read(f, "file_cache", "max_total_bytes", &o.max_total_bytes, origin));
    RETURN_IF_ERROR(Read(f, "file_cache", "max_file_bytes", &o.max_file_bytes, origin));
    RETURN_IF_ERROR(Read(f, "file_cache", "max_entries", &o.max_entries, origin));
    RETURN_IF_ERROR(Read(f, "file_cache", "max_segments", &o.max_segments, origin));
    if (f.contains("eviction")) {
      std::string eviction;
      RETURN_IF_ERROR(Read(f, "file_cache", "eviction", &eviction, origin));
      if (eviction == "lru")
        o.policy = EvictionPolicy::kLru;
      else if (eviction == "lfu")
        o.policy = EvictionPolicy::kLfu;
      else if (eviction == "hybrid")
        o.policy = EvictionPolicy::kHybrid;
      else
        return Status::InvalidArgument(origin, "file_cache.eviction must be lru, lfu or hybrid");
    }
    if (o.max_entries == 0 || o.max_segments == 0) {
      return Status::InvalidArgument(origin, "file_cache.max_entries and max_segments must be at least 1");
    }
  }
  if (root.contains("llm")) {
    const json& l = root["llm"];
    RETURN_IF_ERROR(CheckKeys(l, "llm",
                              {"provider", "model", "utility_model", "base_url", "max_retries", "timeout_seconds",
                               "max_tokens", "prices", "context_window", "compact_at", "prompt_cache", "vision"},
                              origin));
    RETURN_IF_ERROR(Read(l, "llm", "context_window", &c.llm_context_window, origin));
    if (c.llm_context_window != 0 &&
        (c.llm_context_window < kMinContextWindow || c.llm_context_window > kMaxContextWindow)) {
      return Status::InvalidArgument(origin, "llm.context_window must be between " + std::to_string(kMinContextWindow) +
                                                 " and " + std::to_string(kMaxContextWindow) + " tokens");
    }
    if (l.contains("compact_at")) {
      const json& at = l["compact_at"];
      if (!at.is_number() || at.get<double>() < 0.1 || at.get<double>() > 0.95) {
        return Status::InvalidArgument(origin, "llm.compact_at must be a number between 0.1 and 0.95");
      }
      c.llm_compact_at = at.get<double>();
    }
    RETURN_IF_ERROR(Read(l, "llm", "prompt_cache", &c.llm_prompt_cache, origin));
    if (c.llm_prompt_cache != "auto" && c.llm_prompt_cache != "on" && c.llm_prompt_cache != "off") {
      return Status::InvalidArgument(origin, "llm.prompt_cache must be auto, on or off");
    }
    RETURN_IF_ERROR(Read(l, "llm", "provider", &c.llm_provider, origin));
    RETURN_IF_ERROR(Read(l, "llm", "model", &c.llm_model, origin));
    RETURN_IF_ERROR(Read(l, "llm", "utility_model", &c.llm_utility_model, origin));
    RETURN_IF_ERROR(Read(l, "llm", "base_url", &c.llm_base_url, origin));
    RETURN_IF_ERROR(Read(l, "llm", "max_retries", &c.llm_max_retries, origin));
    RETURN_IF_ERROR(Read(l, "llm", "timeout_seconds", &c.llm_timeout_seconds, origin));
    RETURN_IF_ERROR(Read(l, "llm", "max_tokens", &c.llm_max_tokens, origin));
    if (l.contains("vision")) {
      const json& v = l["vision"];
      const char* shape = "llm.vision must be true, false or {\"MODEL\": true|false, ...} (\"*\": any model)";
      if (v.is_boolean()) {
        c.llm_vision = {{"*", v.get<bool>()}};
      } else if (v.is_object()) {
        c.llm_vision.clear();
        for (const auto& [model, on] : v.items()) {
          if (!on.is_boolean() || model.empty()) return Status::InvalidArgument(origin, shape);
          c.llm_vision[model] = on.get<bool>();
        }
      } else {
        return Status::InvalidArgument(origin, shape);
      }
    }
    if (l.contains("prices")) {
      const json& prices = l["prices"];
      if (!prices.is_object()) return Status::InvalidArgument(origin, "llm.prices must be an object");
      for (auto it = prices.begin(); it != prices.end(); ++it) {
        const json& p = it.value();
        std::string where = "llm.prices." + it.key();
        const char* shape =
            " must be {\"input_per_mtok\": N, \"output_per_mtok\": N} (and optionally \"cache_read_per_mtok\", "
            "\"cache_write_per_mtok\"), each a number of USD from 0 to 1000000";
        if (!p.is_object() || !p.contains("input_per_mtok") || !p.contains("output_per_mtok")) {
          return Status::InvalidArgument(origin, where + shape);
        }
        Config::Price price;
        for (auto& [key, value] : p.items()) {
          double* to = key == "input_per_mtok"    ? &price.input_per_mtok
                       : key == "output_per_mtok" ? &price.output_per_mtok
                                                  : nullptr;
          if (key == "cache_read_per_mtok") to = &price.cache_read_per_mtok.emplace();
          if (key == "cache_write_per_mtok") to = &price.cache_write_per_mtok.emplace();
          if (to == nullptr) return Status::InvalidArgument(origin, where + ": unknown field " + key + ";" + shape);
          if (!value.is_number() || value.get<double>() < 0 || !(value.get<double>() <= 1e6)) {
            return Status::InvalidArgument(origin, where + shape);
          }
          *to = value.get<double>();
        }
        c.llm_prices[it.key()] = price;
      }
    }
  }
  if (root.contains("agent")) {
    const json& a = root["agent"];
    // max_turns: as budgets.max_turns
    RETURN_IF_ERROR(CheckKeys(
        a, "agent", {"max_turns", "profile", "subagent_concurrency", "subagent_timeout_seconds", "subagent_model"},
        origin));
    RETURN_IF_ERROR(Read(a, "agent", "max_turns", &c.max_turns, origin));
    RETURN_IF_ERROR(Read(a, "agent", "profile", &c.profile, origin));
    RETURN_IF_ERROR(Read(a, "agent", "subagent_concurrency", &c.subagent_concurrency, origin));
    RETURN_IF_ERROR(Read(a, "agent", "subagent_timeout_seconds", &c.subagent_timeout_seconds, origin));
    RETURN_IF_ERROR(Read(a, "agent", "subagent_model", &c.subagent_model, origin));
    if (c.subagent_model != "planner" && c.subagent_model != "utility") {
      return Status::InvalidArgument(origin, "agent.subagent_model must be planner or utility");
    }
    if (c.subagent_concurrency > 64) {
      return Status::InvalidArgument(origin, "agent.subagent_concurrency is at most 64");
    }
    if (c.subagent_timeout_seconds < 1 || c.subagent_timeout_seconds > 86400) {
      return Status::InvalidArgument(origin, "agent.subagent_timeout_seconds must be from 1 to 86400");
    }
    Profile unused;
    if (!ParseProfile(c.profile, &unused)) {
      return Status::InvalidArgument(origin, "agent.profile must be fast, auto, safe or strict");
    }
  }
  if (root.contains("validation")) {
    // The seed-002 checks live under validation, beside the validators.
    json v = root["validation"];
    if (v.is_object()) {
      for (auto [key, role] : {std::pair<const char*, ReviewRole>{"validate_specs", ReviewRole::kSpec},
                               {"validate_progress", ReviewRole::kProgress}}) {
        bool on = false;
        if (!v.contains(key)) continue;
        RETURN_IF_ERROR(Read(v, "validation", key, &on, origin));
        c.reviews.of(role).enabled = on;
        v.erase(key);
      }
      if (v.contains("progress_every")) {
        RETURN_IF_ERROR(Read(v, "validation", "progress_every", &c.reviews.progress_every, origin));
        if (c.reviews.progress_every < 1)
          return Status::InvalidArgument(origin, "validation.progress_every must be at least 1");
        v.erase("progress_every");
      }
    }
    RETURN_IF_ERROR(ParseValidation(v, origin, &c.validation));
  }
  if (root.contains("reviewers")) RETURN_IF_ERROR(ParseReviewers(root["reviewers"], origin, &c.reviews));
  if (root.contains("workflows")) {
    const json& w = root["workflows"];
    RETURN_IF_ERROR(CheckKeys(w, "workflows", {"default", "tdd"}, origin));
    if (w.contains("default")) {
      RETURN_IF_ERROR(Read(w, "workflows", "default", &c.workflow, origin));
      if (!ParseWorkflow(c.workflow)) {
        return Status::InvalidArgument(origin, std::string("workflows.default must be one of ") + WorkflowNames());
      }
    }
    if (w.contains("tdd")) {
      const json& t = w["tdd"];
      RETURN_IF_ERROR(CheckKeys(t, "workflows.tdd", {"test_patterns"}, origin));
      if (t.contains("test_patterns")) {
        RETURN_IF_ERROR(
            ReadStrings(t["test_patterns"], "workflows.tdd.test_patterns", &c.reviews.test_patterns, origin));
      }
    }
  }
  if (root.contains("checks")) {
    const json& k = root["checks"];
    RETURN_IF_ERROR(CheckKeys(k, "checks", {"build", "lint", "tests", "timeout_seconds", "retry_cap"}, origin));
    for (auto [name, into] : {std::pair<const char*, std::optional<std::string>*>{"build", &c.checks.build},
                              {"lint", &c.checks.lint},
                              {"tests", &c.checks.tests}}) {
      if (!k.contains(name)) continue;
      std::string command;
      RETURN_IF_ERROR(Read(k, "checks", name, &command, origin));
      *into = command;
    }
    RETURN_IF_ERROR(Read(k, "checks", "timeout_seconds", &c.checks.timeout_seconds, origin));
    RETURN_IF_ERROR(Read(k, "checks", "retry_cap", &c.checks.retry_cap, origin));
    if (c.checks.timeout_seconds < 1 || c.checks.retry_cap < 1) {
      return Status::InvalidArgument(origin, "checks.timeout_seconds and checks.retry_cap must be at least 1");
    }
  }
  if (root.contains("budgets")) RETURN_IF_ERROR(ParseBudgets(root["budgets"], origin, &c));
  if (root.contains("hooks")) RETURN_IF_ERROR(ParseHooks(root["hooks"], origin, &c.hooks));
  if (root.contains("mcpServers")) RETURN_IF_ERROR(ParseMcpServers(root["mcpServers"], origin, &c.mcp_servers));
  if (root.contains("permissions")) {
    const json& p = root["permissions"];
    RETURN_IF_ERROR(CheckKeys(p, "permissions", {"deny", "ask", "allow"}, origin));
    // Rules combine with the base's (the user's and the workspace's).
    for (auto [key, into] : {std::pair<const char*, std::vector<std::string>*>{"deny", &c.permissions.deny},
                             {"ask", &c.permissions.ask},
                             {"allow", &c.permissions.allow}}) {
      if (!p.contains(key)) continue;
      std::vector<std::string> more;
      RETURN_IF_ERROR(ReadStrings(p[key], std::string("permissions.") + key, &more, origin));
      into->insert(into->end(), more.begin(), more.end());
    }
  }
  for (auto [key, into] : {std::pair<const char*, std::vector<std::string>*>{"ForbiddenCommands", &c.permissions.deny},
                           {"AllowedCommands", &c.permissions.allow}}) {
    if (!root.contains(key)) continue;
    std::vector<std::string> more;
    RETURN_IF_ERROR(ReadStrings(root[key], key, &more, origin));
    into->insert(into->end(), more.begin(), more.end());
  }
  if (root.contains("stall")) {
    const json& st = root["stall"];
    RETURN_IF_ERROR(CheckKeys(
        st, "stall", {"enabled", "repeat", "failures", "messages", "alternation_steps", "no_progress_turns"}, origin));
    StallOptions& o = c.stall;
    RETURN_IF_ERROR(Read(st, "stall", "enabled", &o.enabled, origin));
    RETURN_IF_ERROR(Read(st, "stall", "repeat", &o.repeat, origin));
    RETURN_IF_ERROR(Read(st, "stall", "failures", &o.failures, origin));
    RETURN_IF_ERROR(Read(st, "stall", "messages", &o.messages, origin));
    RETURN_IF_ERROR(Read(st, "stall", "alternation_steps", &o.alternation_steps, origin));
    RETURN_IF_ERROR(Read(st, "stall", "no_progress_turns", &o.no_progress_turns, origin));
    if (o.repeat < 2 || o.failures < 2 || o.messages < 2 || o.alternation_steps < 4 || o.no_progress_turns < 1 ||
        o.repeat > 50 || o.failures > 50 || o.messages > 50 || o.alternation_steps > 50 || o.no_progress_turns > 1000) {
      return Status::InvalidArgument(origin,
                                     "stall: repeat, failures and messages must be from 2 to 50, "
                                     "alternation_steps from 4 to 50, no_progress_turns from 1 to 1000");
    }
  }
  if (root.contains("breakers")) {
    const json& b = root["breakers"];
    RETURN_IF_ERROR(
        CheckKeys(b, "breakers", {"enabled", "failures", "cooldown_seconds", "trials", "successes"}, origin));
    BreakerOptions& o = c.breakers;
    int cooldown = static_cast<int>(std::chrono::duration_cast<seconds>(o.cooldown).count());
    RETURN_IF_ERROR(Read(b, "breakers", "enabled", &o.enabled, origin));
    RETURN_IF_ERROR(Read(b, "breakers", "failures", &o.failures, origin));
    RETURN_IF_ERROR(Read(b, "breakers", "cooldown_seconds", &cooldown, origin));
    RETURN_IF_ERROR(Read(b, "breakers", "trials", &o.trials, origin));
    RETURN_IF_ERROR(Read(b, "breakers", "successes", &o.successes, origin));
    if (o.failures < 1 || cooldown < 1 || o.trials < 1 || o.successes < 1) {
      return Status::InvalidArgument(origin,
                                     "breakers: failures, cooldown_seconds, trials and successes must be at "
                                     "least 1");
    }
    if (cooldown > 3600) return Status::InvalidArgument(origin, "breakers.cooldown_seconds is at most 3600");
    o.cooldown = seconds(cooldown);
  }
  return c;
}

}  // namespace odin
