#include "tests/test_util.h"

#include "workspace/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cstdlib>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"

namespace odin::testing {

bool MakeNestedDirs(const std::string& root, const char* name, int levels) {
  int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  for (int i = 0; i < levels; ++i) {
    int next = mkdirat(fd, name, 0755) == 0 ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    close(fd);
    if (next < 0) return false;
    fd = next;
  }
  close(fd);
  return true;
}

std::string BinDir() { return ODIN_TEST_BIN_DIR; }

TempWorkspace::TempWorkspace() {
  auto dir = MakeTempDir("odin-it");
  if (!dir.ok()) abort();
  path_ = *RealPath(*dir);
}

TempWorkspace::~TempWorkspace() { RemoveTree(path_); }

namespace {

constexpr const char* kUserDirVariables[] = {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR",
                                             "CLAUDE_CONFIG_DIR"};

// This test process's stand-ins for the user's directories.
const std::string& UserDirsRoot() {
  // Never destroyed: the exit handler below still needs it.
  static const std::string* root = [] {
    StatusOr<std::string> dir = MakeTempDir("odin-test-user");
    if (!dir.ok()) abort();
    for (const char* name : kUserDirVariables) {
      if (!MakeDirs(JoinPath(*dir, name), 0700).ok()) abort();
    }
    return new std::string(*dir);
  }();
  static const bool cleanup = atexit([] { RemoveTree(*root); }) == 0;
  (void)cleanup;
  return *root;
}

SpawnOptions OdinSpawn(const std::string& cwd, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env) {
  SpawnOptions o;
  o.argv = {BinDir() + "/odin"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> all = env;
  for (const char* name : kUserDirVariables) all.emplace(name, UserDir(name));
  for (const std::string& e : CurrentEnvironment()) {
    std::string name = e.substr(0, e.find('='));
    if (all.count(name) == 0) o.env.push_back(e);
  }
  for (const auto& [k, v] : all) o.env.push_back(k + "=" + v);
  o.cwd = cwd;
  return o;
}

}  // namespace

std::string UserDir(const std::string& variable) { return JoinPath(UserDirsRoot(), variable); }

Ran RunOdin(const std::string& cwd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env) {
  return RunOdinWrapped({}, cwd, args, env);
}

Ran RunOdinWrapped(const std::vector<std::string>& wrapper, const std::string& cwd,
                   const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  StatusOr<Pipe> out = MakePipe(O_CLOEXEC);
  StatusOr<Pipe> err = MakePipe(O_CLOEXEC);
  if (!out.ok() || !err.ok()) abort();
  SpawnOptions o = OdinSpawn(cwd, args, env);
  o.argv.insert(o.argv.begin(), wrapper.begin(), wrapper.end());
  o.stdout_fd = out->write_end.get();
  o.stderr_fd = err->write_end.get();
  StatusOr<pid_t> pid = Spawn(o);
  out->write_end.reset();
  err->write_end.reset();
  Ran ran;
  if (!pid.ok()) {
    ran.err = pid.status().ToString();
    return ran;
  }
  pollfd fds[2] = {{out->read_end.get(), POLLIN, 0}, {err->read_end.get(), POLLIN, 0}};
  std::string* sinks[2] = {&ran.out, &ran.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        // Keep at most 16 MiB per stream; tests that print more only count it.
        if (sinks[i]->size() < (16u << 20)) sinks[i]->append(buf, static_cast<size_t>(n));
      } else {  // end of the stream; its owner closes it
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  ran.exit_code = Wait(*pid);
  return ran;
}

pid_t StartOdin(const std::string& cwd, const std::vector<std::string>& args, int* stdout_fd,
                const std::map<std::string, std::string>& env) {
  StatusOr<Pipe> out = MakePipe(O_CLOEXEC);
  if (!out.ok()) abort();
  SpawnOptions o = OdinSpawn(cwd, args, env);
  o.stdout_fd = out->write_end.get();
  o.stderr_fd = 2;
  StatusOr<pid_t> pid = Spawn(o);
  out->write_end.reset();
  if (!pid.ok()) abort();
  *stdout_fd = out->read_end.release();
  return *pid;
}

pid_t StartOdinPiped(const std::string& cwd, const std::vector<std::string>& args, int* stdin_fd, int* stdout_fd,
                     const std::map<std::string, std::string>& env) {
  StatusOr<Pipe> in = MakePipe(O_CLOEXEC);
  StatusOr<Pipe> out = MakePipe(O_CLOEXEC);
  if (!in.ok() || !out.ok()) abort();
  SpawnOptions o = OdinSpawn(cwd, args, env);
  o.stdout_fd = out->write_end.get();
  o.stderr_fd = 2;
  // Spawn gives children /dev/null as stdin; hand ours over under its own
  // number and let a shell move it to 0.
  std::string fd = std::to_string(in->read_end.get());
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 0<&" + fd + " " + fd + "<&-", "sh"};
  argv.insert(argv.end(), o.argv.begin(), o.argv.end());
  o.argv = argv;
  o.env.push_back("PATH=/usr/bin:/bin");
  o.keep_fds = {in->read_end.get()};
  StatusOr<pid_t> pid = Spawn(o);
  in->read_end.reset();
  out->write_end.reset();
  if (!pid.ok()) abort();
  *stdin_fd = in->write_end.release();
  *stdout_fd = out->read_end.release();
  return *pid;
}

FakeLlm::FakeLlm(const std::string& script) {
  dir_ = *MakeTempDir("odin-fake-llm");
  if (!WriteFileAtomic(dir_ + "/script.json", script).ok()) abort();
  StatusOr<Pipe> out = MakePipe(O_CLOEXEC);
  if (!out.ok()) abort();
  SpawnOptions o;
  o.argv = {BinDir() + "/fake_llm_server", "--script", dir_ + "/script.json", "--log", dir_ + "/log.jsonl"};
  o.env = CurrentEnvironment();
  o.stdout_fd = out->write_end.get();
  o.stderr_fd = 2;
  o.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(o);
  out->write_end.reset();
  if (!pid.ok()) abort();
  pid_ = *pid;
  std::string line = ReadUntil(out->read_end.get(), "\n");
  out->read_end.reset();
  port_ = line.rfind("PORT=", 0) == 0 ? atoi(line.c_str() + 5) : 0;
}

FakeLlm::~FakeLlm() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Wait(pid_);
  }
  RemoveTree(dir_);
}

std::vector<std::string> FakeLlm::LogLines() const {
  std::vector<std::string> lines;
  StatusOr<std::string> log = ReadFileToString(dir_ + "/log.jsonl");
  if (!log.ok()) return lines;
  // Whole lines only: the server may be writing the last one (its stream
  // flushes in 8 KiB pieces), and half a line is no JSON.
  size_t start = 0;
  for (size_t nl = log->find('\n'); nl != std::string::npos; nl = log->find('\n', start)) {
    if (nl > start) lines.push_back(log->substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string ReadUntil(int fd, const std::string& text) {
  std::string got;
  char buf[4096];
  while (got.find(text) == std::string::npos) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

int Wait(pid_t pid) {
  int status = 0;
  WaitPid(pid, &status, 0);
  return ExitCodeFromWaitStatus(status);
}

std::vector<pid_t> ProcessesWithEnv(const std::string& name, const std::string& value) {
  std::vector<pid_t> found;
  std::string needle = name + "=" + value;
  DIR* proc = opendir("/proc");
  while (dirent* e = readdir(proc)) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0) continue;
    StatusOr<std::string> env = ReadFileToString(std::string("/proc/") + e->d_name + "/environ");
    if (!env.ok()) continue;
    size_t pos = 0;
    while (pos < env->size()) {
      size_t end = env->find('\0', pos);
      if (end == std::string::npos) end = env->size();
      if (env->compare(pos, end - pos, needle) == 0) found.push_back(pid);
      pos = end + 1;
    }
  }
  closedir(proc);
  return found;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(10000);
  }
  return true;
}

std::vector<pid_t> ProcessesLeftWithEnv(const std::string& name, const std::string& value, int within_ms) {
  std::vector<pid_t> left;
  WaitUntil([&] { return (left = ProcessesWithEnv(name, value)).empty(); }, std::chrono::milliseconds(within_ms));
  return left;
}

std::vector<pid_t> ProcessesWithArg(const std::string& text, const std::string& more) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  while (dirent* e = readdir(proc)) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    StatusOr<std::string> cmdline = ReadFileToString(std::string("/proc/") + e->d_name + "/cmdline");
    if (cmdline.ok()) std::replace(cmdline->begin(), cmdline->end(), '\0', ' ');  // arguments, as a shell shows them
    if (cmdline.ok() && cmdline->find(text) != std::string::npos &&
        (more.empty() || cmdline->find(more) != std::string::npos)) {
      found.push_back(pid);
    }
  }
  closedir(proc);
  return found;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0, nl; start < text.size(); start = nl + 1) {
    nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

std::string UniqueMarker() { return NewId("mark"); }

void MakeOdinStateDir(const std::string& workspace) {
  StatusOr<Workspace> ws = FindWorkspace(workspace);
  if (!ws.ok() || !PrepareStateDir(*ws).ok()) std::abort();
}

std::string RunClientScript(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                            std::string* output) {
  SpawnOptions so;
  so.argv = argv;
  // env's values replace ours (getenv finds the first of a name).
  for (const std::string& e : CurrentEnvironment()) {
    if (env.count(e.substr(0, e.find('='))) == 0) so.env.push_back(e);
  }
  for (const auto& [k, v] : env) so.env.push_back(k + "=" + v);
  StatusOr<CommandOutput> ran = RunCommand(so);
  std::string all = ran.ok() ? ran->output : ran.status().message();
  if (output != nullptr) *output = all;
  size_t at = all.find("RESULT ");
  if (at == std::string::npos) return "";
  size_t end = all.find('\n', at);
  return all.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
}

}  // namespace odin::testing
