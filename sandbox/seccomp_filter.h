#pragma once
// The sandbox's seccomp layer: no_new_privs, then a filter that lets
// everything through except what a tool call never needs and an escape would.
// It denies at least what Docker's default profile denies to a container
// without added capabilities:
//   - reading or steering other processes: ptrace, process_vm_readv/writev,
//     kcmp, pidfd_getfd, process_madvise;
//   - the kernel's own state: modules, kexec, reboot, swap, acct, syslog,
//     quotactl, the clock (settimeofday, clock_settime, clock_adjtime,
//     adjtimex), keyrings (keyctl, add_key, request_key), perf_event_open,
//     bpf, userfaultfd, lookup_dcookie, iopl/ioperm, NUMA policy calls;
//   - file handles (open_by_handle_at, name_to_handle_at: the "shocker"
//     escape reads any file of the file system by its handle);
//   - mounting, pivoting, new namespaces (unshare, setns, clone with a
//     CLONE_NEW* flag; clone3 answers ENOSYS so the C library falls back to
//     clone, whose flags the filter can see);
//   - io_uring_* (a second syscall interface the filter cannot see into);
//   - personality() with anything but the default personas (Linux, UNAME26,
//     LINUX32, and the query 0xffffffff), as Docker allows;
//   - sockets of any family but AF_UNIX, where no network namespace keeps
//     the program off the network (the fallback without bubblewrap).
// Denied calls fail with EPERM (EAFNOSUPPORT for sockets) rather than killing
// the caller, so a program sees an ordinary error. Syscalls of a foreign ABI
// (i386 on x86_64) kill the caller: the filter cannot judge them.
//
// Loaded just before the program runs: by bubblewrap, from the programs
// odin-sandbox exports, inside the namespaces; by odin-sandbox itself, as
// the supervisor, without them. Inherited by everything the program starts.

#include <linux/audit.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// The architecture seccomp_data.arch carries for this build's native ABI:
// every filter lets through only it (a foreign ABI is killed or denied).
#if defined(__x86_64__)
inline constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "seccomp filters: unknown architecture"
#endif

struct SeccompOptions {
  bool deny_network = true;  // sockets other than AF_UNIX fail
  // mount, unshare and setns pass: a writable worker with the workspace
  // overlay (sandbox/workspace_overlay.h) mounts one per command, whose
  // process joins it and then stacks the filter that denies them again
  // before it execs.
  bool allow_overlay_setup = false;
};

// Sets PR_SET_NO_NEW_PRIVS and loads the filter into the calling process.
Status InstallSeccompFilter(const SeccompOptions& options);

// The same filters as classic BPF programs, each in a memory file read from
// its start, in the order they stack: for a launcher that has bubblewrap
// load them (--add-seccomp-fd) just before it execs the program, which
// sets PR_SET_NO_NEW_PRIVS itself.
StatusOr<std::vector<UniqueFd>> ExportSeccompFilters(const SeccompOptions& options);

// The syscalls the filter denies outright (for odin doctor and the docs);
// clone, clone3 and personality are denied by their arguments besides.
std::vector<std::string> DeniedSyscalls();

}  // namespace odin
