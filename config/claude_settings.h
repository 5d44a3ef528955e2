#pragma once
// Claude Code's settings files read as Odin's settings, so that a project set
// up for Claude Code keeps its guards: ~/.claude/settings.json (the user's,
// $CLAUDE_CONFIG_DIR if set), and a workspace's .claude/settings.json and
// .claude/settings.local.json.
//
// Only "hooks" and "permissions" (allow, ask, deny, in Claude Code's rule
// syntax: gates/tool_rules.h) are taken. Everything else is skipped and
// named once, never run or applied: keys that run programs or change the
// environment (env, apiKeyHelper, awsAuthRefresh, awsCredentialExport,
// otelHeadersHelper, statusLine), modes (permissions.defaultMode,
// disableBypassPermissionsMode), more directories
// (permissions.additionalDirectories: the workspace is the workspace),
// disableAllHooks (a repository may not switch the user's hooks off),
// enableAllProjectMcpServers, a hook of another type than "command" (http,
// prompt, agent, mcp_tool), a hook field Odin has no use for (async,
// statusMessage, if, shell, once), an event Odin has no hook point for.
//
// config_loader.h layers them: defaults, ~/.claude/settings.json, the user's
// odinconfig.json; then, in a workspace, .claude/settings.json,
// .claude/settings.local.json and odinconfig.json, later files over earlier
// ones; rule lists and hooks join across all of them, and a deny from any
// file is judged before any ask or allow (gates/command_rules.h). A
// workspace's files are the repository's: their hooks and allow rules apply
// only once the workspace is trusted (trust.h), and their hooks always run
// sandboxed.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct ClaudeSettings {
  // The file's hooks and permissions as odinconfig.json writes them, for
  // ParseConfig ("{}" when it has neither).
  std::string odin_json;
  // What was not taken, by key: "env", "statusLine",
  // "permissions.defaultMode", "hooks.Notification[0].hooks[1] (type http)".
  std::vector<std::string> skipped;
};

// Reads a Claude Code settings file. path names it in errors. rules_root:
// where a path rule's "/x" starts when that is not the workspace (the user's
// file: its own directory, ~/.claude), "" for a workspace's file; such rules
// are rewritten to the absolute form "//root/x". An error names the file and
// the key: not a JSON object, or hooks or permissions of the wrong shape (a
// broken deny list must not go unnoticed).
StatusOr<ClaudeSettings> ReadClaudeSettings(const std::string& text, const std::string& path,
                                            const std::string& rules_root);

}  // namespace odin
