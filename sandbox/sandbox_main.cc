// odin-sandbox: runs one program inside Odin's sandbox.
//
// Contract:
//  - With bubblewrap usable, the program runs in the namespaces described in
//    bwrap_args.h: a user namespace with no capabilities, read-only root,
//    fresh /dev, /proc (kernel knobs read-only) and private /tmp, the
//    workspace writable (or read-only), no network, its own pid namespace.
//  - Started as root with --user UID:GID, bubblewrap and the program run as
//    that user (the workspace's owner), so root's files are out of reach;
//    odin-sandbox itself stays root only to manage the cgroup.
//  - With --pids-max or --memory-max, the program and everything it starts
//    run in a cgroup of the sandbox's own (sandbox/cgroup.h): bubblewrap's
//    child starts the program only once the launcher has put it there
//    (--block-fd), and loads the seccomp filters the launcher exported
//    (--add-seccomp-fd) just before it does. No stage of Odin's own runs
//    inside: one exec fewer per sandbox.
//  - odin-sandbox is started with a parent-death signal by its caller and gives
//    bwrap one too; bwrap's --die-with-parent covers the inside. Told to stop
//    (SIGTERM, SIGINT, SIGHUP), it kills bwrap and, as a child subreaper,
//    whatever bwrap started that outlives it, at any point of bwrap's set-up.
//    So stopping odin-sandbox (or killing its caller) kills everything it
//    started.
//  - Without namespaces it stays as the program's parent and a child
//    subreaper, and kills every descendant when the program exits or when it
//    gets SIGTERM/SIGINT/SIGHUP (its caller should make SIGTERM its
//    parent-death signal), so nothing outlives it there either.
//  - If bubblewrap is missing or cannot set up its namespaces:
//      --policy=auto     a warning on stderr, then the program runs WITHOUT
//                        namespaces, under seccomp and Landlock, with every
//                        capability dropped; ODIN_SANDBOX says "none: <why>".
//                        As root this fails instead (exit 71): Landlock does
//                        not keep a root program from the host's sockets,
//                        other processes' /proc/PID/environ or the daemon;
//      --policy=fallback the same fallback, also as root (the user's choice);
//      --policy=require  exit 71 (kSandboxSetupFailedExit); the program never runs.
//    --policy=off runs the program without namespaces, on purpose.
//    A --bwrap path that is not an executable is an error (exit 71) under
//    every policy but off: a typo must not turn the sandbox off.
//  - Exit status: the program's own, or 128+N if bwrap died of signal N.
//  - The program sees ODIN_SANDBOX: "bwrap", or "none: <why>".
//
// Caveats: without namespaces nothing stops the program from reading outside
// the workspace or reaching the host's unix sockets; only Landlock (writes)
// and seccomp apply. If odin-sandbox itself is SIGKILLed there, the
// program's descendants survive unless the caller kills their process group.

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/cgroup.h"
#include "sandbox/landlock.h"
#include "sandbox/read_only_binds.h"
#include "sandbox/sandbox_exit_codes.h"
#include "sandbox/sandbox_options.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/shared_network.h"
#include "sandbox/workspace_overlay.h"

