#pragma once
// What the interactive session shows of the agent at work: the model's
// markdown rendered as it streams (whole blocks at a time, cli/
// markdown_render.h), each tool call and its end, each change as a coloured
// diff folded past 40 lines with the validation verdicts beside it, and the
// status the prompt line carries while the agent works (mode, model,
// context, tokens, cost, elapsed time, the running command's last line).
//
// On a pipe, or with NO_COLOR set, nothing is coloured; on a pipe the
// model's text is printed as it came (markdown reads well as text).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "planner/agent.h"

namespace odin {

class Ledger;

// Whether output may be coloured: a terminal, and NO_COLOR not set (or
// empty).
bool UseColor(bool tty);

class TerminalView final : public AgentObserver {
 public:
  struct Options {
    bool tty = false;    // stdout is a terminal: render markdown, show a status
    bool color = false;  // SGR colours
    int width = 80;
    std::string workspace;
  };
  // print receives whole lines.
  TerminalView(Options o, std::function<void(const std::string&)> print);

  // The ledger the diffs of commands' changes are read from (set once the
  // session has started).
  void set_ledger(Ledger* ledger) { ledger_ = ledger; }
  void set_workspace(std::string root) { o_.workspace = std::move(root); }
  // Called when a message ends, before the next queued one starts.
  void set_on_message_done(std::function<void()> f) { on_message_done_ = std::move(f); }
  bool color() const { return o_.color; }

  std::string Color(const char* code, const std::string& text) const;
  void Line(const std::string& text);

  void OnMessageStart(const std::string& id, const std::string& text, Mode mode) override;
  void OnTextDelta(const std::string& text) override;
  void OnToolStart(const std::string& id, const ToolCallRequest& call) override;
  void OnToolProgress(const v1::ToolProgress& p) override;
  void OnToolEnd(const std::string& id, const std::string& tool, const v1::ToolResult& r) override;
  void OnCompaction(const std::string& id, int64_t before, int64_t after, const std::string& how) override;
  void OnLlmRetry(const LlmRetry& retry) override;
  void OnMessageDone(const MessageOutcome& o) override;

  // The model's text not shown yet, rendered now.
  void FlushText();
  // One line on what runs: the running calls (the longest-running first),
  // each with its elapsed time and last output line; "" when none.
  std::string RunningLine(SteadyTime now) const;
  // When the current message started (SteadyTime{} when none runs).
  SteadyTime message_started() const { return message_started_; }
  // Set when a message ended since the last call (the prompt is due).
  bool TakeMessageEnded();

 private:
  struct RunningCall {
    std::string label;
    SteadyTime started;
    std::string last_line;
  };
  void ShowDiff(const std::string& diff);

  Options o_;
  std::function<void(const std::string&)> print_;
  Ledger* ledger_ = nullptr;
  std::string text_;          // the model's markdown not rendered yet
  bool rendered_ = false;     // a block was rendered this turn (blank line before the next)
  bool in_raw_text_ = false;  // pipe: a text line is open
  std::map<std::string, RunningCall> running_;
  SteadyTime message_started_{};
  bool message_ended_ = false;
  std::function<void()> on_message_done_;
};

// The whole change of a set of calls: each path's before-image against the
// file as it is now, as one unified diff.
std::string ChangesDiff(Ledger* ledger, const std::string& root, const std::vector<std::string>& calls);

}  // namespace odin
