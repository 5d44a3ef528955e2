#pragma once
// Helpers for integration tests that run the real binaries.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace odin::testing {

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Directory holding odin, odin-worker and odin-sandbox.
std::string BinDir();

// A fresh workspace directory (made with mkdtemp), removed at destruction.
class TempWorkspace {
 public:
  TempWorkspace();
  ~TempWorkspace();
  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Runs `odin args...` in cwd with extra environment variables, to completion.
Ran RunOdin(const std::string& cwd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env = {});

// Starts `odin args...` without waiting; stdout is readable from *stdout_fd.
pid_t StartOdin(const std::string& cwd, const std::vector<std::string>& args, int* stdout_fd,
                const std::map<std::string, std::string>& env = {});
// Reads fd until text has been seen or EOF. Returns what was read.
std::string ReadUntil(int fd, const std::string& text);
// Waits for pid and returns its shell-style exit code.
int Wait(pid_t pid);

// Pids of live processes whose environment holds NAME=value.
std::vector<pid_t> ProcessesWithEnv(const std::string& name, const std::string& value);

// A unique marker for this test run (to find leaked processes by).
std::string UniqueMarker();

}  // namespace odin::testing
