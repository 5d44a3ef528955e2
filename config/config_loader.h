#pragma once
// The one place Odin's settings are loaded: the defaults, then the user's
// odinconfig.json, then the workspace's as far as the user trusts it
// (trust.h). Every front end gets its Config from LoadConfig: odin exec and
// odin tool through Runtime::Start, odin -p, the interactive session and the
// daemon's sessions through AgentSession::Start, odin doctor directly.
//
// The user's config directory is $XDG_CONFIG_HOME/odin, else
// $HOME/.config/odin. It holds the user's odinconfig.json (always trusted,
// the workspace's schema) and the trust store (trust_store.h).
//
// Layering: a trusted workspace's settings apply over the user's as a file
// parsed onto a base does (config.h: plain settings replaced, rules and
// hidden paths combined). An untrusted workspace's apply only as
// SplitUntrusted allows (rules combined, a limit only where lower), and the
// keys it ignores are named in one notice.

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/claude_defs.h"
#include "config/config.h"
#include "config/trust.h"
#include "workspace/workspace.h"

namespace odin {

enum class WorkspaceTrust {
  kNoConfig,   // the workspace has no odinconfig.json: nothing to trust
  kTrusted,    // trusted at the hash of its current trusted-only settings
  kUntrusted,  // not trusted (never, or revoked)
  kChanged,    // trusted once, but its trusted-only settings changed since
};
// "no config", "trusted", "untrusted", "changed".
const char* WorkspaceTrustName(WorkspaceTrust t);

struct LoadedConfig {
  Config config;                 // the effective settings (before flags)
  std::string user_config_path;  // "" if no user config directory can be found
  bool user_config_found = false;
  std::string trust_store_path;   // "" likewise
  std::string trust_store_error;  // why the store could not be read ("" if it could): nothing is trusted
  WorkspaceTrust trust = WorkspaceTrust::kNoConfig;
  SecuritySettings security;         // the workspace's trusted-only settings (with a workspace config)
  std::vector<std::string> ignored;  // the workspace's keys not applied, sorted
  // Claude Code's instruction files (planner/instructions.h): the hash of
  // the root's CLAUDE.md, CLAUDE.local.md and their imports when the
  // workspace is trusted with them ("" otherwise: they are not read), and
  // the user's ~/.claude/CLAUDE.md, always read.
  std::string claude_sha256;
  std::string user_claude_md;
  // Custom commands, subagent types and skills (config/claude_defs.h): the
  // user's, and the workspace's .claude/ ones when trusted with them.
  ClaudeDefs defs;
  // One line each for stderr, without a program prefix, e.g. "untrusted
  // workspace: ignoring llm.base_url, sandbox.bwrap in odinconfig.json (run
  // `odin trust` to trust it)".
  std::vector<std::string> notices;
};

// The user's config directory, "" if neither XDG_CONFIG_HOME nor HOME (nor
// the password database) names an absolute one. env: variable -> value.
std::string UserConfigDir(const std::map<std::string, std::string>& env);

// Loads the effective settings of ws. Errors name the file and the key: an
// unknown key or a wrong type is an error in either file, trusted-only or
// not (a typo must not silently weaken a setting). A trust store that cannot
// be read trusts nothing and adds a notice.
StatusOr<LoadedConfig> LoadConfig(const Workspace& ws, const std::map<std::string, std::string>& env);

// The workspace's .mcp.json (Claude Code's MCP servers file).
std::string McpJsonPath(const Workspace& ws);

// Writes each notice to stderr as "odin: <notice>".
void PrintConfigNotices(const LoadedConfig& loaded);

}  // namespace odin
