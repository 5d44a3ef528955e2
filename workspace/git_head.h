#pragma once
// GitHead: the commit git's HEAD names in the repository that holds a
// workspace, read from git's files (HEAD, the ref it names, packed-refs;
// a .git file's gitdir for worktrees and submodules). Nothing is run and
// nothing is written. Undo warns when HEAD moved since the calls it undoes.

#include <string>

namespace odin {

struct GitHead {
  std::string commit;  // hex; "" outside a repository or on an unborn branch
  std::string ref;     // "refs/heads/main", or "" when detached
  bool operator==(const GitHead& o) const { return commit == o.commit && ref == o.ref; }
  // "main at 1a2b3c4d", "detached at 1a2b3c4d", "no commit".
  std::string Describe() const;
};

// The repository found from workspace upwards; {} outside one.
GitHead ReadGitHead(const std::string& workspace);

}  // namespace odin