namespace odin {
namespace {

// The sandbox's cgroup, while the launcher holds one: removed before the
// launcher exits. g_cgroup_failed: a process could not be put in it.
std::unique_ptr<SandboxCgroup> g_cgroup;
bool g_cgroup_failed = false;

void LeaveCgroup() {
  if (g_cgroup) g_cgroup->Leave();
}

// Best effort even under sandbox.require: many machines give no cgroup
// access (non-root on v1, read-only cgroupfs, v2 without delegation); the
// commands still get their rlimits, and odin doctor says what is missing.
void WarnNoLimits(const Status& why) {
  fprintf(stderr, "odin-sandbox: WARNING: no process and memory limits: %s\n", why.message().c_str());
}

// Makes the sandbox's group with its limits; AddToCgroup puts processes in.
void CreateCgroup(const SandboxOptions& o) {
  CgroupLimits limits{o.pids_max, o.memory_max_bytes};
  if (!limits.any()) return;
  StatusOr<std::unique_ptr<SandboxCgroup>> g = SandboxCgroup::Create(limits, o.cgroup_parent);
  if (g.ok()) {
    g_cgroup = std::move(*g);
  } else {
    WarnNoLimits(g.status());
  }
}

// Puts pid, and what it starts from now on, under the limits (if there is a
// group). The first move waits for an RCU grace period (5-20 ms here).
void AddToCgroup(pid_t pid) {
  if (!g_cgroup || g_cgroup_failed) return;
  Status s = g_cgroup->Add(pid);
  if (!s.ok()) {
    g_cgroup_failed = true;
    WarnNoLimits(s);
  }
}

// The user the program runs as, when odin-sandbox was started as root with
// --user: the uid, gid and the user's supplementary groups, for Spawn.
void ApplyUser(const SandboxOptions& o, SpawnOptions* spawn) {
  if (o.run_uid < 0 || geteuid() != 0) return;
  spawn->uid = o.run_uid;
  spawn->gid = o.run_gid;
  spawn->groups = {static_cast<gid_t>(o.run_gid)};
  if (passwd* pw = getpwuid(static_cast<uid_t>(o.run_uid))) {
    int n = 64;
    std::vector<gid_t> groups(static_cast<size_t>(n));
    if (getgrouplist(pw->pw_name, static_cast<gid_t>(o.run_gid), groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      if (getgrouplist(pw->pw_name, static_cast<gid_t>(o.run_gid), groups.data(), &n) < 0) n = 0;
    }
    if (n > 0) {
      groups.resize(static_cast<size_t>(n));
      spawn->groups = groups;
    }
  }
}

// The signals that tell the launcher to stop while bubblewrap runs: its
// caller's parent-death signal (SIGTERM), a Ctrl-C, a hang-up.
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  return set;
}

// Told to stop while bubblewrap runs: kill bubblewrap and everything it
// started, then exit as killed by sig. The launcher is a child subreaper, so
// bubblewrap's child (the sandbox's pid 1) comes back to it when bubblewrap
// dies, whatever that child was doing: waiting for its uid map, or past its
// setsid but before it arms its own parent-death signal (a process group kill
// missed it there, and it lived on under init). KillAllDescendants kills it
// in its next round, and with it the sandbox's pid namespace.
[[noreturn]] void StopSandbox(pid_t bwrap, int sig) {
  kill(bwrap, SIGKILL);
  KillAllDescendants();
  LeaveCgroup();
  _exit(128 + sig);
}

// The signal waiting on fd (a signalfd of StopSignals), or 0.
int ReadStopSignal(int fd) {
  signalfd_siginfo info;
  ssize_t n;
  do {
    n = read(fd, &info, sizeof info);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof info) ? static_cast<int>(info.ssi_signo) : 0;
}

// Whether a user with these ids can reach path: search permission on every
// directory on the way (symlinks are followed by stat, as bubblewrap does).
bool UserCanReach(const std::string& path, uid_t uid, const std::vector<gid_t>& groups) {
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    std::string dir = at == std::string::npos ? DirName(path) : path.substr(0, at);
    if (at == std::string::npos && dir == path) break;
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) return false;
    mode_t bit = st.st_uid == uid                                                     ? S_IXUSR
                 : std::find(groups.begin(), groups.end(), st.st_gid) != groups.end() ? S_IXGRP
                                                                                      : S_IXOTH;
    if ((st.st_mode & bit) == 0) return false;
    if (at == std::string::npos) break;
  }
  return true;
}

// Started as root to run the program as another user, bubblewrap runs as
// that user: a path to bind or mask that the user cannot reach (a
// toolchain under root's home, say) would fail bubblewrap's setup, and with
// it the whole sandbox. Such paths are left out: the user cannot reach them
// anyway.
void DropUnreachable(SandboxOptions* o, const std::vector<gid_t>& groups) {
  auto keep = [&](std::vector<std::string>* paths) {
    std::erase_if(*paths,
                  [&](const std::string& p) { return !UserCanReach(p, static_cast<uid_t>(o->run_uid), groups); });
  };
  keep(&o->readonly_paths);
  keep(&o->writable_paths);
  keep(&o->masked_paths);
  keep(&o->hidden_paths);
}

// Whether the program would run as the host's root.
bool ProgramRunsAsRoot(const SandboxOptions& o) { return geteuid() == 0 && o.run_uid <= 0; }

