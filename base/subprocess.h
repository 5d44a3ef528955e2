#pragma once
// Starting child processes the one way Odin does it.
//
// Every child: its own process group, stdin from /dev/null (or a given fd), only the fds it is
// given (everything else is closed), default signal dispositions and an empty
// signal mask, optionally a parent-death signal and resource limits. Exec
// failures are reported to the caller, not hidden in the child's exit status.
// Reaping is the caller's job (waitpid or a pidfd).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct SpawnLimits {
  uint64_t cpu_seconds = 0;          // RLIMIT_CPU; 0 = unchanged
  uint64_t address_space_bytes = 0;  // RLIMIT_AS
  uint64_t file_size_bytes = 0;      // RLIMIT_FSIZE
  uint64_t open_files = 0;           // RLIMIT_NOFILE
  uint64_t processes = 0;            // RLIMIT_NPROC
};

struct SpawnOptions {
  // argv[0] is run as given if it contains '/', else searched in the PATH of env.
  std::vector<std::string> argv;
  // The whole environment, "NAME=value" each.
  std::vector<std::string> env;
  // Working directory; empty inherits the parent's.
  std::string cwd;
  // Where the child's stdin comes from and its stdout and stderr go; -1
  // means /dev/null.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Further fds the child keeps, at the same numbers (close-on-exec cleared).
  std::vector<int> keep_fds;
  // Signal sent to the child when the parent thread dies; 0 for none.
  int parent_death_signal = 0;
  // True: the child leads a new process group. False: it stays in the parent's.
  bool new_process_group = true;
  SpawnLimits limits;
  // >= 0: the child switches to this uid and gid, with these supplementary
  // groups, before anything else that depends on them (the caller must be
  // root). -1: the parent's.
  int64_t uid = -1;
  int64_t gid = -1;
  std::vector<gid_t> groups;
  // Set: the child calls before_exec(before_exec_arg) once its fds are in
  // place, before chdir and exec (so cwd is looked up in whatever it
  // mounted). It returns 0 or an errno, with which the spawn fails. It runs
  // in a vfork child, on the memory of a process that may have threads:
  // system calls only, on what the caller prepared (it may unshare its
  // user and mount namespaces: that takes a process of its own, not memory).
  int (*before_exec)(const void* arg) = nullptr;
  const void* before_exec_arg = nullptr;
};

// Starts a child as described above. Returns its pid, which is also its
// process group id unless new_process_group is false. Returns NotFound when argv[0] cannot be found and
// PermissionDenied when it cannot be executed; no child is left in that case.
StatusOr<pid_t> Spawn(const SpawnOptions& options);

// Opens /dev/null on any of fds 0, 1, 2 that is closed. Call first thing in
// main: otherwise the next file opened takes such a number, and a child's
// stdio set-up (dup2 onto 0-2) would clobber it.
void EnsureStandardFds();

// Maps a waitpid status to a shell-style exit code: the exit status, or
// 128 + N for death by signal N.
int ExitCodeFromWaitStatus(int wait_status);

// Returns "exited with status 3" or "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int wait_status);

// Opens a pidfd for pid (readable once the process exits), or -1 if the kernel
// has none. The fd is close-on-exec.
int OpenPidFd(pid_t pid);

// waitpid that retries on EINTR. Returns the pid, 0 if (with WNOHANG) it is
// still running, or -1 with errno set.
pid_t WaitPid(pid_t pid, int* wait_status, int flags);

// Resolves a program name against a PATH value. Returns "" when not found.
std::string SearchPath(const std::string& name, const std::string& path_value);

}  // namespace odin

namespace odin {

// Returns the direct children of this process (all its threads but those
// that called KeepOwnChildren), from /proc/self/task/*/children.
std::vector<pid_t> ListChildren();

// Returns the children one thread of this process started (tid: its
// gettid()), from /proc/self/task/TID/children.
std::vector<pid_t> ListChildrenOfThread(pid_t tid);

// SIGKILLs and reaps every descendant of this process, round after round,
// until none is left. REQUIRES: the caller is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so orphaned grandchildren come back to it. Returns
// how many processes were killed.
int KillAllDescendants();

// The calling thread's children are its own (keep) or the process's again
// (!keep, before the thread ends): it waits for each it starts, and
// ListChildren (so KillAllDescendants) passes them by. For a helper thread
// whose child must not die of another thread's clean-up; orphans come back
// to the main thread, never to it. Up to 8 threads: false (and the children
// not kept) when 8 others keep theirs.
bool KeepOwnChildren(bool keep = true);

}  // namespace odin

namespace odin {

struct CommandOutput {
  int exit_code = 0;   // as ExitCodeFromWaitStatus
  std::string output;  // stdout and stderr, interleaved
};

// Runs a short command to completion and captures its output (for probes such
// as `bwrap --version`). options' stdout/stderr fds are ignored.
StatusOr<CommandOutput> RunCommand(SpawnOptions options);

}  // namespace odin
