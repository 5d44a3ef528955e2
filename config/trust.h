#pragma once
// Trust: what a workspace's odinconfig.json may set before the user trusts
// the workspace. The file is part of the repository, so until `odin trust` it
// is someone else's code.
//
// An untrusted workspace may only tighten, through the keys of an explicit
// allowlist (trust.cc): deny and ask rules, lower limits and budgets, the
// profile's check commands (they run sandboxed) and lower validation
// timeouts. Every other key is trusted-only, and so is any key added later
// unless it joins the allowlist: such keys name programs run on the host
// (sandbox.bwrap), send keys or code elsewhere (llm.base_url), or switch a
// gate off (validation.enabled, stall, breakers, permissions.allow). They
// apply only in a trusted workspace.
//
// Trust is pinned to a hash of the trusted-only settings (SecuritySettings):
// when they change (a `git pull`), the workspace is untrusted again until the
// user runs `odin trust` again. Settings an untrusted workspace may set anyway
// are not part of the hash.

#include <string>
#include <vector>

#include "config/config.h"

namespace odin {

// Returns true iff an untrusted workspace may set the key at path (dotted:
// "permissions.deny", "budgets.tool_timeouts.Read"), within the limits of
// SplitUntrusted.
bool UntrustedMaySet(const std::string& path);

// A workspace's trusted-only settings.
struct SecuritySettings {
  // Their keys, sorted (odinconfig.json's, then each extra file's): "llm.base_url", "sandbox.bwrap", "AllowedCommands"
  // (a section's keys are named one by one; maps such as llm.prices as a whole).
  std::vector<std::string> keys;
  // Each key with its value as JSON (ASCII only, so no control character
  // reaches a terminal), in the order of keys.
  std::vector<std::string> values;
  // Lower-case hex SHA-256 over their canonical JSON (sorted keys, no
  // whitespace): neither layout nor key order changes it.
  std::string sha256;
};

// Another file of a workspace's settings, read as odinconfig.json's schema
// (a Claude Code settings file's hooks and permissions, claude_settings.h).
struct ExtraSettingsFile {
  std::string label;  // ".claude/settings.json": names its keys ("hooks.PreToolUse (.claude/settings.json)")
  std::string json;   // what of it applies, for ParseConfig
};

// REQUIRES: workspace_json and each extra file's json are JSON objects that
// ParseConfig accepts. mcp_json: the workspace's .mcp.json ("" for none),
// whose servers are all trusted-only ("mcpServers.NAME (.mcp.json)"). An
// extra file's trusted-only keys are named with its label; a file that does
// not exist is not passed, so trust given before it existed stays.
SecuritySettings TrustedOnlySettings(const std::string& workspace_json, const std::string& mcp_json = "",
                                     const std::vector<ExtraSettingsFile>& extra = {});

// What of an untrusted workspace's settings applies over base (the user's
// settings, defaults included).
struct UntrustedSplit {
  // The settings that apply, as JSON for ParseConfig(..., base): the rules
  // and check commands, and each limit lower than base's (0, no limit, is
  // never lower) or, for validation timeouts, not higher.
  std::string applied_json;
  // The keys ignored, sorted: trusted-only keys and limits that would not
  // tighten (a limit equal to base's is not named: it changes nothing).
  std::vector<std::string> ignored;
};

// REQUIRES: workspace_json is a JSON object that ParseConfig accepts.
UntrustedSplit SplitUntrusted(const std::string& workspace_json, const Config& base);

}  // namespace odin
