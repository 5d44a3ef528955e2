#include "cli/terminal_view.h"

#include <cstdio>
#include <cstdlib>

#include "base/terminal_text.h"
#include "cli/diff_view.h"
#include "cli/markdown_render.h"
#include "llm/retry_policy.h"
#include "workspace/undo.h"
#include "odin/v1/worker.pb.h"
#include "session/session_events.h"
#include "tools/text_file.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

// A change's diff is folded past this many lines (/diff shows it whole).
constexpr int kDiffLines = 40;

std::string Seconds(Duration d) { return std::to_string(ToMillis(d) / 1000) + "s"; }

}  // namespace

std::string ChangesDiff(Ledger* ledger, const std::string& root, const std::vector<std::string>& calls) {
  StatusOr<UndoPlan> plan = PlanUndo(ledger, root, calls);
  if (!plan.ok()) return "";
  std::string diff;
  for (const UndoStep& step : plan->steps) {
    std::string shown = DisplayPath(step.path, root);
    if (!step.undoable) {
      diff += "--- " + shown + "\n+++ " + shown + "\n(no before-image kept: " + step.why + ")\n";
    } else if (LooksBinary(step.content) || LooksBinary(step.current)) {
      diff += "--- " + shown + "\n+++ " + shown + "\n(binary file changed)\n";
    } else {
      diff += UnifiedDiff(step.action == UndoStep::Action::kRemove ? "" : step.content,
                          step.current_exists ? step.current : "", shown)
                  .text;
    }
  }
  return diff;
}

bool UseColor(bool tty) {
  const char* no_color = getenv("NO_COLOR");
  return tty && (no_color == nullptr || *no_color == '\0');
}

TerminalView::TerminalView(Options o, std::function<void(const std::string&)> print)
    : o_(std::move(o)), print_(std::move(print)) {}

