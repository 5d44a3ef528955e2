#include "config/config_loader.h"

#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "config/trust_store.h"
#include "workspace/host_files.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxConfigBytes = 1 << 20;

std::string Get(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The text of a workspace's file (odinconfig.json, .mcp.json), or nullopt
// if there is none: through the safe file layer, so a symlink out of the
// workspace, a FIFO or a device (a repository's link to /dev/zero) is an
// error, not a read of someone else's file or a hang.
StatusOr<std::optional<std::string>> ReadWorkspaceConfig(const std::string& root, const std::string& name) {
  ASSIGN_OR_RETURN(WorkspaceFiles files, WorkspaceFiles::Open(root));
  if (!files.Look(name).exists()) return std::optional<std::string>();
  StatusOr<std::string> text = files.ReadFile(name, kMaxConfigBytes);
  if (!text.ok()) return text.status().WithContext(JoinPath(root, name));
  return std::optional<std::string>(std::move(*text));
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

// .mcp.json parsed onto whole: only mcpServers, and only sandboxed ones. An
// error is why the file is ignored.
StatusOr<Config> WithMcpJson(const std::string& text, const std::string& path, const Config& whole) {
  json root = ParseJson(text);
  if (!root.is_object()) return Status::InvalidArgument(path, "not a JSON object");
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() != "mcpServers") return Status::InvalidArgument(path, "unknown key '" + it.key() + "'");
  }
  ASSIGN_OR_RETURN(Config with, ParseConfig(text, path, whole));
  for (const auto& [name, server] : with.mcp_servers) {
    if (server.source == path && !server.sandbox) {
      return Status::InvalidArgument(path, "mcpServers." + name +
                                               ": \"sandbox\": false is for the user's own config; a "
                                               "workspace's servers always run sandboxed");
    }
  }
  return with;
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
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadUserFile(l.user_config_path, kMaxConfigBytes));
    if (text) {
      l.user_config_found = true;
      ASSIGN_OR_RETURN(user, ParseConfig(*text, l.user_config_path));
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadWorkspaceConfig(ws.root, "odinconfig.json"));
  // .mcp.json is Claude Code's file: one Odin cannot use is ignored with a
  // notice (its servers do not start) rather than stopping every run.
  std::string mcp_path = McpJsonPath(ws);
  StatusOr<std::optional<std::string>> mcp_text = ReadWorkspaceConfig(ws.root, ".mcp.json");
  if (!text && mcp_text.ok() && !*mcp_text) {
    l.config = user;
    return ExpandMcpServers(std::move(l), env);
  }
  std::string workspace_json = text.value_or("{}");
  // Every key is checked, whether it will apply or not.
  ASSIGN_OR_RETURN(Config whole, ParseConfig(workspace_json, ws.config_path, user));
  // What of .mcp.json the trust hash covers: the file, or why it is unusable.
  std::string mcp_trusted;
  if (mcp_text.ok() && *mcp_text) {
    StatusOr<Config> with = WithMcpJson(**mcp_text, mcp_path, whole);
    if (with.ok()) {
      whole = std::move(*with);
      mcp_trusted = **mcp_text;
    } else {
      mcp_text = with.status();
    }
  }
  if (!mcp_text.ok()) {
    l.notices.push_back("ignoring .mcp.json, its servers do not start: " + mcp_text.status().message());
    mcp_trusted = "unusable: " + mcp_text.status().message();
  }
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
    if (!server.sandbox) {  // .mcp.json's were refused above, as unusable
      return Status::InvalidArgument(server.source, "mcpServers." + name +
                                                        ": \"sandbox\": false is for the user's own config; a "
                                                        "workspace's servers always run sandboxed");
    }
  }
  l.security = TrustedOnlySettings(workspace_json, mcp_trusted);
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
