#include "sandbox/landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace odin {

namespace {

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

// Every access that changes the file system, as far as this kernel knows them.
uint64_t WriteAccess(int abi) {
  uint64_t a = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) a |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) a |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return a;
}

}  // namespace

int LandlockAbi() {
  long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

Status RestrictWritesTo(const std::vector<std::string>& writable) {
  int abi = LandlockAbi();
  if (abi <= 0) return Status::FailedPrecondition("landlock", "the kernel offers none");
  uint64_t access = WriteAccess(abi);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = access;
  int ruleset = static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return PosixError("landlock_create_ruleset", errno);
  for (const std::string& dir : writable) {
    int fd = open(dir.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;  // not there: nothing to allow
    struct stat st;
    bool is_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    landlock_path_beneath_attr rule{};
    // A file (a device) takes only the accesses that apply to files.
    rule.allowed_access =
        is_dir ? access : access & (LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0));
    rule.parent_fd = fd;
    long rc = syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    close(fd);
    if (rc != 0) {
      close(ruleset);
      return PosixError("landlock_add_rule " + dir, err);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    close(ruleset);
    return PosixError("prctl(PR_SET_NO_NEW_PRIVS)", errno);
  }
  long rc = syscall(__NR_landlock_restrict_self, ruleset, 0);
  int err = errno;
  close(ruleset);
  if (rc != 0) return PosixError("landlock_restrict_self", err);
  return Status::OK();
}

}  // namespace odin