std::string TerminalView::Color(const char* code, const std::string& text) const {
  return o_.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

void TerminalView::Line(const std::string& text) {
  FlushText();
  if (in_raw_text_) {
    print_("\n");
    in_raw_text_ = false;
  }
  print_(text + "\n");
}

void TerminalView::OnMessageStart(const std::string&, const std::string& text, Mode mode) {
  message_started_ = RealClock::Get()->Now();
  rendered_ = false;
  std::string shown = VisibleControls(text.size() > 400 ? text.substr(0, 400) + "…" : text);
  Line(Color("2", std::string("[") + ModeName(mode) + "] " + shown));
}

void TerminalView::OnTextDelta(const std::string& text) {
  if (!o_.tty) {
    // A pipe gets the model's words as they came.
    print_(text);
    in_raw_text_ = !text.empty() && text.back() != '\n';
    return;
  }
  text_ += text;
  size_t complete = CompleteBlocksPrefix(text_);
  if (complete == 0) return;
  std::string blocks = text_.substr(0, complete);
  text_.erase(0, complete);
  std::string shown = RenderMarkdown(blocks, {o_.color, o_.width});
  if (shown.empty()) return;
  print_((rendered_ ? "\n" : "") + shown);
  rendered_ = true;
}

void TerminalView::FlushText() {
  if (text_.empty()) return;
  std::string shown = RenderMarkdown(text_, {o_.color, o_.width});
  text_.clear();
  if (shown.empty()) return;
  print_((rendered_ ? "\n" : "") + shown);
  rendered_ = true;
}

void TerminalView::OnToolStart(const std::string& id, const ToolCallRequest& call) {
  Line(Color("36", "⏺ " + VisibleControls(CallLabel(call))));
  running_[id] = {VisibleControls(call.name), RealClock::Get()->Now(), ""};
  rendered_ = false;
}

void TerminalView::OnToolProgress(const v1::ToolProgress& p) {
  auto it = running_.find(p.execution_id());
  if (it == running_.end()) return;
  if (p.has_output()) {
    // The last whole (or growing) line of output, for the status.
    std::string data = p.output().data();
    while (!data.empty() && (data.back() == '\n' || data.back() == '\r')) data.pop_back();
    size_t nl = data.find_last_of("\r\n");
    std::string last = nl == std::string::npos ? data : data.substr(nl + 1);
    // It goes into the prompt line: a command's colours and cursor moves
    // are shown, not obeyed.
    if (!last.empty()) {
      it->second.last_line = VisibleControls(ToDisplayText(std::string(CutAtCharacter(last, 200))));
    }
  } else if (p.has_mcp_progress()) {
    const v1::McpProgress& m = p.mcp_progress();
    char amount[64];
    if (m.total() > 0) {
      snprintf(amount, sizeof amount, "%g/%g", m.progress(), m.total());
    } else {
      snprintf(amount, sizeof amount, "%g", m.progress());
    }
    it->second.last_line =
        std::string(amount) +
        (m.message().empty() ? "" : " " + VisibleControls(ToDisplayText(m.message().substr(0, 200))));
  }
}

void TerminalView::ShowDiff(const std::string& diff) {
  if (diff.empty()) return;
  DiffView v = RenderDiff(diff, o_.color, kDiffLines);
  FlushText();
  std::string indented;
  for (size_t start = 0; start < v.text.size();) {
    size_t end = v.text.find('\n', start);
    if (end == std::string::npos) end = v.text.size();
    indented += "    " + v.text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  print_(indented);
}

void TerminalView::OnToolEnd(const std::string& id, const std::string& tool, const v1::ToolResult& r) {
  running_.erase(id);
  const char* color = r.status() == v1::TOOL_STATUS_OK ? "32" : "31";
  Line("  " + Color(color, "⎿ " + VisibleControls(ToolResultLine(tool, r))));
  // A file tool's change carries its diff; a command's changes are read
  // from the ledger (before-images against the files as they are now).
  if (!r.diff().empty()) {
    ShowDiff(r.diff());
  } else if (r.changes_size() > 0 && ledger_ != nullptr) {
    ShowDiff(ChangesDiff(ledger_, o_.workspace, {id}));
  }
  // The validation gate's verdicts, beside the change.
  auto verdict = [&](const v1::ValidationVerdict& v, const std::string& path) {
    std::string what = v.status() == "clean"    ? "✓ validated clean"
                       : v.status() == "errors" ? "✗ " + std::to_string(v.new_errors()) + " new errors"
                                                : "• validation: " + v.status();
    std::string by = v.validator().empty() ? v.execution_id() : v.validator() + ", " + v.execution_id();
    std::string line = "  " + (path.empty() ? "" : path + ": ") + what + " (" + by + ")";
    Line(Color(v.status() == "clean" ? "32" : v.status() == "errors" ? "31" : "33", line));
    if (v.status() == "errors" && !v.summary().empty()) {
      Line(Color("31", "    " + VisibleControls(v.summary().substr(0, 600))));
    }
  };
  if (r.has_verdict()) verdict(r.verdict(), "");
  for (const v1::ValidationVerdict& v : r.command_verdicts()) verdict(v, DisplayPath(v.path(), o_.workspace));
}

void TerminalView::OnCompaction(const std::string& id, int64_t before, int64_t after, const std::string& how) {
  Line(Color("2", "(context compacted, " + how + ": about " + std::to_string(before) + " -> " + std::to_string(after) +
                      " tokens; " + id + ")"));
  message_ended_ = true;
}

void TerminalView::OnLlmRetry(const LlmRetry& r) {
  FlushText();
  Line(Color("33", "(" + RetryNotice(r.http_status, r.why, r.delay_ms, r.next_attempt, r.max_attempts) + ")"));
}

void TerminalView::OnMessageDone(const MessageOutcome& o) {
  FlushText();
  if (o.status != "done") {
    Line(Color("33", "(" + o.status + (o.error.ok() ? "" : ": " + VisibleControls(o.error.message())) + ")"));
  }
  // The model's words came above; what the ledger says follows.
  if (!o.report_text.empty()) {
    print_((in_raw_text_ ? "\n" : "") + Color("2", VisibleControls(o.report_text)));
    in_raw_text_ = false;
  }
  running_.clear();
  message_started_ = SteadyTime{};
  message_ended_ = true;
  if (on_message_done_) on_message_done_();
}

bool TerminalView::TakeMessageEnded() {
  bool ended = message_ended_;
  message_ended_ = false;
  return ended;
}

std::string TerminalView::RunningLine(SteadyTime now) const {
  const RunningCall* longest = nullptr;
  for (const auto& [id, r] : running_) {
    if (longest == nullptr || r.started < longest->started) longest = &r;
  }
  if (longest == nullptr) return "";
  std::string line = longest->label + " " + Seconds(now - longest->started);
  if (running_.size() > 1) line += " (+" + std::to_string(running_.size() - 1) + ")";
  if (!longest->last_line.empty()) line += ": " + longest->last_line;
  return line;
}

}  // namespace odin
