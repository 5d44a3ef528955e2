#include "config/config_loader.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "config/claude_settings.h"
#include "gates/tool_rules.h"
#include "planner/instructions.h"
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

// The user's home: $HOME, else the password database's; "" unless absolute.
std::string HomeDir(const std::map<std::string, std::string>& env) {
  std::string home = Get(env, "HOME");
  if (home.empty() || home[0] != '/') {
    const passwd* pw = getpwuid(geteuid());
    home = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
  }
  return home.empty() || home[0] != '/' ? "" : home;
}

// Claude Code's user directory: $CLAUDE_CONFIG_DIR, else ~/.claude ("" if
// there is no home).
std::string ClaudeUserDir(const std::map<std::string, std::string>& env) {
  std::string dir = Get(env, "CLAUDE_CONFIG_DIR");
  if (!dir.empty() && dir[0] == '/') return dir;
  std::string home = HomeDir(env);
  return home.empty() ? "" : JoinPath(home, ".claude");
}

// The user's own commands, agents and skills: Claude Code's directory's,
// then Odin's own over them.
ClaudeDefs ReadUserDefs(const std::map<std::string, std::string>& env) {
  ClaudeDefs defs;
  for (auto [dir, shown] : {std::pair{ClaudeUserDir(env), std::string("~/.claude/")},
                            std::pair{UserConfigDir(env), std::string("~/.config/odin/")}}) {
    if (dir.empty()) continue;
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(dir);
    if (!files.ok()) continue;
    if (Get(env, "CLAUDE_CONFIG_DIR") == dir || Get(env, "XDG_CONFIG_HOME") + "/odin" == dir) shown = dir + "/";
    defs = MergeDefs(std::move(defs), ReadClaudeDefs(*files, "", shown, "user"));
  }
  return defs;
}

// "ignoring env, statusLine in ~/.claude/settings.json (Odin takes only its
// hooks and permissions)", or nothing when the file had nothing else.
void NoteSkipped(const ClaudeSettings& s, const std::string& shown, std::vector<std::string>* notices) {
  if (s.skipped.empty()) return;
  notices->push_back("ignoring " + Joined(s.skipped) + " in " + shown +
                     " (Odin takes only its hooks and permissions: docs/claude-code.md)");
}

// A workspace's Claude Code settings files, in the order they layer.
struct WorkspaceClaudeFile {
  std::string label;  // ".claude/settings.json"
  std::string path;   // absolute
  ClaudeSettings settings;
};

StatusOr<std::vector<WorkspaceClaudeFile>> ReadWorkspaceClaudeFiles(const Workspace& ws,
                                                                    std::vector<std::string>* notices) {
  std::vector<WorkspaceClaudeFile> files;
  ASSIGN_OR_RETURN(WorkspaceFiles root, WorkspaceFiles::Open(ws.root));
  // A link is not read: the protected path is the link, not what it points
  // at, so a command could rewrite the rules behind it for the next session.
  if (root.Look(".claude").is_link()) {
    notices->push_back(
        "ignoring .claude: it is a symbolic link, and Odin reads Claude Code's files only from a "
        "directory it protects");
    return files;
  }
  for (const char* label : {".claude/settings.json", ".claude/settings.local.json"}) {
    if (root.Look(label).is_link()) {
      notices->push_back(std::string("ignoring ") + label +
                         ": it is a symbolic link, and Odin reads settings only from a file it protects");
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadWorkspaceConfig(ws.root, label));
    if (!text) continue;
    std::string path = JoinPath(ws.root, label);
    ASSIGN_OR_RETURN(ClaudeSettings settings, ReadClaudeSettings(*text, path, ""));
    NoteSkipped(settings, label, notices);
    files.push_back({label, path, std::move(settings)});
  }
  return files;
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
  std::string home = HomeDir(env);
  if (home.empty()) return "";
  return JoinPath(home, ".config/odin");
}

