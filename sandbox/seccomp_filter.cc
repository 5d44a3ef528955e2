#include "sandbox/seccomp_filter.h"

#include <cstring>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "base/file_util.h"

namespace odin {

namespace {

// Denied whatever their arguments. Names unknown to this libseccomp or this
// architecture are skipped (nothing to deny).
const char* const kDenied[] = {
    // Other processes.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "process_madvise",
    // A syscall interface the filter cannot see into.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    // Kernel modules, kexec, reboot, swap, accounting, the kernel log, quotas.
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "query_module",
    "get_kernel_syms",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "nfsservctl",
    "_sysctl",
    "sysfs",
    "ustat",
    "uselib",
    "lookup_dcookie",
    // The host's clock.
    "settimeofday",
    "stime",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    // Keyrings, performance counters, bpf, userfaultfd.
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "bpf",
    "userfaultfd",
    // Port I/O and NUMA policy (Docker allows these only with CAP_SYS_RAWIO
    // and CAP_SYS_NICE).
    "iopl",
    "ioperm",
    "vm86",
    "vm86old",
    "mbind",
    "set_mempolicy",
    "move_pages",
    "migrate_pages",
    // File handles: open_by_handle_at reads any file of a file system.
    "open_by_handle_at",
    "name_to_handle_at",
    // Mounts and namespaces.
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "chroot",
};

// clone() flags that make a namespace.
constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                        CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};

// libseccomp's errors are negative errno values.
Status SeccompError(const std::string& what, int rc) { return PosixError("seccomp: " + what, -rc); }

// personality(): only the personas Docker allows pass. libseccomp cannot
// compare one argument against several values in a rule, so this is a small
// classic BPF program of its own, stacked on the main filter (the strictest
// answer of all filters wins). Calls of a foreign ABI pass here: the main
// filter kills them.
std::vector<sock_filter> PersonalityFilter() {
  constexpr uint32_t kAllowed[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};
  constexpr unsigned kN = sizeof kAllowed / sizeof kAllowed[0];
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      // The kernel takes the persona as an unsigned int: the low word.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAllowed[0], kN, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAllowed[1], kN - 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAllowed[2], kN - 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAllowed[3], kN - 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAllowed[4], kN - 4, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
}

// The main filter, built; the caller releases it.
StatusOr<scmp_filter_ctx> BuildMainFilter(const SeccompOptions& options) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return Status::Internal("seccomp", "cannot create a filter");
  Status result;
  auto add = [&](const char* what, int rc) {
    if (result.ok() && rc < 0) result = SeccompError(what, rc);
  };
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // unknown to this libseccomp: nothing to deny
    // Negative numbers are calls this architecture does not have.
    if (nr < 0) continue;
    if (options.allow_overlay_setup &&
        (strcmp(name, "mount") == 0 || strcmp(name, "unshare") == 0 || strcmp(name, "setns") == 0)) {
      continue;
    }
    add(name, seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0));
  }
  // A new namespace through clone: one rule per flag (a rule compares an
  // argument once).
  for (uint64_t flag : kNamespaceFlags) {
    add("clone",
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)));
  }
  // clone3 passes its flags in memory the filter cannot read: ENOSYS makes
  // the C library fall back to clone.
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR && clone3 >= 0) add("clone3", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0));
  if (options.deny_network) {
    add("socket",
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX)));
  } else {
    // Whatever the network: no packet sockets, and of netlink only the
    // routing family (getifaddrs reads interfaces with it; changing them
    // takes a capability no sandbox has). The rest is kernel surface no
    // command needs.
    // (The kernel reads the family and protocol as ints: only their low 32
    // bits are compared, or high bits set would slip past.)
    add("socket", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_PACKET)));
    for (int protocol = 1; protocol < 32; ++protocol) {  // every netlink family but NETLINK_ROUTE (0)
      add("socket", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_NETLINK),
                                     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffff, protocol)));
    }
  }
  if (!result.ok()) {
    seccomp_release(ctx);
    return result;
  }
  return ctx;
}

// A memory file holding bytes, its offset back at the start.
StatusOr<UniqueFd> MemoryFile(const char* name, const void* data, size_t size) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
  if (!fd.valid()) return PosixError("seccomp: memfd_create", errno);
  RETURN_IF_ERROR(WriteAll(fd.get(), std::string_view(static_cast<const char*>(data), size), "seccomp filter"));
  if (lseek(fd.get(), 0, SEEK_SET) != 0) return PosixError("seccomp: lseek", errno);
  return fd;
}

}  // namespace

std::vector<std::string> DeniedSyscalls() { return {std::begin(kDenied), std::end(kDenied)}; }

Status InstallSeccompFilter(const SeccompOptions& options) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return PosixError("prctl(PR_SET_NO_NEW_PRIVS)", errno);
  ASSIGN_OR_RETURN(scmp_filter_ctx ctx, BuildMainFilter(options));
  int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc < 0) return SeccompError("load", rc);
  std::vector<sock_filter> personality = PersonalityFilter();
  sock_fprog fprog{static_cast<unsigned short>(personality.size()), personality.data()};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
    return PosixError("seccomp: personality filter", errno);
  }
  return Status::OK();
}

StatusOr<std::vector<UniqueFd>> ExportSeccompFilters(const SeccompOptions& options) {
  ASSIGN_OR_RETURN(scmp_filter_ctx ctx, BuildMainFilter(options));
  UniqueFd main(memfd_create("odin-seccomp", MFD_CLOEXEC));
  int rc = main.valid() ? seccomp_export_bpf(ctx, main.get()) : -errno;
  seccomp_release(ctx);
  if (rc < 0) return SeccompError("export", rc);
  if (lseek(main.get(), 0, SEEK_SET) != 0) return PosixError("seccomp: lseek", errno);
  std::vector<sock_filter> personality = PersonalityFilter();
  ASSIGN_OR_RETURN(UniqueFd second, MemoryFile("odin-seccomp-personality", personality.data(),
                                               personality.size() * sizeof(sock_filter)));
  std::vector<UniqueFd> out;
  out.push_back(std::move(main));
  out.push_back(std::move(second));
  return out;
}

}  // namespace odin
