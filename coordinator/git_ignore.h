#pragma once
// GitIgnore: whether a path in the workspace is ignored by git's rules
// (.gitignore files at any depth, .git/info/exclude, core.excludesFile), as
// libgit2 reads them. libgit2 only reads those files; it runs nothing (no
// hooks, no fsmonitor), so asking it about a repository that is not trusted
// is safe. It is loaded on first use (dlopen): a process that never asks
// does not pay for it.
//
// Ignored changes are summarised, never validated and never undone
// (build output, node_modules).
//
// Thread-safety: none.

#include <map>
#include <memory>
#include <string>

namespace odin {

class GitIgnore {
 public:
  // The rules of the repository that holds workspace. Outside a repository,
  // or without libgit2, nothing is ignored and unavailable() says why.
  // libgit2 and the repository are opened at the first question, not here.
  static std::unique_ptr<GitIgnore> Open(const std::string& workspace);
  ~GitIgnore();
  GitIgnore(const GitIgnore&) = delete;
  GitIgnore& operator=(const GitIgnore&) = delete;

  // The outermost ignored directory or file on the way to relative_path
  // (relative to the workspace; itself included), or "" if it is not
  // ignored. A directory git ignores hides everything below it.
  std::string IgnoredRoot(const std::string& relative_path);

  // Why nothing is ignored ("" when the rules are in use).
  const std::string& unavailable() {
    Load();
    return unavailable_;
  }

 private:
  GitIgnore() = default;
  void Load();
  bool Ask(const std::string& relative_path);

  std::string workspace_;
  bool loaded_ = false;

  struct Repo;
  std::unique_ptr<Repo> repo_;
  std::string prefix_;  // the workspace, relative to the repository's work tree ("" or "sub/")
  std::string unavailable_;
  std::map<std::string, bool> memo_;  // directory (relative) -> ignored
};

}  // namespace odin
