#include "base/subprocess.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace odin {
namespace {

// What the child reports through the close-on-exec pipe when exec fails.
struct ChildFailure {
  int step;  // index into kSteps
  int err;
};
constexpr const char* kSteps[] = {"setpgid", "prctl",     "open /dev/null", "dup2",      "chdir",         "setrlimit",
                                  "exec",    "setgroups", "setresgid",      "setresuid", "prepare to run"};

[[noreturn]] void ChildFail(int pipe_fd, int step, int err) {
  ChildFailure f{step, err};
  (void)!write(pipe_fd, &f, sizeof f);
  _exit(127);
}

void SetLimit(int resource, uint64_t value, int pipe_fd) {
  if (value == 0) return;
  struct rlimit rl = {value, value};
  if (setrlimit(resource, &rl) != 0) ChildFail(pipe_fd, 5, errno);
}

// Runs in the child between vfork and exec, on the
// parent's memory: system calls only, no allocation, no return.
[[noreturn]] void ChildMain(const SpawnOptions& o, const char* path, char* const* argv, char* const* envp, pid_t parent,
                            int pipe_fd) {
  // Own process group, so the whole tree can be signalled as one.
  if (o.new_process_group && setpgid(0, 0) != 0) ChildFail(pipe_fd, 0, errno);
  // Another user: raw system calls, since the C library's wrappers would
  // broadcast the change to the threads of the process whose memory this
  // vfork child borrows. Before the parent-death signal, which a change of
  // credentials clears.
  if (o.gid >= 0 || o.uid >= 0) {
    if (syscall(SYS_setgroups, o.groups.size(), o.groups.data()) != 0) ChildFail(pipe_fd, 7, errno);
    if (o.gid >= 0 && syscall(SYS_setresgid, o.gid, o.gid, o.gid) != 0) ChildFail(pipe_fd, 8, errno);
    if (o.uid >= 0 && syscall(SYS_setresuid, o.uid, o.uid, o.uid) != 0) ChildFail(pipe_fd, 9, errno);
  }
  if (o.parent_death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, o.parent_death_signal) != 0) ChildFail(pipe_fd, 1, errno);
    // The parent may have died before prctl took effect.
    if (getppid() != parent) _exit(127);
  }
  // Default dispositions and an empty mask: what the parent blocked or caught
  // is not the child's business.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) ChildFail(pipe_fd, 2, errno);
  int in = o.stdin_fd >= 0 ? o.stdin_fd : devnull;
  int out = o.stdout_fd >= 0 ? o.stdout_fd : devnull;
  int err = o.stderr_fd >= 0 ? o.stderr_fd : devnull;
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) ChildFail(pipe_fd, 3, errno);
  for (int fd : o.keep_fds) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  // Close everything else above stderr except the kept fds and the report pipe.
  int next = 3;
  auto close_until = [&](int end) {  // closes [next, end)
    if (end > next && syscall(SYS_close_range, next, end - 1, 0) != 0) {
      for (int fd = next; fd < end; ++fd) close(fd);
    }
  };
  // The kept fds are few, so find them by scanning rather than sorting (no
  // allocation after fork).
  for (;;) {
    int lowest = -1;
    for (int fd : o.keep_fds) {
      if (fd >= next && (lowest < 0 || fd < lowest)) lowest = fd;
    }
    if (pipe_fd >= next && (lowest < 0 || pipe_fd < lowest)) lowest = pipe_fd;
    if (lowest < 0) break;
    close_until(lowest);
    next = lowest + 1;
  }
  if (syscall(SYS_close_range, next, ~0U, 0) != 0) {
    // Kernels before 5.9 have no close_range: close one by one up to the limit.
    struct rlimit rl;
    int limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? static_cast<int>(rl.rlim_cur) : 65536;
    for (int fd = next; fd < limit; ++fd) close(fd);
  }

  if (o.before_exec != nullptr) {
    if (int err = o.before_exec(o.before_exec_arg); err != 0) ChildFail(pipe_fd, 10, err);
  }
  if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) ChildFail(pipe_fd, 4, errno);
  SetLimit(RLIMIT_CPU, o.limits.cpu_seconds, pipe_fd);
  SetLimit(RLIMIT_AS, o.limits.address_space_bytes, pipe_fd);
  SetLimit(RLIMIT_FSIZE, o.limits.file_size_bytes, pipe_fd);
  SetLimit(RLIMIT_NOFILE, o.limits.open_files, pipe_fd);
  SetLimit(RLIMIT_NPROC, o.limits.processes, pipe_fd);
  execve(path, argv, envp);
  ChildFail(pipe_fd, 6, errno);
}

std::string EnvValue(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return "";
}

}  // namespace

