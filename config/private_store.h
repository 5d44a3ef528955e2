#pragma once
// A JSON file of the user's that decides what runs on this machine (the
// trust store, saved approvals), in the user's config directory: read only
// when it is a regular file of the user's that nobody else can write;
// changed under a lock (PATH.lock) around read, change and write, so two
// odin processes at once lose nothing; replaced atomically (0600, its
// directory 0700).

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace odin {

// The store's text, nullopt when there is none; PermissionDenied when it is
// not a regular file of the user's, or others can write it.
StatusOr<std::optional<std::string>> ReadPrivateStore(const std::string& path, uint64_t max_bytes);

// Replaces the store atomically.
Status WritePrivateStore(const std::string& path, std::string_view text);

// Holds an exclusive lock on path + ".lock" while it lives.
class PrivateStoreLock {
 public:
  PrivateStoreLock() = default;
  PrivateStoreLock(const PrivateStoreLock&) = delete;
  PrivateStoreLock& operator=(const PrivateStoreLock&) = delete;
  ~PrivateStoreLock();
  // Waits at most timeout for the lock (DeadlineExceeded past it).
  Status Acquire(const std::string& store_path, Duration timeout = Duration::max());

 private:
  int fd_ = -1;
};

}  // namespace odin
