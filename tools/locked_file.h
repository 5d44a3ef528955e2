#pragma once
// LockedFile: the compare-and-swap half of the read-before-edit gate, on the
// worker's side. Opening takes an exclusive flock on the file (a per-file lock
// shared by every process), reads it, and only then lets the caller replace
// it: write a temporary file in the same directory with the same mode, fsync,
// rename over. A writer that waited for the lock while another replaced the
// file notices (the path now names another inode) and sees the new content.
//
// Never follows a symlink in the last path component; callers resolve paths
// inside the workspace first (tools/workspace_path.h).

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace odin {

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  mode_t mode = 0644;
};

class LockedFile {
 public:
  // Opens and locks path. If it does not exist, returns a LockedFile with
  // exists() false (holding no lock); Replace then creates the file, failing
  // with AlreadyExists if someone else created it meanwhile. Errors: a
  // directory, something other than a regular file, over max_bytes.
  static StatusOr<std::unique_ptr<LockedFile>> Open(const std::string& path, uint64_t max_bytes);
  ~LockedFile();
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  bool exists() const { return fd_ >= 0; }
  const std::string& content() const { return content_; }
  const FileStat& stat() const { return stat_; }

  // Atomically replaces (or creates) the file with content, keeping the mode
  // (0644 for a new file). Creates missing parent directories.
  Status Replace(std::string_view content);
  // The file's state after Replace.
  StatusOr<FileStat> StatNow() const;

 private:
  LockedFile(std::string path) : path_(std::move(path)) {}

  std::string path_;
  int fd_ = -1;  // holds the flock
  std::string content_;
  FileStat stat_;
};

}  // namespace odin
