#pragma once
// Helpers for integration tests that run the real binaries.

#include <sys/types.h>

#include <chrono>
#include <functional>
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

// Makes `levels` directories called name, each inside the last, below root,
// one level at a time as a command can: deeper than any path may be.
// Returns false (errno set) if a level could not be made.
bool MakeNestedDirs(const std::string& root, const char* name, int levels);

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

// Every odin these helpers start gets XDG_STATE_HOME, XDG_CONFIG_HOME,
// XDG_RUNTIME_DIR and CLAUDE_CONFIG_DIR pointing into a temporary directory
// of this test process (made on first use, removed at exit), unless env sets
// them: no test writes ledger anchors, sockets or trust into the real home,
// nor reads the tester's own ~/.claude. Returns that
// variable's directory, e.g. UserDir("XDG_STATE_HOME").
std::string UserDir(const std::string& variable);

// Runs `odin args...` in cwd with extra environment variables, to completion.
Ran RunOdin(const std::string& cwd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env = {});
// The same, run through a wrapper: `wrapper... odin args...` (setpriv,
// unshare, bwrap).
Ran RunOdinWrapped(const std::vector<std::string>& wrapper, const std::string& cwd,
                   const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

// Starts `odin args...` without waiting; stdout is readable from *stdout_fd.
pid_t StartOdin(const std::string& cwd, const std::vector<std::string>& args, int* stdout_fd,
                const std::map<std::string, std::string>& env = {});
// Reads fd until text has been seen or EOF. Returns what was read.
std::string ReadUntil(int fd, const std::string& text);
// Waits for pid and returns its shell-style exit code.
int Wait(pid_t pid);

// Starts `odin args...` with pipes for stdin and stdout.
pid_t StartOdinPiped(const std::string& cwd, const std::vector<std::string>& args, int* stdin_fd, int* stdout_fd,
                     const std::map<std::string, std::string>& env = {});

// A fake model server (tests/fake_llm_server) running a script, stopped on
// destruction.
class FakeLlm {
 public:
  // script: the JSON script (see fake_llm_server.cc).
  explicit FakeLlm(const std::string& script);
  ~FakeLlm();
  std::string OpenAiUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::string AnthropicUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The log's lines (JSON), one per request or finished answer.
  std::vector<std::string> LogLines() const;

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Waits for another process to bring condition about when it announces it
// no other way (a file it creates, a process that appears or goes): checks
// condition every 10 ms and returns as soon as it holds, or false once
// timeout has passed. The timeout only bounds a failure; no test waits for
// it. Prefer reading the process's output until a line appears (ReadUntil)
// where there is output to read.
bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Pids of live processes whose environment holds NAME=value.
std::vector<pid_t> ProcessesWithEnv(const std::string& name, const std::string& value);
// The processes with that variable that are still there after `within`: a
// killed process group takes a moment to disappear after its parent exits.
std::vector<pid_t> ProcessesLeftWithEnv(const std::string& name, const std::string& value, int within_ms = 3000);
// The processes whose command line (arguments joined by spaces) contains text
// (and also, if given, more).
std::vector<pid_t> ProcessesWithArg(const std::string& text, const std::string& more = "");

// Makes workspace's .odin as Odin does (0700, its marker), for a test that
// puts things in Odin's state before odin runs: one made any other way is
// not Odin's, and odin keeps its state elsewhere.
void MakeOdinStateDir(const std::string& workspace);

// Runs a client script to completion (argv: node SCRIPT ARGS..., perhaps
// behind a wrapper), with this process's environment and env on top, and
// returns what it printed after "RESULT " on a line of its own (its
// findings, as JSON); "" if nothing, with all it printed in *output.
std::string RunClientScript(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                            std::string* output = nullptr);

// A unique marker for this test run (to find leaked processes by).
std::string UniqueMarker();

// text's lines, without their newlines.
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace odin::testing