std::string SearchPath(const std::string& name, const std::string& path_value) {
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path_value.size()) {
    size_t end = path_value.find(':', start);
    if (end == std::string::npos) end = path_value.size();
    std::string dir = path_value.substr(start, end - start);
    start = end + 1;
    // Relative entries (and the empty one, meaning ".") would resolve against
    // whatever directory the child starts in: never search them.
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = dir + "/" + name;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

StatusOr<pid_t> Spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return Status::InvalidArgument("spawn", "empty argv");
  std::string path = SearchPath(o.argv[0], EnvValue(o.env, "PATH"));
  if (path.empty()) return Status::NotFound(o.argv[0], "command not found");

  std::vector<char*> argv;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : o.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  StatusOr<Pipe> report = MakePipe(O_CLOEXEC);
  if (!report.ok()) return report.status().WithContext("spawn");
  pid_t parent = getpid();
  // vfork: the child borrows our memory until it execs, so starting it costs
  // no page-table copy (fork of a threaded process also costs TLB shootdowns
  // on every core). ChildMain therefore only makes system calls. All signals
  // stay blocked across the vfork so that none of our handlers runs in the
  // child; ChildMain resets dispositions before unblocking them.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  // Also with before_exec: unshare(CLONE_NEWUSER | CLONE_NEWNS) takes a
  // process of its own (thread group, fs), not memory of its own, and a
  // fork of a worker costs 2 to 5 ms more than a vfork.
  pid_t pid = vfork();
  if (pid == 0) ChildMain(o, path.c_str(), argv.data(), envp.data(), parent, report->write_end.get());
  int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return PosixError("spawn: vfork", vfork_errno);
  report->write_end.reset();
  // Also set the group from the parent side, so it holds before we return
  // (the child may not have run yet).
  if (o.new_process_group) setpgid(pid, pid);

  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report->read_end.get(), &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  report->read_end.reset();
  if (n == static_cast<ssize_t>(sizeof failure)) {
    int status;
    WaitPid(pid, &status, 0);
    std::string context = std::string(kSteps[failure.step]) + " " + o.argv[0];
    if (failure.step == 6) context = o.argv[0];
    return PosixError(context, failure.err);
  }
  return pid;
}

void EnsureStandardFds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      int null_fd = open("/dev/null", O_RDWR);  // lowest free number: this fd
      if (null_fd > 2) close(null_fd);
    }
  }
}

int ExitCodeFromWaitStatus(int s) {
  if (WIFEXITED(s)) return WEXITSTATUS(s);
  if (WIFSIGNALED(s)) return 128 + WTERMSIG(s);
  return 128;
}

std::string DescribeWaitStatus(int s) {
  if (WIFEXITED(s)) return "exited with status " + std::to_string(WEXITSTATUS(s));
  if (WIFSIGNALED(s)) {
    return "killed by signal " + std::to_string(WTERMSIG(s)) + " (" + strsignal(WTERMSIG(s)) + ")";
  }
  return "stopped";
}

int OpenPidFd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

pid_t WaitPid(pid_t pid, int* wait_status, int flags) {
  pid_t r;
  do {
    r = waitpid(pid, wait_status, flags);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace odin

#include <dirent.h>

#include <atomic>
#include <cstdlib>

namespace odin {

namespace {

// The threads that called KeepOwnChildren (0: a free slot).
std::atomic<pid_t> kept_tasks[8];

bool KeepsOwnChildren(pid_t tid) {
  for (const std::atomic<pid_t>& t : kept_tasks) {
    if (t.load() == tid) return true;
  }
  return false;
}

}  // namespace

bool KeepOwnChildren(bool keep) {
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  for (std::atomic<pid_t>& t : kept_tasks) {
    if (!keep) {
      pid_t mine = tid;
      t.compare_exchange_strong(mine, 0);
      continue;
    }
    pid_t free = 0;
    if (t.load() == tid || t.compare_exchange_strong(free, tid)) return true;
  }
  return !keep;
}

std::vector<pid_t> ListChildrenOfThread(pid_t tid) {
  std::vector<pid_t> kids;
  std::string path = "/proc/self/task/" + std::to_string(tid) + "/children";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return kids;
  char buf[4096];
  std::string text;
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) kids.push_back(static_cast<pid_t>(std::stol(text.substr(pos, end - pos))));
    pos = end + 1;
  }
  return kids;
}

std::vector<pid_t> ListChildren() {
  std::vector<pid_t> kids;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return kids;
  while (dirent* e = readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    pid_t tid = static_cast<pid_t>(atoi(e->d_name));
    if (KeepsOwnChildren(tid)) continue;
    std::vector<pid_t> theirs = ListChildrenOfThread(tid);
    kids.insert(kids.end(), theirs.begin(), theirs.end());
  }
  closedir(tasks);
  return kids;
}

int KillAllDescendants() {
  int killed = 0;
  // Each round kills the current children; their children are reparented to
  // us and show up in the next round. A fork bomb cannot outrun this forever,
  // but bound the rounds anyway.
  for (int round = 0; round < 1000; ++round) {
    std::vector<pid_t> kids = ListChildren();
    if (kids.empty()) break;
    for (pid_t k : kids) kill(k, SIGKILL);
    for (pid_t k : kids) {
      int status;
      WaitPid(k, &status, 0);
    }
    killed += static_cast<int>(kids.size());
  }
  return killed;
}

}  // namespace odin

namespace odin {

StatusOr<CommandOutput> RunCommand(SpawnOptions options) {
  ASSIGN_OR_RETURN(Pipe output, MakePipe(O_CLOEXEC));
  options.stdout_fd = output.write_end.get();
  options.stderr_fd = output.write_end.get();
  StatusOr<pid_t> pid = Spawn(options);
  output.write_end.reset();
  if (!pid.ok()) return pid.status();
  CommandOutput result;
  char buf[4096];
  for (;;) {
    ssize_t n = read(output.read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  output.read_end.reset();
  int status = 0;
  WaitPid(*pid, &status, 0);
  result.exit_code = ExitCodeFromWaitStatus(status);
  return result;
}

}  // namespace odin
