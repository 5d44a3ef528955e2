#pragma once
// LockedFile: the compare-and-swap half of the read-before-edit gate, on the
// worker's side. Opening takes an flock on the file (shared for readers,
// exclusive for writers; the per-file lock every process honours), reads it,
// and only then lets a writer replace it: write a temporary file in the same
// directory with the same mode, fsync, rename over. A writer that waited for
// the lock while another replaced the file notices (the name now holds another
// inode) and starts over on the new content.
//
// Every path operation is relative to the file's directory, which is opened
// beneath the workspace without following symlinks (openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a directory swapped for a symlink
// after the path was checked cannot redirect a read or a write out of the
// workspace. Callers resolve paths first (tools/workspace_path.h).

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"
#include "workspace/workspace_files.h"

namespace odin {

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  mode_t mode = 0644;
};

class LockedFile {
 public:
  enum class Lock { kShared, kExclusive };

  // Opens and locks path (absolute, resolved, inside workspace). If it does
  // not exist, returns a LockedFile with exists() false (holding no lock);
  // Replace then creates it, failing with AlreadyExists if someone else created
  // it meanwhile. Errors: a directory, a symlink, something other than a
  // regular file, a file over max_bytes.
  static StatusOr<std::unique_ptr<LockedFile>> Open(const std::string& workspace, const std::string& path,
                                                    uint64_t max_bytes, Lock lock);
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  bool exists() const { return fd_.valid(); }
  const std::string& content() const { return content_; }
  const FileStat& stat() const { return stat_; }

  // Atomically replaces (or creates) the file with content, keeping the mode
  // (0644 for a new file). Creates missing parent directories.
  // REQUIRES: opened with Lock::kExclusive.
  Status Replace(std::string_view content);
  // The file's state after Replace.
  StatusOr<FileStat> StatNow() const;

 private:
  LockedFile(std::string path) : path_(std::move(path)) {}
  Status OpenParents(bool create);

  std::string path_;     // for messages
  std::string rel_dir_;  // the directory, relative to the workspace ("." for the root)
  std::string name_;     // the last component
  // Closed in reverse: the file first, which releases the flock.
  std::optional<WorkspaceFiles> ws_;  // the workspace, through the safe file layer
  UniqueFd dir_fd_;                   // the file's directory; none while it does not exist
  UniqueFd fd_;                       // the file; holds the flock
  std::string content_;
  FileStat stat_;
};

}  // namespace odin
