// The seccomp layer, installed for real in a child process: what it denies
// fails with the documented errno, what a tool call needs still works.

#include "sandbox/seccomp_filter.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/in_child.h"

namespace odin {
namespace {

using testing::RunInChild;

// "" if rc is -1 with errno `want`, else a line saying what happened.
std::string Fails(const char* what, long rc, int want) {
  int err = errno;
  if (rc == -1 && err == want) return "";
  return std::string(what) + ": rc " + std::to_string(rc) + ", " + strerror(err) + " (want " + strerror(want) + ")\n";
}

std::string Works(const char* what, long rc) {
  int err = errno;
  if (rc >= 0) return "";
  return std::string(what) + ": " + strerror(err) + "\n";
}

std::string Install(bool deny_network) {
  Status s = InstallSeccompFilter({deny_network});
  return s.ok() ? "" : "install: " + s.ToString() + "\n";
}

TEST(SeccompFilterTest, WhatAnEscapeNeedsFailsWithEperm) {
  std::string failed = RunInChild([] {
    std::string f = Install(true);
    if (!f.empty()) return f;
    f += prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? "" : "no_new_privs is not set\n";
    f += Fails("ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr), EPERM);
    f += Fails("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER), EPERM);
    f += Fails("setns", setns(0, 0), EPERM);
    f += Fails("umount2", umount2("/nonexistent-odin-mount", 0), EPERM);
    f += Fails("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0), EPERM);
    f += Fails("io_uring_setup", syscall(SYS_io_uring_setup, 1, nullptr), EPERM);
    f += Fails("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, nullptr, 0), EPERM);
    // A namespace through clone's flags: refused before any child exists.
    long rc = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (rc == 0) _exit(0);
    f += Fails("clone(CLONE_NEWNS)", rc, EPERM);
    // clone3 hides its flags in memory: ENOSYS sends the C library to clone.
    f += Fails("clone3", syscall(SYS_clone3, nullptr, 0), ENOSYS);
    // personality: the default personas pass, the others do not.
    f += Fails("personality(ADDR_NO_RANDOMIZE)", personality(ADDR_NO_RANDOMIZE), EPERM);
    f += Works("personality(query)", personality(0xffffffff));
    return f;
  });
  EXPECT_EQ(failed, "");
}

TEST(SeccompFilterTest, OrdinaryWorkGoesOnUnderTheFilter) {
  std::string failed = RunInChild([] {
    std::string f = Install(true);
    if (!f.empty()) return f;
    int unix_socket = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    f += Works("socket(AF_UNIX)", unix_socket);
    if (unix_socket >= 0) close(unix_socket);
    // A plain fork (clone without namespace flags) and its child.
    pid_t child = fork();
    if (child == 0) _exit(7);
    int status = 0;
    f += Works("fork", child);
    if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)) {
      f += "the forked child did not exit 7\n";
    }
    f += Works("getpid", getpid());
    return f;
  });
  EXPECT_EQ(failed, "");
}

TEST(SeccompFilterTest, NetworkSocketsFailOnlyWhenTheNetworkIsDenied) {
  std::string denied = RunInChild([] {
    std::string f = Install(/*deny_network=*/true);
    f += Fails("socket(AF_INET)", socket(AF_INET, SOCK_STREAM, 0), EAFNOSUPPORT);
    f += Fails("socket(AF_INET6)", socket(AF_INET6, SOCK_DGRAM, 0), EAFNOSUPPORT);
    f += Fails("socket(AF_NETLINK)", socket(AF_NETLINK, SOCK_RAW, 0), EAFNOSUPPORT);
    return f;
  });
  EXPECT_EQ(denied, "");
  std::string allowed = RunInChild([] {
    std::string f = Install(/*deny_network=*/false);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    f += Works("socket(AF_INET)", s);
    if (s >= 0) close(s);
    s = socket(AF_INET6, SOCK_STREAM, 0);
    f += Works("socket(AF_INET6)", s);
    if (s >= 0) close(s);
    // Interfaces can be read (getifaddrs), nothing else of netlink, and no
    // packet sockets.
    s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    f += Works("socket(AF_NETLINK, NETLINK_ROUTE)", s);
    if (s >= 0) close(s);
    f += Fails("socket(AF_NETLINK, NETLINK_AUDIT)", socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EAFNOSUPPORT);
    f += Fails("socket(AF_NETLINK, NETLINK_SOCK_DIAG)", socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG), EAFNOSUPPORT);
    f += Fails("socket(AF_PACKET)", socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
    // High bits the kernel ignores change nothing.
    f += Fails("socket(AF_NETLINK | 1 << 32)",
               syscall(SYS_socket, (1L << 32) | AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG), EAFNOSUPPORT);
    f += Fails("socket(AF_NETLINK, SOCK_DIAG | 1 << 32)",
               syscall(SYS_socket, AF_NETLINK, SOCK_RAW, (1L << 32) | NETLINK_SOCK_DIAG), EAFNOSUPPORT);
    f += Fails("socket(AF_PACKET | 1 << 32)", syscall(SYS_socket, (1L << 32) | AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
    // The rest of the filter stays.
    f += Fails("ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr), EPERM);
    return f;
  });
  EXPECT_EQ(allowed, "");
}

TEST(SeccompFilterTest, TheDeniedListNamesEachCallOnceAndCoversDockersDefaults) {
  std::vector<std::string> denied = DeniedSyscalls();
  std::set<std::string> unique(denied.begin(), denied.end());
  EXPECT_EQ(unique.size(), denied.size());
  for (const char* name : {"ptrace", "process_vm_readv", "kexec_load", "init_module", "bpf", "perf_event_open",
                           "userfaultfd", "keyctl", "mount", "umount2", "pivot_root", "unshare", "setns",
                           "open_by_handle_at", "io_uring_setup", "clock_settime", "reboot", "swapon", "chroot"}) {
    EXPECT_EQ(unique.count(name), 1u) << name;
  }
}

}  // namespace
}  // namespace odin
