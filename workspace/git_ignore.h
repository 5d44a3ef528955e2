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
// It also reads git's index and objects for before-images: a file a
// command changes that nobody read had, before, the bytes git recorded for
// it when git's recorded stat says it was unchanged since.
//
// Thread-safety: none.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "workspace/workspace_files.h"

namespace odin {

struct GitIndexEntry;

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

  // A file as last seen (lstat), for IndexedContent.
  struct IndexedStat {
    int64_t size = -1;
    uint32_t mode = 0;  // permission bits
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    uint64_t ino = 0;
  };
  // The bytes git's index holds for each file (a path relative to the
  // workspace, a regular file), when the file as seen is unchanged since git
  // recorded it: the same size, inode, times and executable bit as the index
  // entry, not racily clean, the blob of that size, at most max_bytes;
  // nullopt otherwise. out[i] is files[i]'s. One pass over the index as
  // RememberIndex last read it (or reads it now).
  std::vector<std::optional<std::string>> IndexedContents(const std::vector<std::pair<std::string, IndexedStat>>& files,
                                                          int64_t max_bytes);
  // Reads git's index (again, if it changed on disk) and keeps it: later
  // IndexedContent questions are answered from it, as it was now, whatever
  // a command does to the file since. False outside a repository.
  bool RememberIndex();
  bool index_remembered() const;

  // Why nothing is ignored ("" when the rules are in use).
  const std::string& unavailable() {
    Load();
    return unavailable_;
  }

 private:
  GitIgnore() = default;
  void Load();
  // The blob for an index entry, if the file as seen is what git recorded.
  std::optional<std::string> ContentOf(const GitIndexEntry& entry, const IndexedStat& seen);
  // libgit2's answer; the caller has seen IgnoreFilesReadable hold.
  bool Ask(const std::string& relative_path);
  // Whether every .gitignore libgit2 would open for relative_path is a
  // regular file (see the .cc).
  bool IgnoreFilesReadable(const std::string& relative_path);
  std::optional<WorkspaceFiles> files_;

  std::string workspace_;
  bool loaded_ = false;

  struct Repo;
  std::unique_ptr<Repo> repo_;
  std::string prefix_;  // the workspace, relative to the repository's work tree ("" or "sub/")
  std::string unavailable_;
  std::map<std::string, bool> memo_;  // directory (relative) -> ignored
};

}  // namespace odin