StatusOr<LoadedConfig> LoadConfig(const Workspace& ws, const std::map<std::string, std::string>& env) {
  LoadedConfig l;
  std::string dir = UserConfigDir(env);
  Config user;
  ClaudeDefs user_defs = ReadUserDefs(env);
  // Claude Code's user settings first: the user's odinconfig.json goes over them.
  if (std::string claude = ClaudeUserDir(env); !claude.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> md, ReadUserFile(JoinPath(claude, "CLAUDE.md"), kMaxConfigBytes));
    l.user_claude_md = md.value_or("");
    std::string path = JoinPath(claude, "settings.json");
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadUserFile(path, kMaxConfigBytes));
    if (text) {
      ASSIGN_OR_RETURN(ClaudeSettings settings, ReadClaudeSettings(*text, path, claude));
      NoteSkipped(settings, path, &l.notices);
      ASSIGN_OR_RETURN(user, ParseConfig(settings.odin_json, path));
    }
  }
  if (!dir.empty()) {
    l.user_config_path = JoinPath(dir, "odinconfig.json");
    l.trust_store_path = JoinPath(dir, "trusted.json");
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadUserFile(l.user_config_path, kMaxConfigBytes));
    if (text) {
      l.user_config_found = true;
      ASSIGN_OR_RETURN(user, ParseConfig(*text, l.user_config_path, user));
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadWorkspaceConfig(ws.root, "odinconfig.json"));
  // .mcp.json is Claude Code's file: one Odin cannot use is ignored with a
  // notice (its servers do not start) rather than stopping every run.
  std::string mcp_path = McpJsonPath(ws);
  StatusOr<std::optional<std::string>> mcp_text = ReadWorkspaceConfig(ws.root, ".mcp.json");
  ASSIGN_OR_RETURN(std::vector<WorkspaceClaudeFile> claude, ReadWorkspaceClaudeFiles(ws, &l.notices));
  // The root's CLAUDE.md and CLAUDE.local.md: instructions read only when
  // trusted, so the hash covers them and their imports ("instructions
  // (CLAUDE.md)"); what they cannot read is the instruction loader's to name.
  bool claude_md = false;
  if (StatusOr<WorkspaceFiles> root = WorkspaceFiles::Open(ws.root); root.ok()) {
    claude_md = root->Look("CLAUDE.md").exists() || root->Look("CLAUDE.local.md").exists();
  }
  // The workspace's commands, agents and skills: read now, and used only
  // if trusted with exactly these bytes.
  DefsDigest defs_digest;
  ClaudeDefs workspace_defs;
  if (StatusOr<WorkspaceFiles> root = WorkspaceFiles::Open(ws.root);
      root.ok() && root->Look(".claude").type == FileEntry::Type::kDirectory) {
    workspace_defs = ReadClaudeDefs(*root, ".claude", ".claude/", "project", &defs_digest);
  }
  l.defs = std::move(user_defs);
  if (!text && mcp_text.ok() && !*mcp_text && claude.empty() && !claude_md && defs_digest.text.empty()) {
    l.config = user;
    return ExpandMcpServers(std::move(l), env);
  }
  std::string workspace_json = text.value_or("{}");
  // Telemetry leaves the machine: only the user's own config turns it on,
  // never a repository's, trusted or not.
  if (nlohmann::json parsed = ParseJson(workspace_json); parsed.is_object() && parsed.contains("telemetry")) {
    parsed.erase("telemetry");
    workspace_json = parsed.dump();
    l.notices.push_back("ignoring telemetry in " + ws.config_path +
                        ": only your own config (or ODIN_TELEMETRY=1) turns telemetry on");
  }
  // Every key is checked, whether it will apply or not: Claude Code's files
  // first, odinconfig.json over them.
  Config whole = user;
  std::vector<ExtraSettingsFile> extra;
  for (const WorkspaceClaudeFile& f : claude) {
    ASSIGN_OR_RETURN(whole, ParseConfig(f.settings.odin_json, f.path, whole));
    extra.push_back({f.label, f.settings.odin_json});
  }
  std::vector<ExtraSettingsFile> instructions;
  std::string claude_sha;
  if (claude_md) {
    claude_sha = ClaudeFilesSha256(ws.root, UnreadablePatterns(whole.permissions, ws.root, HomeDir(env)));
    if (!claude_sha.empty()) {
      instructions.push_back({"CLAUDE.md", nlohmann::json({{"instructions", claude_sha}}).dump()});
    }
  }
  if (!defs_digest.text.empty()) {
    instructions.push_back(
        {".claude/commands, agents, skills", nlohmann::json({{"definitions", Sha256Hex(defs_digest.text)}}).dump()});
  }
  extra.insert(extra.end(), instructions.begin(), instructions.end());
  ASSIGN_OR_RETURN(whole, ParseConfig(workspace_json, ws.config_path, whole));
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
        bool claude_file = std::any_of(claude.begin(), claude.end(),
                                       [&h](const WorkspaceClaudeFile& f) { return f.path == h.source; });
        if (h.source != ws.config_path && !claude_file) continue;
        h.from_workspace = true;
        if (!h.sandbox) {
          return Status::InvalidArgument(h.source, std::string("hooks.") + HookEventName(event) +
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
  l.security = TrustedOnlySettings(workspace_json, mcp_trusted, extra);
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
    l.claude_sha256 = claude_sha;
    l.defs = MergeDefs(std::move(l.defs), std::move(workspace_defs));
    l.config = std::move(whole);
    return ExpandMcpServers(std::move(l), env);
  }
  // Untrusted: each file only tightens, in the same order.
  Config applied = user;
  std::vector<std::string> ignored_elsewhere;
  for (const WorkspaceClaudeFile& f : claude) {
    UntrustedSplit split = SplitUntrusted(f.settings.odin_json, applied);
    ASSIGN_OR_RETURN(applied, ParseConfig(split.applied_json, f.path, applied));
    for (const std::string& key : split.ignored) ignored_elsewhere.push_back(key + " (" + f.label + ")");
  }
  for (const ExtraSettingsFile& f : instructions) {
    ignored_elsewhere.push_back((f.label == "CLAUDE.md" ? "instructions (" : "definitions (") + f.label + ")");
  }
  UntrustedSplit split = SplitUntrusted(workspace_json, applied);
  ASSIGN_OR_RETURN(l.config, ParseConfig(split.applied_json, ws.config_path, applied));
  l.ignored = std::move(split.ignored);
  for (const auto& [name, server] : whole.mcp_servers) {
    if (server.source == mcp_path) l.ignored.push_back("mcpServers." + name + " (.mcp.json)");
  }
  // odinconfig.json's keys are named bare, the other files' with the file.
  std::string where = ignored_elsewhere.empty() ? " in odinconfig.json" : "";
  if (!ignored_elsewhere.empty()) {
    for (std::string& key : l.ignored) {
      if (key.find(" (") == std::string::npos) key += " (odinconfig.json)";
    }
  }
  l.ignored.insert(l.ignored.end(), ignored_elsewhere.begin(), ignored_elsewhere.end());
  if (!l.ignored.empty()) {
    l.notices.push_back(l.trust == WorkspaceTrust::kChanged
                            ? "untrusted workspace: its trusted settings changed since `odin trust`; ignoring " +
                                  Joined(l.ignored) + where + " (run `odin trust` to trust them)"
                            : "untrusted workspace: ignoring " + Joined(l.ignored) + where +
                                  " (run `odin trust` to trust it)");
  }
  return ExpandMcpServers(std::move(l), env);
}

void PrintConfigNotices(const LoadedConfig& loaded) {
  for (const std::string& n : loaded.notices) std::cerr << "odin: " << n << "\n";
  // A definition file not taken is said; one shadowed is /help's to show.
  for (const std::string& p : loaded.defs.problems) {
    if (p.find(" is shadowed by ") == std::string::npos) std::cerr << "odin: " << p << "\n";
  }
}

}  // namespace odin
