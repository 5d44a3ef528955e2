#pragma once
// Protected paths: files in the workspace that steer Odin or run code behind
// the agent's back (git's hooks and config, Odin's state, settings and
// instructions, shell rc files). They are read-only to the agent on every
// path: the coordinator refuses file-tool writes to them, and the sandbox
// mounts the ones that exist read-only for commands.

#include <string>
#include <vector>

namespace odin {

// The protected paths, relative to the workspace root.
const std::vector<std::string>& ProtectedRelativePaths();

// Whether path (absolute, inside workspace) is one of them or below one, or
// an ODIN.md or AGENTS.md in any directory.
bool IsProtectedPath(const std::string& path, const std::string& workspace);

}  // namespace odin
