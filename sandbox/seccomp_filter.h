#pragma once
// The sandbox's seccomp layer: no_new_privs, then a filter that lets
// everything through except what a tool call never needs and an escape would:
//   - ptrace, process_vm_readv/writev (reading or steering other processes);
//   - io_uring_* (a second syscall interface the filter cannot see into);
//   - loading kernel modules, kexec, mounting and pivoting, bpf;
//   - sockets of any family but AF_UNIX, where no network namespace keeps
//     the program off the network (the fallback without bubblewrap).
// Denied calls fail with EPERM (EAFNOSUPPORT for sockets) rather than killing
// the caller, so a program sees an ordinary error. Syscalls of a foreign ABI
// (i386 on x86_64) kill the caller: the filter cannot judge them.
//
// Installed by odin-sandbox just before it becomes the program (inside the
// namespaces, or as the supervisor without them); inherited by everything the
// program starts.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct SeccompOptions {
  bool deny_network = true;  // sockets other than AF_UNIX fail
};

// Sets PR_SET_NO_NEW_PRIVS and loads the filter into the calling process.
Status InstallSeccompFilter(const SeccompOptions& options);

// The syscalls the filter denies (for odin doctor and the docs).
std::vector<std::string> DeniedSyscalls();

}  // namespace odin
