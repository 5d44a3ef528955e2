#pragma once
// Resolving the paths tools are given. Paths may be absolute or relative to
// the workspace root; `..` and symlinks that lead out of the workspace are
// refused, so a tool never reads or writes outside it unless the user
// approved that path for the call (gate 8).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace odin {

// Returns the absolute, normalized path for `given`, with symlinks resolved
// for the part that exists (a file to be created may not). REQUIRES: workspace
// is absolute with symlinks resolved. Returns InvalidArgument "... is outside
// the workspace ..." when it leaves the workspace, and for an empty path.
StatusOr<std::string> ResolveWorkspacePath(const std::string& given, const std::string& workspace);
// True iff given names a place outside workspace, lexically or once its
// symlinks are resolved: the case ResolveWorkspacePath refuses as outside.
bool IsOutsideWorkspace(const std::string& given, const std::string& workspace);

// The absolute, normalized path for `given` (relative to base), with symlinks
// resolved for the part that exists, wherever it leads.
StatusOr<std::string> ResolvePath(const std::string& given, const std::string& base);

// As ResolveWorkspacePath, and also lets through a path at or below
// `approved`: a path outside the workspace the user approved for this call
// (empty: none).
StatusOr<std::string> ResolveToolPath(const std::string& given, const std::string& workspace,
                                      const std::string& approved);

// given (non-empty) against workspace, absolute, "." and ".." folded, no
// symlink looked at: the path as Claude Code shows it to hooks.
std::string LexicalPath(const std::string& given, const std::string& workspace);

// Whether pattern (absolute; each segment an fnmatch glob, or "**" for any
// number of segments) covers path (absolute, normalised) or a directory
// above it: what a Read deny rule hides (gates/tool_rules.h). Polynomial in
// the segments, however many "**" the pattern has.
bool PathPatternCovers(const std::string& pattern, const std::string& path);
// PathPatternCovers one segment at a time, for a walk: the state at a
// directory, entered from its parent's with the directory's name, says
// whether the path so far is covered and whether anything below it may be
// (a walk need not enter a directory where nothing may). Each step is
// linear in the pattern's segments, however many "**" it has.
class PathPatternState {
 public:
  // At "/".
  explicit PathPatternState(const std::string& pattern);
  PathPatternState Enter(std::string_view segment) const;
  // Each segment of an absolute path in turn.
  PathPatternState EnterPath(const std::string& path) const;
  bool Covers() const;
  bool MayCoverBelow() const;

 private:
  std::shared_ptr<const std::vector<std::string>> pattern_;
  std::vector<char> reach_;  // reach_[i]: the pattern's first i segments match the path so far
};

// The path as shown to the model: relative to the workspace, or absolute if
// it is not inside it. The workspace itself is ".".
std::string DisplayPath(const std::string& absolute, const std::string& workspace);

// Returns true iff path is root or below it.
bool IsInsideDir(const std::string& path, const std::string& root);

}  // namespace odin
