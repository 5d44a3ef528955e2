#pragma once
// Resolving the paths tools are given. Paths may be absolute or relative to
// the workspace root; `..` and symlinks that lead out of the workspace are
// refused, so a tool never reads or writes outside it.

#include <string>

#include "base/status.h"

namespace odin {

// Returns the absolute, normalized path for `given`, with symlinks resolved
// for the part that exists (a file to be created may not). REQUIRES: workspace
// is absolute with symlinks resolved. Returns InvalidArgument "... is outside
// the workspace ..." when it leaves the workspace, and for an empty path.
StatusOr<std::string> ResolveWorkspacePath(const std::string& given, const std::string& workspace);

// The path as shown to the model: relative to the workspace, or absolute if
// it is not inside it. The workspace itself is ".".
std::string DisplayPath(const std::string& absolute, const std::string& workspace);

// Returns true iff path is root or below it.
bool IsInsideDir(const std::string& path, const std::string& root);

}  // namespace odin
