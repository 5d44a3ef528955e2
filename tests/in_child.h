#pragma once
// RunInChild: runs a check in a forked child, for what cannot be undone in
// the test process (a seccomp filter, a Landlock ruleset, setuid). The child
// reports the checks that failed as text; the parent waits for it.
//
// REQUIRES: the test process has a single thread (fork copies only the
// caller's; gtest's own runner has one).

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

namespace odin::testing {

// Runs body in a child and returns what it returned: "" when every check
// held, else one line per failed check. A child that dies instead of
// returning says how.
inline std::string RunInChild(const std::function<std::string()>& body) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return "pipe2 failed";
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(p[0]);
    std::string failed = body();
    const char* at = failed.data();
    size_t left = failed.size();
    while (left > 0) {
      ssize_t n = write(p[1], at, left);
      if (n <= 0) break;
      at += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out += "the child died: status " + std::to_string(status) + "\n";
  }
  return out;
}

}  // namespace odin::testing