// Drops every capability of this process and what it starts. For root
// without namespaces, where no user namespace takes them away.
Status DropAllCapabilities() {
  int err = DropAllCapabilitiesRaw();
  return err == 0 ? Status::OK() : PosixError("dropping capabilities", err);
}

// Without a pid namespace nothing kills what the program leaves behind when it
// dies, so stay as its parent, a child subreaper: orphans of its tree come to
// us, and we kill them all when the program exits or we are told to stop
// (SIGTERM, which is also our parent-death signal). A stand-in for the pid
// namespace, like Bazel's process-wrapper.
[[noreturn]] void Supervise(const SandboxOptions& o, const std::string& description) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, nullptr);

  std::vector<std::string> env = CurrentEnvironment();
  env.push_back("ODIN_SANDBOX=" + description);
  SpawnOptions spawn;
  spawn.argv = o.program;
  spawn.env = env;
  spawn.cwd = o.workspace;
  spawn.stdout_fd = STDOUT_FILENO;
  spawn.stderr_fd = STDERR_FILENO;
  spawn.keep_fds = o.pass_fds;
  spawn.parent_death_signal = SIGKILL;
  spawn.new_process_group = false;  // signals to our group reach it too
  ApplyUser(o, &spawn);
  // Under the limits (if any) before the program starts: what it starts
  // inherits them.
  AddToCgroup(getpid());
  StatusOr<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) {
    fprintf(stderr, "odin-sandbox: %s\n", pid.status().message().c_str());
    _exit(127);
  }
  int exit_code = 0;
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(&mask, &info);
    if (sig == SIGCHLD) {
      int status = 0;
      pid_t done;
      bool program_exited = false;
      while ((done = WaitPid(-1, &status, WNOHANG)) > 0) {  // reap adopted orphans too
        if (done == *pid) {
          program_exited = true;
          exit_code = ExitCodeFromWaitStatus(status);
        }
      }
      if (program_exited) break;
    } else if (sig > 0) {
      kill(*pid, SIGKILL);
      exit_code = 128 + sig;
      break;
    }
  }
  KillAllDescendants();
  LeaveCgroup();
  _exit(exit_code);
}

[[noreturn]] void RunWithoutNamespaces(const SandboxOptions& o, const std::string& why) {
  if (o.policy == SandboxPolicy::kRequire) {
    fprintf(stderr, "odin-sandbox: sandbox required but unavailable: %s\n", why.c_str());
    _exit(kSandboxSetupFailedExit);
  }
  if (o.policy == SandboxPolicy::kAuto && ProgramRunsAsRoot(o)) {
    fprintf(stderr,
            "odin-sandbox: bubblewrap unusable (%s); refusing to run a program as root without namespaces: "
            "Landlock cannot keep it from the host's sockets, other processes' /proc/PID/environ or Odin's "
            "daemon (choose --sandbox fallback to accept that, or see odin doctor)\n",
            why.c_str());
    _exit(kSandboxSetupFailedExit);
  }
  if (o.policy == SandboxPolicy::kAuto || o.policy == SandboxPolicy::kFallback) {
    fprintf(stderr, "odin-sandbox: WARNING: bubblewrap unusable (%s); running WITHOUT a sandbox\n", why.c_str());
    // The seccomp layer does not need namespaces: it still keeps the program
    // off the network, ptrace and mounts.
    if (o.seccomp) {
      Status s = InstallSeccompFilter({.deny_network = !o.network});
      if (!s.ok()) fprintf(stderr, "odin-sandbox: %s; running without the seccomp layer\n", s.message().c_str());
    }
    // Landlock keeps writes in the workspace (and the program's own
    // directories) instead of the namespaces' read-only root.
    std::vector<std::string> writable = o.writable_paths;
    if (!o.workspace_readonly) writable.push_back(o.workspace);
    for (const char* dir : {"/tmp", "/var/tmp", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                            "/dev/tty", "/dev/pts", "/dev/shm"}) {
      writable.push_back(dir);
    }
    Status landlock = RestrictWritesTo(writable);
    if (!landlock.ok()) {
      fprintf(stderr, "odin-sandbox: %s; writes are not confined to the workspace\n", landlock.message().c_str());
    } else {
      fprintf(stderr, "odin-sandbox: Landlock confines writes to the workspace%s\n",
              o.workspace_readonly ? " (read-only here)" : "");
    }
    // Root keeps no capability (a uid switch for the program drops them anyway).
    if (ProgramRunsAsRoot(o)) {
      Status caps = DropAllCapabilities();
      if (!caps.ok()) {
        fprintf(stderr, "odin-sandbox: %s; refusing to run as root with capabilities\n", caps.message().c_str());
        _exit(kSandboxSetupFailedExit);
      }
    }
  }
  Supervise(o, "none: " + why);
}

