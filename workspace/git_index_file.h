#pragma once
// One entry of git's index file, found by reading the file from a
// descriptor in pieces: never held whole in memory (a million-file
// repository's index is about 90 MB; libgit2's parsed copy of it, 240 MB).
//
// Reads versions 2, 3 and 4 (prefix-compressed paths). Entries are sorted by
// path, so the look stops once past it. Only the stage-0 entry counts; a
// conflicted path has none.
//
// Thread-safety: none needed (pread on the caller's descriptor).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

struct GitIndexEntry {
  uint32_t ctime_s = 0, ctime_ns = 0, mtime_s = 0, mtime_ns = 0;
  uint32_t dev = 0, ino = 0, mode = 0, uid = 0, gid = 0, size = 0;
  unsigned char oid[20] = {};
  bool assume_valid = false;  // git does not keep it fresh
  bool skip_worktree = false;
};

// path's entry (relative to the repository's root, '/'-separated) in the
// index file open at fd, or nullopt: not there, only in conflict, or a file
// this does not read (another format, cut short, a path longer than 4 KiB).
std::optional<GitIndexEntry> FindGitIndexEntry(int fd, std::string_view path);
// The entries of many paths in one pass over the file (paths sorted, as
// git sorts them: bytewise); out[i] is paths[i]'s.
std::vector<std::optional<GitIndexEntry>> FindGitIndexEntries(int fd, const std::vector<std::string>& paths);

}  // namespace odin
