#pragma once
// One odin in a tmux server of its own, driven as a person would: keys
// typed with send-keys, the screen read with capture-pane.

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {

inline std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// One odin in a tmux server of its own (its socket in the test's directory).
class Tmux {
 public:
  Tmux(const std::string& socket_dir, const std::string& cwd, const std::map<std::string, std::string>& env,
       const std::vector<std::string>& args = {})
      : socket_(socket_dir + "/tmux.sock") {
    std::string command = "exec env";
    for (const auto& [k, v] : env) command += " " + Quote(k + "=" + v);
    command += " " + Quote(BinDir() + "/odin");
    for (const std::string& a : args) command += " " + Quote(a);
    Run({"new-session", "-d", "-x", "150", "-y", "50", "-c", cwd, command});
  }
  ~Tmux() { Run({"kill-server"}); }
  void Keys(std::vector<std::string> keys) {
    keys.insert(keys.begin(), {"send-keys", "-t", "0"});
    Run(keys);
  }
  // Types text literally.
  void Type(const std::string& text) { Run({"send-keys", "-t", "0", "-l", text}); }
  // Types a line literally and presses Enter.
  void TypeLine(const std::string& text) {
    Type(text);
    Keys({"Enter"});
  }
  // Pastes text as a terminal does when the application asked for
  // bracketed paste.
  void Paste(const std::string& text, const std::string& dir) {
    std::string file = dir + "/paste.txt";
    ASSERT_TRUE(WriteFileAtomic(file, text).ok());
    Run({"load-buffer", file});
    Run({"paste-buffer", "-p", "-t", "0"});
  }
  // The screen and its scrollback, as text (with escape sequences: raw).
  std::string Screen(bool raw = false) {
    std::vector<std::string> args = {"capture-pane", "-p", "-t", "0", "-S", "-1000"};
    if (raw) args.push_back("-e");
    return Run(args);
  }
  bool WaitFor(const std::string& text, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return WaitUntil([&] { return Screen().find(text) != std::string::npos; }, timeout);
  }
  bool Alive() { return Run({"has-session", "-t", "0"}, true) == "ok"; }

 private:
  // Through the shell, not RunCommand: that kills the process group it
  // started, and tmux's server must outlive the command that starts it.
  std::string Run(std::vector<std::string> args, bool status = false) {
    std::string line = "tmux -S " + Quote(socket_);
    for (const std::string& a : args) line += " " + Quote(a);
    line += " 2>/dev/null";
    FILE* p = popen(line.c_str(), "r");
    if (p == nullptr) return status ? "no" : "";
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int rc = pclose(p);
    if (status) return rc == 0 ? "ok" : "no";
    return out;
  }
  std::string socket_;
};

}  // namespace odin::testing
