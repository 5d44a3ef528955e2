#pragma once
// What of the configuration a worker's sandbox depends on, read from a
// Config: pool/ never sees the whole Config (issue 48).

#include <string>
#include <vector>

#include "config/config.h"
#include "pool/worker_sandbox.h"
#include "workspace/workspace.h"

namespace odin {

// sandbox.*, the hooks' scripts and network, the MCP servers that keep the
// network.
WorkerSandboxOptions WorkerSandboxSettings(const Config& config, const Workspace& ws);

// What in the workspace the Read deny rules name (gates/tool_rules.h), as it
// is now: every sandbox masks it, so that `cat .env` cannot read what Read
// may not, nor a link to it. A rule without a wildcard ("Read(./.env)") is
// one look; one with a wildcard or a bare name (".env" is any depth) walks
// the workspace once, into directories where it can match only, at most
// 200,000 entries (.git and .odin skipped). Paths outside the workspace are
// not masked here: HOME is hidden already, and the tools ask before reading
// outside. A file a rule names that appears later is left out by the file
// and search tools (the gate, UnreadablePatterns), but not masked for
// commands until the next start.
struct ReadDenyMaskSet {
  std::vector<std::string> paths;  // absolute, sorted
  std::string incomplete;          // a notice when the walk stopped at its budget ("" if it did not)
};
ReadDenyMaskSet ReadDenyMasks(const CommandRules& rules, const std::string& workspace, const std::string& home);

// The sandbox policy in force: the --sandbox flag if given, else the
// config's. InvalidArgument for a bad flag.
StatusOr<SandboxPolicy> EffectiveSandboxPolicy(const Config& config, const std::string& flag);

// The files outside the workspace that the user's own hooks' commands name
// (after $CLAUDE_PROJECT_DIR, $ODIN_PROJECT_DIR, ~ and $HOME), so that a
// hook's sandbox can show its script even below a hidden home directory. A
// workspace's hooks get none: their scripts are in the workspace, and a
// repository must not be able to name a secret into a sandbox.
std::vector<std::string> HookScriptPaths(const HooksConfig& hooks, const std::string& workspace,
                                         const std::string& home);

}  // namespace odin