std::string FirstLine(std::string text) {
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  return text;
}

// Copies what bwrap and the program write to their stderr (the pipe fd) to
// ours until the last of them closes it, keeping its first bytes in *head;
// stops the sandbox (StopSandbox) if a stop signal comes first.
void RelayUntilEof(int fd, int stop_fd, pid_t bwrap, std::string* head) {
  char buf[4096];
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) {
      if (int sig = ReadStopSignal(stop_fd)) StopSandbox(bwrap, sig);
    }
    if (fds[0].revents == 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (head->size() < 4096) head->append(buf, std::min(static_cast<size_t>(n), 4096 - head->size()));
    (void)!write(STDERR_FILENO, buf, static_cast<size_t>(n));
  }
}

// What bubblewrap wrote on its status fd so far (JSON lines), read without
// waiting.
void ReadStatus(int fd, std::string* into) {
  char buf[1024];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) into->append(buf, static_cast<size_t>(n));
  }
}

// The number after "key": in bubblewrap's status, or -1.
long StatusNumber(const std::string& status, const std::string& key) {
  size_t at = status.find("\"" + key + "\"");
  if (at == std::string::npos) return -1;
  at = status.find(':', at);
  if (at == std::string::npos) return -1;
  char* end = nullptr;
  long v = strtol(status.c_str() + at + 1, &end, 10);
  return end == status.c_str() + at + 1 ? -1 : v;
}

