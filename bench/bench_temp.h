#pragma once
// The benchmarks' temporary directories, removed however a run ends.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace odin::bench {

// The pipe to the cleaner (-1: none started).
inline int g_temp_cleaner = -1;

// Starts the cleaner: a process that outlives an interrupted benchmark
// (Ctrl-C, SIGTERM, SIGKILL, a crash) and removes what is left of the
// directories BenchTempDir made, once the benchmark's end closes the pipe.
// Call first in main, before any thread. The pipe is close-on-exec, so
// nothing the benchmark starts holds it open.
inline void StartTempCleaner() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[1]);
    // Not ended with the benchmark's process group.
    setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_IGN);
    std::string paths;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) != 0) {
      if (n > 0) paths.append(buf, static_cast<size_t>(n));
    }
    size_t start = 0;
    while (start < paths.size()) {
      size_t nl = paths.find('\n', start);
      if (nl == std::string::npos) break;  // cut short: not a path to trust
      RemoveTree(paths.substr(start, nl - start));
      start = nl + 1;
    }
    _exit(0);
  }
  close(fds[0]);
  g_temp_cleaner = fds[1];
}

// MakeTempDir, told to the cleaner.
inline StatusOr<std::string> BenchTempDir(std::string_view prefix) {
  StatusOr<std::string> dir = MakeTempDir(prefix);
  if (dir.ok() && g_temp_cleaner >= 0) {
    std::string line = *dir + "\n";  // below PIPE_BUF: one write, whole
    (void)!write(g_temp_cleaner, line.data(), line.size());
  }
  return dir;
}

}  // namespace odin::bench
