#pragma once
// The benchmarks' temporary directories, removed however a run ends.

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace odin::bench {

// The socket to the cleaner (-1: none started).
inline int g_temp_cleaner = -1;

// Starts the cleaner: a process that outlives an interrupted benchmark
// (Ctrl-C, SIGTERM, SIGKILL, a crash) and removes what is left of the
// directories BenchTempDir made, once the benchmark's end closes its
// socket. Call first in main, before any thread. The socket is
// close-on-exec, so nothing the benchmark starts holds it open; the
// cleaner holds none of the benchmark's stdio (a pipe reading the
// benchmark's output ends with it), and a cleaner gone early costs the
// benchmark its cleanup, never a SIGPIPE.
inline void StartTempCleaner() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
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
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd : {0, 1, 2}) {
      if (null >= 0) dup2(null, fd);
    }
    std::string lines;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) != 0) {
      if (n > 0) lines.append(buf, static_cast<size_t>(n));
      if (n < 0 && errno != EINTR) break;
    }
    // "DEV INO PATH\n": removed only if PATH is still that directory (the
    // name may have been freed and taken by someone else since).
    size_t start = 0;
    while (start < lines.size()) {
      size_t nl = lines.find('\n', start);
      if (nl == std::string::npos) break;  // cut short: not a path to trust
      std::string line = lines.substr(start, nl - start);
      start = nl + 1;
      unsigned long long dev = 0, ino = 0;
      int used = 0;
      if (sscanf(line.c_str(), "%llu %llu %n", &dev, &ino, &used) != 2 || used <= 0) continue;
      std::string path = line.substr(static_cast<size_t>(used));
      struct stat st;
      if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == dev && st.st_ino == ino) {
        RemoveTree(path);
      }
    }
    _exit(0);
  }
  close(fds[0]);
  g_temp_cleaner = fds[1];
}

// MakeTempDir, told to the cleaner.
inline StatusOr<std::string> BenchTempDir(std::string_view prefix) {
  StatusOr<std::string> dir = MakeTempDir(prefix);
  struct stat st;
  if (dir.ok() && g_temp_cleaner >= 0 && lstat(dir->c_str(), &st) == 0) {
    std::string line = std::to_string(static_cast<unsigned long long>(st.st_dev)) + " " +
                       std::to_string(static_cast<unsigned long long>(st.st_ino)) + " " + *dir + "\n";
    for (size_t sent = 0; sent < line.size();) {
      ssize_t n = send(g_temp_cleaner, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the cleaner is gone
      sent += static_cast<size_t>(n);
    }
  }
  return dir;
}

}  // namespace odin::bench
