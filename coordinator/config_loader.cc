#include "coordinator/config_loader.h"

#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "coordinator/trust_store.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxConfigBytes = 1 << 20;

std::string Get(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The file's text, or nullopt if there is none. A FIFO or a device (a
// repository's symlink to /dev/zero) is an error, not a hang.
StatusOr<std::optional<std::string>> ReadConfigFile(const std::string& path) {
  if (!PathExists(path)) return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  return std::optional<std::string>(std::move(text));
}

std::string Joined(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// ${VAR} in the MCP servers' settings, from the environment of this run.
StatusOr<LoadedConfig> ExpandMcpServers(LoadedConfig l, const std::map<std::string, std::string>& env) {
  for (auto& [name, server] : l.config.mcp_servers) {
    auto expand = [&](std::string* text) -> Status {
      ExpandResult r = ExpandVariables(*text, env);
      if (!r.missing.empty()) {
        return Status::InvalidArgument(server.source,
                                       "mcpServers." + name + ": ${" + r.missing + "} is not set (and has no default)");
      }
      *text = std::move(r.text);
      return Status::OK();
    };
    RETURN_IF_ERROR(expand(&server.command));
    RETURN_IF_ERROR(expand(&server.url));
    for (std::string& a : server.args) RETURN_IF_ERROR(expand(&a));
    for (auto& [k, v] : server.env) RETURN_IF_ERROR(expand(&v));
    for (auto& [k, v] : server.headers) RETURN_IF_ERROR(expand(&v));
  }
  return l;
}

}  // namespace

std::string McpJsonPath(const Workspace& ws) { return JoinPath(ws.root, ".mcp.json"); }

const char* WorkspaceTrustName(WorkspaceTrust t) {
  switch (t) {
    case WorkspaceTrust::kNoConfig: return "no config";
    case WorkspaceTrust::kTrusted: return "trusted";
    case WorkspaceTrust::kUntrusted: return "untrusted";
    case WorkspaceTrust::kChanged: return "changed";
  }
  return "?";
}

std::string UserConfigDir(const std::map<std::string, std::string>& env) {
  std::string xdg = Get(env, "XDG_CONFIG_HOME");
  if (!xdg.empty() && xdg[0] == '/') return JoinPath(xdg, "odin");
  std::string home = Get(env, "HOME");
  if (home.empty() || home[0] != '/') {
    const passwd* pw = getpwuid(geteuid());
    home = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
  }
  if (home.empty() || home[0] != '/') return "";
  return JoinPath(home, ".config/odin");
}

StatusOr<LoadedConfig> LoadConfig(const Workspace& ws, const std::map<std::string, std::string>& env) {
  LoadedConfig l;
  std::string dir = UserConfigDir(env);
  Config user;
  if (!dir.empty()) {
    l.user_config_path = JoinPath(dir, "odinconfig.json");
    l.trust_store_path = JoinPath(dir, "trusted.json");
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(l.user_config_path));
    if (text) {
      l.user_config_found = true;
      ASSIGN_OR_RETURN(user, ParseConfig(*text, l.user_config_path));
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(ws.config_path));
  // .mcp.json is Claude Code's file: one Odin cannot use is ignored with a
  // notice (its servers do not start) rather than stopping every run.
  std::string mcp_path = McpJsonPath(ws);
  std::optional<std::string> mcp_text;
  std::string mcp_problem;
  if (StatusOr<std::optional<std::string>> read = ReadConfigFile(mcp_path); read.ok()) {
    mcp_text = *read;
  } else {
    mcp_problem = read.status().message();
    mcp_text = "unreadable: " + mcp_problem;  // for the trust hash only
  }
  if (!text && !mcp_text) {
    l.config = user;
    return ExpandMcpServers(std::move(l), env);
  }
  std::string workspace_json = text.value_or("{}");
  // Every key is checked, whether it will apply or not.
  ASSIGN_OR_RETURN(Config whole, ParseConfig(workspace_json, ws.config_path, user));
  if (mcp_text && mcp_problem.empty()) {
    json root = json::parse(*mcp_text, nullptr, false);
    StatusOr<Config> with = root.is_object() ? ParseConfig(*mcp_text, mcp_path, whole)
                                             : Status::InvalidArgument(mcp_path, "not a JSON object");
    for (auto it = root.begin(); root.is_object() && it != root.end() && with.ok(); ++it) {
      if (it.key() != "mcpServers") with = Status::InvalidArgument(mcp_path, "unknown key '" + it.key() + "'");
    }
    for (const auto& [name, server] : with.ok() ? with->mcp_servers : whole.mcp_servers) {
      if (with.ok() && server.source == mcp_path && !server.sandbox) {
        with = Status::InvalidArgument(mcp_path, "mcpServers." + name +
                                                     ": \"sandbox\": false is for the user's own config; a "
                                                     "workspace's servers always run sandboxed");
        break;
      }
    }
    if (with.ok()) {
      whole = std::move(*with);
    } else {
      mcp_problem = with.status().message();
    }
  }
  if (!mcp_problem.empty()) l.notices.push_back("ignoring .mcp.json, its servers do not start: " + mcp_problem);
  // A repository's hook runs sandboxed, always: only the user's own config
  // may run one on the host. The same for its MCP servers.
  for (auto& [event, groups] : whole.hooks.events) {
    for (HookGroup& g : groups) {
      for (HookCommand& h : g.hooks) {
        if (h.source != ws.config_path) continue;
        h.from_workspace = true;
        if (!h.sandbox) {
          return Status::InvalidArgument(ws.config_path, std::string("hooks.") + HookEventName(event) +
                                                             ": \"sandbox\": false is for the user's own config; "
                                                             "a workspace's hooks always run sandboxed");
        }
      }
    }
  }
  for (auto& [name, server] : whole.mcp_servers) {
    if (server.source != ws.config_path && server.source != mcp_path) continue;
    server.from_workspace = true;
    if (!server.sandbox) {
      return Status::InvalidArgument(server.source, "mcpServers." + name +
                                                        ": \"sandbox\": false is for the user's own config; a "
                                                        "workspace's servers always run sandboxed");
    }
  }
  if (!mcp_problem.empty()) mcp_text.reset();  // its servers count for nothing but the hash
  l.security =
      TrustedOnlySettings(workspace_json, mcp_problem.empty() ? mcp_text.value_or("") : "unusable: " + mcp_problem);
  std::optional<std::string> pinned;
  if (!l.trust_store_path.empty()) {
    StatusOr<std::optional<std::string>> found = TrustStore(l.trust_store_path).Find(ws.root);
    if (found.ok()) {
      pinned = *found;
    } else {
      l.trust_store_error = found.status().message();
      l.notices.push_back("trusting no workspace: " + l.trust_store_error);
    }
  }
  l.trust = !pinned                        ? WorkspaceTrust::kUntrusted
            : *pinned == l.security.sha256 ? WorkspaceTrust::kTrusted
                                           : WorkspaceTrust::kChanged;
  if (l.trust == WorkspaceTrust::kTrusted) {
    l.config = std::move(whole);
    return ExpandMcpServers(std::move(l), env);
  }
  UntrustedSplit split = SplitUntrusted(workspace_json, user);
  ASSIGN_OR_RETURN(l.config, ParseConfig(split.applied_json, ws.config_path, user));
  l.ignored = std::move(split.ignored);
  for (const auto& [name, server] : whole.mcp_servers) {
    if (server.source == mcp_path) l.ignored.push_back("mcpServers." + name + " (.mcp.json)");
  }
  if (!l.ignored.empty()) {
    l.notices.push_back(l.trust == WorkspaceTrust::kChanged
                            ? "untrusted workspace: its trusted settings changed since `odin trust`; ignoring " +
                                  Joined(l.ignored) + " in odinconfig.json (run `odin trust` to trust them)"
                            : "untrusted workspace: ignoring " + Joined(l.ignored) +
                                  " in odinconfig.json (run `odin trust` to trust it)");
  }
  return ExpandMcpServers(std::move(l), env);
}

void PrintConfigNotices(const LoadedConfig& loaded) {
  for (const std::string& n : loaded.notices) std::cerr << "odin: " << n << "\n";
}

}  // namespace odin
