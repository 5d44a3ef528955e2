#include "sandbox/read_only_binds.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <string>

namespace odin {

int RemountReadOnly(const char* path) {
  struct statfs fs;
  if (statfs(path, &fs) != 0) return errno;
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
  if (fs.f_flags & ST_NOSUID) flags |= MS_NOSUID;
  if (fs.f_flags & ST_NODEV) flags |= MS_NODEV;
  if (fs.f_flags & ST_NOEXEC) flags |= MS_NOEXEC;
  if (fs.f_flags & ST_NOATIME) flags |= MS_NOATIME;
  if (fs.f_flags & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (fs.f_flags & ST_RELATIME) flags |= MS_RELATIME;
  return mount(nullptr, path, nullptr, flags, nullptr) == 0 ? 0 : errno;
}

Status MakeHostDevicesReadOnly() {
  if (unshare(CLONE_NEWNS) != 0) return PosixError("unshare(CLONE_NEWNS)", errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return PosixError("mount --make-rslave /", errno);
  for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}) {
    struct stat st;
    if (stat(node, &st) != 0) continue;  // bubblewrap makes no bind of one that is not there
    if (mount(node, node, nullptr, MS_BIND, nullptr) != 0) return PosixError(std::string("bind ") + node, errno);
    if (int err = RemountReadOnly(node); err != 0) return PosixError(std::string("remount read-only ") + node, err);
  }
  return Status::OK();
}

}  // namespace odin
