#include "config/private_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"

namespace odin {

StatusOr<std::optional<std::string>> ReadPrivateStore(const std::string& path, uint64_t max_bytes) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return PosixError(path, errno);
  }
  // Whoever can write it decides what runs on this machine.
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return Status::PermissionDenied(path, "must be a regular file of yours that only you can write");
  }
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, max_bytes));
  return std::optional<std::string>(std::move(text));
}

Status WritePrivateStore(const std::string& path, std::string_view text) {
  RETURN_IF_ERROR(MakeDirs(DirName(path), 0700));
  return WriteFileAtomic(path, text);
}

PrivateStoreLock::~PrivateStoreLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

Status PrivateStoreLock::Acquire(const std::string& store_path, Duration timeout) {
  RETURN_IF_ERROR(MakeDirs(DirName(store_path), 0700));
  std::string lock = store_path + ".lock";
  fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return PosixError(lock, errno);
  if (timeout == Duration::max()) {
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return PosixError(lock, errno);
    }
    return Status::OK();
  }
  SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return PosixError(lock, errno);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded(lock, "another odin holds it");
    }
    usleep(20 * 1000);
  }
  return Status::OK();
}

}  // namespace odin
