#pragma once
// WorkspaceFingerprint: one digest of what the workspace holds, so the stall
// detector can tell "the same call again after a real change" from "the same
// call again".
//
// It covers file contents, not metadata: a file's first scan keeps only its
// size, mtime and inode as a stand-in (hashing a whole repository at the start
// would cost seconds); once those change, the file's bytes are hashed, and
// from then on touching it without changing it changes nothing. Skips .git
// and .odin, does not follow symlinks (their targets count), and stops after
// max_files entries (the rest of the tree is then not watched).
//
// Thread-safety: none.

#include <cstdint>
#include <map>
#include <string>

namespace odin {

class WorkspaceFingerprint {
 public:
  explicit WorkspaceFingerprint(std::string root, size_t max_files = 200000)
      : root_(std::move(root)), max_files_(max_files) {}

  // Rescans the tree (a stat per entry; reads only files whose metadata
  // changed) and returns the digest (hex).
  std::string Compute();
  size_t files() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t size = -1;
    int64_t mtime_ns = 0;
    uint64_t ino = 0;
    std::string digest;  // content hash once the file changed; else empty
    bool seen = false;   // in the latest scan
  };
  void Scan(int dir_fd, const std::string& rel, size_t* count);

  std::string root_;
  size_t max_files_;
  std::map<std::string, Entry> entries_;
  bool first_ = true;
};

}  // namespace odin
