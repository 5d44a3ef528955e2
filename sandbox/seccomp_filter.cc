#include "sandbox/seccomp_filter.h"

#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace odin {

namespace {

const char* const kDenied[] = {
    "ptrace",          "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "init_module",    "finit_module",      "delete_module",  "kexec_load",
    "kexec_file_load", "mount",            "umount2",           "pivot_root",     "move_mount",
    "open_tree",       "fsopen",           "fsconfig",          "fsmount",        "fspick",
    "mount_setattr",   "bpf",              "swapon",            "swapoff",
};

// libseccomp's errors are negative errno values.
Status SeccompError(const std::string& what, int rc) { return PosixError("seccomp: " + what, -rc); }

}  // namespace

std::vector<std::string> DeniedSyscalls() { return {std::begin(kDenied), std::end(kDenied)}; }

Status InstallSeccompFilter(const SeccompOptions& options) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return PosixError("prctl(PR_SET_NO_NEW_PRIVS)", errno);
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return Status::Internal("seccomp", "cannot create a filter");
  Status result;
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // unknown to this libseccomp: nothing to deny
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc < 0) {
      result = SeccompError(name, rc);
      break;
    }
  }
  if (result.ok() && options.deny_network) {
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                              SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (rc < 0) result = SeccompError("socket", rc);
  }
  if (result.ok()) {
    int rc = seccomp_load(ctx);
    if (rc < 0) result = SeccompError("load", rc);
  }
  seccomp_release(ctx);
  return result;
}

}  // namespace odin
