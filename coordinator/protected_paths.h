#pragma once
// Protected paths: files in the workspace that steer Odin or run code behind
// the agent's back (git's hooks and config, Odin's state, settings and
// instructions, shell rc files). They are read-only to the agent on every
// path: the coordinator refuses file-tool writes to them, and the sandbox
// mounts the ones that exist read-only for commands.

#include <map>
#include <string>
#include <vector>

namespace odin {

// The protected paths, relative to the workspace root.
const std::vector<std::string>& ProtectedRelativePaths();

// Whether path (absolute, inside workspace) is one of them or below one, or
// an ODIN.md or AGENTS.md in any directory.
bool IsProtectedPath(const std::string& path, const std::string& workspace);

// What the protected files at the root and in .git hold (git's hooks
// included): taken before a command runs, so that what the command changed
// there can be put back. The sandbox mounts the existing ones read-only; this
// catches the rest (a new AGENTS.md, a .git moved away and made again).
struct ProtectedSnapshot {
  std::map<std::string, std::string> files;  // relative path -> content, for the files that exist
};
ProtectedSnapshot SnapshotProtected(const std::string& workspace);
// Puts back what changed since `before` (rewrites changed files, removes new
// ones). Returns the relative paths it restored.
std::vector<std::string> RestoreProtected(const std::string& workspace, const ProtectedSnapshot& before);

}  // namespace odin