int SandboxMain(int argc, char** argv) {
  // 0. Standard fds open, so no pipe of ours lands on 0-2. Not dumpable: a
  //    worker's secret passes through here.
  EnsureStandardFds();
  // The network edit mode's commands share, made for odin (shared_network.h):
  // dumpable, or the kernel gives a new user namespace's maps to root and
  // this user may not write them. It holds no secret.
  if (argc == 2 && strcmp(argv[1], "--hold-net") == 0) return HoldNetwork();
  if (argc == 4 && strcmp(argv[1], "--hold-net") == 0 && strcmp(argv[2], "--proxy-port") == 0) {
    int port = atoi(argv[3]);
    if (port < 1 || port > 65535) return kSandboxUsageExit;
    return HoldNetwork(port);
  }
  prctl(PR_SET_DUMPABLE, 0);
  // 1. Options.
  StatusOr<SandboxOptions> parsed = ParseSandboxOptions(argc, argv);
  if (!parsed.ok()) {
    fprintf(stderr, "%s\n", parsed.status().message().c_str());
    return kSandboxUsageExit;
  }
  // Started as root to run the program as another user, bubblewrap runs as
  // that user, who may not reach an overlay root inside Odin's own state:
  // binding it would fail bubblewrap's setup, and with it the whole sandbox.
  // The overlay goes; the sandbox stays. So do other paths out of reach.
  if (parsed->run_uid >= 0 && geteuid() == 0) {
    parsed->overlay_root.clear();
    SpawnOptions as_user;
    ApplyUser(*parsed, &as_user);
    DropUnreachable(&*parsed, as_user.groups);
  }
  // The shared network's descriptor reaches no program: it is joined here.
  if (parsed->join_net_fd >= 0) fcntl(parsed->join_net_fd, F_SETFD, FD_CLOEXEC);
  const SandboxOptions& o = *parsed;

  // 2. No namespaces on purpose.
  if (o.policy == SandboxPolicy::kOff) RunWithoutNamespaces(o, "sandbox off by policy");
  // The limits hold with or without namespaces.
  CreateCgroup(o);

  // 3. Find bubblewrap. A configured path that is not there is a mistake to
  //    name, not a reason to run without namespaces.
  if (!o.bwrap.empty() && (o.bwrap[0] != '/' || access(o.bwrap.c_str(), X_OK) != 0 || IsDirectory(o.bwrap))) {
    fprintf(stderr, "odin-sandbox: the configured bwrap %s is not an executable file%s\n", o.bwrap.c_str(),
            o.bwrap[0] != '/' ? " (an absolute path is required)" : "");
    _exit(kSandboxSetupFailedExit);
  }
  std::string bwrap = o.bwrap.empty() ? SearchPath("bwrap", getenv("PATH") ? getenv("PATH") : "") : o.bwrap;
  if (bwrap.empty() || access(bwrap.c_str(), X_OK) != 0) RunWithoutNamespaces(o, "bwrap not found");

  // 4. The seccomp filters, which bubblewrap loads just before it execs the
  //    program. Failing closed when the sandbox is required; else said.
  std::vector<UniqueFd> filters;
  if (o.seccomp) {
    // Inside the network namespace there is no network to reach: sockets of
    // every family stay usable (a project's tests on 127.0.0.1, netlink).
    StatusOr<std::vector<UniqueFd>> exported =
        ExportSeccompFilters({.deny_network = false, .allow_overlay_setup = !o.overlay_root.empty()});
    if (exported.ok()) {
      filters = std::move(*exported);
    } else {
      fprintf(stderr, "odin-sandbox: %s%s\n", exported.status().message().c_str(),
              o.policy == SandboxPolicy::kRequire ? "" : "; running without the seccomp layer");
      if (o.policy == SandboxPolicy::kRequire) return kSandboxSetupFailedExit;
    }
  }

  // 5. Start bwrap. Its stderr (and the program's) is a pipe we relay, so a
  //    failure can be named. It reports its child's pid on the status pipe,
  //    and the child waits on the block pipe until we have put it under the
  //    limits.
  StatusOr<Pipe> status_pipe = MakePipe(O_CLOEXEC);
  StatusOr<Pipe> block = MakePipe(O_CLOEXEC);
  StatusOr<Pipe> errors = MakePipe(O_CLOEXEC);
  for (const StatusOr<Pipe>* p : {&status_pipe, &block, &errors}) {
    if (!p->ok()) {
      fprintf(stderr, "odin-sandbox: %s\n", p->status().message().c_str());
      return kSandboxSetupFailedExit;
    }
  }
  // Stop signals are read from a signalfd from here on (StopSandbox), and
  // what bubblewrap leaves behind when it dies comes back to us.
  sigset_t stop_signals = StopSignals();
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  UniqueFd stop(signalfd(-1, &stop_signals, SFD_CLOEXEC));
  if (!stop.valid() || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    fprintf(stderr, "odin-sandbox: %s\n", PosixError("stop signals", errno).message().c_str());
    return kSandboxSetupFailedExit;
  }
  SpawnOptions spawn;
  ApplyUser(o, &spawn);
  // (Where root may not even make a mount namespace, a container without
  // CAP_SYS_ADMIN, bubblewrap could not either: the policy decides, as for
  // any bubblewrap that cannot set up.)
  if (geteuid() == 0 && spawn.uid < 0) {
    if (Status s = MakeHostDevicesReadOnly(); !s.ok()) {
      RunWithoutNamespaces(o, "the host's devices cannot be made read-only for the sandbox: " + s.message());
    }
  }
  // The commands' shared network, joined now: bubblewrap makes none. Where
  // it cannot be joined, a network of the sandbox's own (said), unless the
  // sandbox is required.
  if (o.join_net_fd >= 0) {
    Status joined = JoinNetwork(o.join_net_fd);
    close(o.join_net_fd);
    parsed->join_net_fd = -1;
    parsed->net_joined = joined.ok();
    if (!joined.ok()) {
      fprintf(stderr, "odin-sandbox: %s%s\n", joined.message().c_str(),
              o.policy == SandboxPolicy::kRequire ? "" : "; this sandbox gets a network of its own");
      if (o.policy == SandboxPolicy::kRequire) return kSandboxSetupFailedExit;
    }
  }
  BwrapInvocation inv{bwrap,
                      status_pipe->write_end.get(),
                      block->read_end.get(),
                      {},
                      /*privileged=*/geteuid() == 0 && spawn.uid < 0};
  for (const UniqueFd& f : filters) inv.seccomp_fds.push_back(f.get());
  spawn.argv = BuildBwrapArgs(o, inv);
  spawn.env = CurrentEnvironment();
  spawn.stdout_fd = STDOUT_FILENO;
  spawn.stderr_fd = errors->write_end.get();
  spawn.keep_fds = {status_pipe->write_end.get(), block->read_end.get()};
  spawn.keep_fds.insert(spawn.keep_fds.end(), inv.seccomp_fds.begin(), inv.seccomp_fds.end());
  spawn.keep_fds.insert(spawn.keep_fds.end(), o.pass_fds.begin(), o.pass_fds.end());
  spawn.parent_death_signal = SIGKILL;
  spawn.new_process_group = false;  // signals to our group reach bwrap too
  StatusOr<pid_t> pid = Spawn(spawn);
  status_pipe->write_end.reset();
  block->read_end.reset();
  errors->write_end.reset();
  filters.clear();
  if (!pid.ok()) RunWithoutNamespaces(o, pid.status().message());
  // bwrap under the limits at once: the grace period the first move waits
  // for passes while bwrap sets the sandbox up (moving ourselves in first
  // would put it before). Its child, which may have been cloned before the
  // move, is added when bwrap reports it, before it starts the program.
  AddToCgroup(*pid);

  // 6. Wait for bwrap's report of its child, or for bwrap to give up first.
  std::string bwrap_errors, status;
  long child = -1;
  pollfd fds[3] = {
      {status_pipe->read_end.get(), POLLIN, 0}, {errors->read_end.get(), POLLIN, 0}, {stop.get(), POLLIN, 0}};
  while (child < 0 && fds[0].fd >= 0) {
    int n = poll(fds, 3, -1);
    if (n < 0 && errno == EINTR) continue;
    if (fds[2].revents != 0) {
      if (int sig = ReadStopSignal(stop.get())) StopSandbox(*pid, sig);
    }
    if (fds[1].revents != 0) {
      char buf[1024];
      ssize_t r = read(errors->read_end.get(), buf, sizeof buf);
      if (r > 0) bwrap_errors.append(buf, static_cast<size_t>(r));
      if (r <= 0) fds[1].fd = -1;
    }
    if (fds[0].revents != 0) {
      char buf[512];
      ssize_t r = read(status_pipe->read_end.get(), buf, sizeof buf);
      if (r > 0) status.append(buf, static_cast<size_t>(r));
      if (r <= 0) fds[0].fd = -1;  // bwrap closed it: it is gone
      child = StatusNumber(status, "child-pid");
    }
  }
  if (child <= 0) {
    block->write_end.reset();
    int wait_status = 0;
    WaitPid(*pid, &wait_status, 0);
    errors->read_end.reset();
    std::string why = FirstLine(bwrap_errors);
    if (why.empty()) why = "bwrap " + DescribeWaitStatus(wait_status) + " before the sandbox was ready";
    RunWithoutNamespaces(o, why);
  }
  AddToCgroup(static_cast<pid_t>(child));
  (void)!write(block->write_end.get(), "g", 1);  // go: bwrap's child goes on to the program
  block->write_end.reset();
  if (!bwrap_errors.empty()) (void)!write(STDERR_FILENO, bwrap_errors.data(), bwrap_errors.size());

  // 7. The program runs; pass its exit status through. bubblewrap reports
  //    an exit code only for a program it started: without one, it failed
  //    to set up (after its report) and the policy decides, as above.
  std::string head = bwrap_errors;
  RelayUntilEof(errors->read_end.get(), stop.get(), *pid, &head);
  errors->read_end.reset();
  int wait_status = 0;
  WaitPid(*pid, &wait_status, 0);
  KillAllDescendants();  // none, unless bubblewrap's child outlived it
  fcntl(status_pipe->read_end.get(), F_SETFL, O_NONBLOCK);
  ReadStatus(status_pipe->read_end.get(), &status);
  if (WIFEXITED(wait_status) && StatusNumber(status, "exit-code") < 0) {
    std::string why = FirstLine(head);
    // Set up, but the program cannot be run (bubblewrap said why): as a
    // shell answers a command it cannot exec.
    if (why.starts_with("bwrap: execvp ")) {
      LeaveCgroup();
      return 127;
    }
    if (why.empty()) why = "bwrap " + DescribeWaitStatus(wait_status) + " before the program started";
    RunWithoutNamespaces(o, why);
  }
  LeaveCgroup();
  return ExitCodeFromWaitStatus(wait_status);
}

}  // namespace
}  // namespace odin

int main(int argc, char** argv) { return odin::SandboxMain(argc, argv); }
