#pragma once
// WorkspaceFingerprint: one digest of what the workspace holds, so the stall
// detector can tell "the same call again after a real change" from "the same
// call again".
//
// It covers file contents, not metadata, as far as it can cheaply: the first
// scan keeps only each file's size, mtime and inode as a stand-in (hashing a
// whole repository up front would cost seconds). Once those change, the file's
// bytes are hashed, and from then on touching it without changing it changes
// nothing. (The one change from stand-in to hash does change the digest, even
// when the bytes did not: one spurious "change" per file, never a missed
// one.) Skips .git and .odin, does not follow symlinks (their targets count),
// and stops after max_files entries (the rest of the tree is then not
// watched).
//
// Thread-safety: none.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

struct stat;

namespace odin {

class WorkspaceFingerprint {
 public:
  explicit WorkspaceFingerprint(std::string root, size_t max_files = 200000)
      : root_(std::move(root)), max_files_(max_files) {}

  // Rescans the tree (a stat per entry; reads only files whose metadata
  // changed) and returns the digest (hex).
  std::string Compute();
  // Looks again at these files only (relative paths; the ones written by
  // file tools, when nothing else ran) and returns the digest. The first
  // call is a full Compute.
  std::string Update(const std::vector<std::string>& paths);
  size_t files() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t size = -1;
    int64_t mtime_ns = 0;
    uint64_t ino = 0;
    uint64_t mix = 0;   // a 64-bit hash of the path and its token (content hash or metadata)
    uint64_t scan = 0;  // the latest scan that saw it
  };
  void Scan(int dir_fd, const std::string& rel, size_t* count);
  // Records what stat says of path (name in dir_fd). A new or changed entry
  // stands for its content if by_content, else for its metadata.
  void Note(int dir_fd, const char* name, std::string path, const struct stat& st, bool by_content);
  void Drop(const Entry& en);
  std::string Digest() const;

  std::string root_;
  size_t max_files_;
  std::unordered_map<std::string, Entry> entries_;
  uint64_t scan_ = 0;
  // The digest is order-independent: the sum and the xor of the entries'
  // mixes, kept up to date as entries change.
  uint64_t sum_ = 0;
  uint64_t xor_ = 0;
};

}  // namespace odin
