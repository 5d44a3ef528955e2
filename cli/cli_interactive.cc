// `odin` alone: the interactive session. On a terminal the input line is
// libedit's (cli/line_editor.h) and the output the terminal view's
// (cli/terminal_view.h: markdown, diffs, a status in the prompt while the
// agent works); from a pipe, lines are read as they come and printed plain.
// Both share one handling of what the user types (a message, @path, !command,
// a slash command, the answer to an approval).
//
// Long file: the session's whole input side in one place (the two readers,
// the slash commands, the user's own commands), so that every path a line
// can take is visible together.

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/file_util.h"
#include "base/ids.h"
#include "base/money.h"
#include "base/terminal_text.h"
#include "base/version.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "cli/diff_view.h"
#include "cli/interactive_attempts.h"
#include "cli/interactive_history.h"
#include "cli/line_editor.h"
#include "cli/pending_questions.h"
#include "cli/terminal_view.h"
#include "config/approval_store.h"
#include "gates/tool_rules.h"
#include "session/rewind.h"
#include "workspace/undo.h"
#include "workspace/workspace.h"
#include "odin/v1/worker.pb.h"
#include "session/agent_session.h"
#include "session/init_prompt.h"
#include "session/custom_commands.h"
#include "session/resume.h"
#include "session/session_events.h"
#include "tools/exec_command.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// The context as /cost shows it.
std::string ContextLine(const ContextUse& c) {
  int64_t used = c.next_estimate > 0 ? c.next_estimate : c.last_input;
  int percent = c.window > 0 ? static_cast<int>(100 * used / c.window) : 0;
  return "context: about " + std::to_string(used) + " of " + std::to_string(c.window) + " tokens (" +
         std::to_string(percent) + "%)" +
         (c.last_input > 0 ? ", last request " + std::to_string(c.last_input) + " as the provider counted it" : "") +
         ", " + std::to_string(c.compactions) + " compactions";
}

const char kHelp[] =
    "Type a message and press Enter; messages sent while the agent works wait their turn.\n"
    "  A line ending in \\ continues on the next; a pasted block is one message.\n"
    "  @path                attaches a workspace file's content to the message\n"
    "  !command             runs a command yourself: sandboxed, recorded, in the session's mode\n"
    "  /ask, /plan, /edit   switch the mode of the next messages (ask and plan do not change files)\n"
    "  /model [NAME]        show or change the model\n"
    "  /cost                tokens, cost and context so far\n"
    "  /compact [FOCUS]     compact the conversation now (older outputs masked, older turns summarised)\n"
    "  /workflow [NAME]     show or set the next messages' workflow (question, minor-edit, tdd, batch, qa-proof;\n"
    "                       none: the hydrator routes)\n"
    "  /review              the QA verifier on the uncommitted change (git diff HEAD)\n"
    "  /unblock             clear a reviewer's hold on the running message (a drift BLOCK, a REVISE)\n"
    "  /clear               forget the conversation (the ledger keeps everything)\n"
    "  /init                survey the repository and write ODIN.md (asks first if it exists)\n"
    "  /diff                the whole change of your last message\n"
    "  /resume [ID]         list the workspace's sessions, or take one up\n"
    "  /undo [force]        put back what your last message's calls changed (shown first)\n"
    "  /rewind [N]          list your messages, or go back to before message N: its files and the conversation\n"
    "  /isolate             go on in an isolated view: the workspace stays as it is until odin apply SESSION\n"
    "  /attempts N MESSAGE  N agents try the message at once, each in an isolated view; you choose which lands\n"
    "  /hooks               the hooks in force and where each comes from\n"
    "  /mcp                 the MCP servers: state, tools, where each comes from\n"
    "  /doctor              the sandbox, tools, language servers and MCP servers\n"
    "  /jobs [stop ID]      the background commands, or end one\n"
    "  /help                this help\n"
    "  /quit                leave (also Ctrl-D); Esc or Ctrl-C interrupts the running turn\n";

// The slash commands, for completion.
const std::vector<std::string> kCommands = {"/ask",      "/plan",   "/edit",    "/model", "/cost",    "/compact",
                                            "/workflow", "/review", "/unblock", "/clear", "/init",    "/diff",
                                            "/resume",   "/undo",   "/rewind",  "/hooks", "/mcp",     "/doctor",
                                            "/help",     "/quit",   "/exit",    "/jobs",  "/isolate", "/attempts"};

int TerminalWidth() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 20) return w.ws_col;
  return 80;
}

std::string Tokens(int64_t n) {
  char buf[32];
  if (n >= 1000000) {
    snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(n) / 1e6);
  } else if (n >= 1000) {
    snprintf(buf, sizeof buf, "%.1fk", static_cast<double>(n) / 1e3);
  } else {
    snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  }
  return buf;
}

// What may be typed while /attempts is at work: what only shows something,
// and leaving. The rest waits (the session must not change the workspace
// or the conversation the attempts were copied from, nor run while one
// lands).
bool AllowedDuringAttempts(const std::string& line) {
  static const std::set<std::string> kShowing = {
      "", "/help", "/cost", "/hooks", "/mcp", "/doctor", "/jobs", "/quit", "/exit", "/attempts",
  };
  return kShowing.count(line) != 0;
}

// What a line the user typed leads to.
enum class After { kContinue, kQuit, kResume, kIsolate };

// What the interactive loop does next when a session ends: take up another
// (resume), or go on in a copy of this one in a view (isolate).
struct NextSession {
  std::string resume;
  bool isolate = false;
  std::string model;  // /isolate: as /model left it
};

class InteractiveSession {
 public:
  InteractiveSession(const GlobalFlags& g, const AgentFlags& f, Mode mode)
      : g_(g),
        f_(f),
        mode_(mode),
        tty_(isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0),
        view_({isatty(STDOUT_FILENO) != 0, UseColor(isatty(STDOUT_FILENO) != 0), TerminalWidth(), ""},
              [this](const std::string& text) { Print(text); }) {}

  int Run(std::string* buffer_io, NextSession* next);
  // Its session started (Run got past AgentSession::Start).
  bool started() const { return s_ != nullptr; }

 private:
  void Print(const std::string& text) {
    if (editor_) {
      editor_->Print(text);
    } else {
      std::cout << text << std::flush;
    }
  }
  bool Busy() {
    return s_->agent().busy() || s_->agent().compacting() || s_->agent().queued() > 0 || user_commands_ > 0 ||
           attempts_.active();
  }
  std::string Prompt();
  bool Asking() const { return questions_ && !questions_->empty(); }
  // One turn of the loop: the session's fds, signals, stdin (into *buffer,
  // or the editor), the status. Returns false when the session must end
  // (*exit_code set).
  bool Pump(Duration wait, std::string* buffer);
  void OnSignal(int sig);
  After HandleLine(const std::string& line);
  void RunUserCommand(const std::string& command);
  // Esc or Ctrl-C while the user's own !commands run: they stop (the
  // model's turn, if any, goes on). False when none runs.
  bool CancelUserCommands(const char* key);
  // A custom command (.claude/commands): expanded, its !`commands` run,
  // then sent with its allowed-tools.
  void RunCustomCommand(const SlashCommand& command);
  // What Read deny rules cover: @path attaches none of it.
  std::vector<std::string> Unreadable();
  void StartInit();
  void ShowLastDiff();
  int RunWithEditor();
  // Where the loop goes after a /resume or /isolate: 0.
  int Next(After after);
  int RunWithLines(std::string* buffer_io);

  const GlobalFlags& g_;
  AgentFlags f_;
  Mode mode_;
  bool tty_;  // stdin and stdout are terminals: the line editor
  std::unique_ptr<LineEditor> editor_;
  TerminalView view_;
  std::unique_ptr<AgentSession> s_;
  std::unique_ptr<PendingQuestions> questions_;  // approvals and MCP forms, asked in turn
  bool input_open_ = true;
  bool init_confirm_ = false;  // "ODIN.md exists: update it?" waits for its answer
  bool continuing_ = false;    // a line ended in a backslash
  SteadyTime last_interrupt_{};
  SteadyTime last_status_{};
  std::optional<int> exit_code_;
  NextSession* next_ = nullptr;
  std::string resume_id_;
  int spinner_ = 0;
  int user_commands_ = 0;                   // !commands running
  std::set<std::string> user_command_ids_;  // their execution ids, for Esc and Ctrl-C
  bool prompt_due_ = true;                  // pipe mode: show "mode> " when a tty reads
  // /attempts: last, so that it ends first, while the view still prints.
  InteractiveAttempts attempts_{[this](const std::string& line) { view_.Line(line); }};
};

std::string InteractiveSession::Prompt() {
  // Escape sequences between \1 marks take no room on the line (libedit's
  // EL_PROMPT_ESC).
  auto esc = [this](const char* code, const std::string& text) {
    return view_.color() ? "\1" + std::string("\033[") + code + "m\1" + text + "\1\033[0m\1" : text;
  };
  if (Asking()) return esc("1;33", questions_->Prompt());
  if (init_confirm_) return esc("1;33", "update ODIN.md? [y/N] ");
  if (attempts_.choosing()) return esc("1;33", attempts_.Prompt());
  if (continuing_) return "… ";
  size_t jobs = s_->runtime().coordinator().background().Running().size();
  std::string jobs_text = jobs == 0 ? "" : std::to_string(jobs) + (jobs == 1 ? " job" : " jobs");
  if (!Busy()) return esc("1", std::string(ModeName(mode_)) + (jobs > 0 ? " (" + jobs_text + ")" : "") + "> ");
  static const char* kSpinner[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
  SteadyTime now = RealClock::Get()->Now();
  const MessageOutcome& t = s_->agent().totals();
  ContextUse c = s_->agent().context();
  int64_t used = c.next_estimate > 0 ? c.next_estimate : c.last_input;
  std::string cost = t.unpriced_calls > 0 ? "price unknown" : CostText(t.cost_microusd, t.llm_calls, 0, 3);
  std::string status = std::string(kSpinner[spinner_ % 10]) + " " + ModeName(mode_) + " · " + s_->agent().model();
  if (c.window > 0) status += " · ctx " + std::to_string(100 * used / c.window) + "%";
  status += " · " + Tokens(t.usage.input_tokens + t.usage.output_tokens) + " tok";
  if (t.usage.cache_read_tokens > 0 && t.usage.input_tokens > 0) {
    status += " (" + std::to_string(100 * t.usage.cache_read_tokens / t.usage.input_tokens) + "% cached)";
  }
  status += " · " + cost;
  if (view_.message_started() != SteadyTime{}) {
    status += " · " + std::to_string(ToMillis(now - view_.message_started()) / 1000) + "s";
  }
  if (s_->runtime().coordinator().commands_network()) status += " · net";
  std::string running = view_.RunningLine(now);
  if (!running.empty()) status += " · " + running;
  if (s_->agent().queued() > 0) status += " · " + std::to_string(s_->agent().queued()) + " queued";
  if (attempts_.active()) status += " · " + attempts_.Status();
  if (jobs > 0) status += " · " + jobs_text;
  // One terminal line, whatever runs.
  size_t max = static_cast<size_t>(std::max(20, TerminalWidth() - 24));
  std::string_view cut = CutAtCharacter(status, max * 3);
  std::string shown(cut);
  size_t columns = 0, bytes = 0;
  for (; bytes < shown.size() && columns < max; ++bytes) {
    if ((static_cast<unsigned char>(shown[bytes]) & 0xC0) != 0x80) ++columns;
  }
  while (bytes < shown.size() && (static_cast<unsigned char>(shown[bytes]) & 0xC0) == 0x80) ++bytes;
  if (bytes < shown.size()) shown = shown.substr(0, bytes) + "…";
  // No escape sequences: libedit redraws a changed prompt in part, and
  // drops what is between its markers (a literal "[1m[0m" after the time).
  return shown + " › ";
}

void InteractiveSession::OnSignal(int sig) {
  if (sig != SIGINT) {
    exit_code_ = 128 + sig;
    return;
  }
  SteadyTime now = RealClock::Get()->Now();
  if (CancelUserCommands("^C")) {
    // The user's own command was what ran.
  } else if (s_->agent().busy() || s_->agent().compacting()) {
    view_.Line(view_.Color("33", "^C: cancelling the current turn"));
    if (questions_) questions_->Clear();  // their calls end as cancelled
    s_->agent().CancelCurrent();
  } else if (attempts_.Cancel()) {
    // The attempts were what ran.
  } else if (now - last_interrupt_ < seconds(2)) {
    view_.Line("");
    exit_code_ = 0;
  } else {
    view_.Line("(Ctrl-C again, Ctrl-D or /quit to leave)");
    prompt_due_ = true;
  }
  last_interrupt_ = now;
}

bool InteractiveSession::Pump(Duration wait, std::string* buffer) {
  std::vector<PollFd> extra = {{SignalPipeFd()}, {attempts_.wake_fd()}};
  if (input_open_) extra.push_back({STDIN_FILENO});
  Status st = s_->Poll(wait, &extra);
  if (!st.ok()) {
    view_.Line("odin: " + st.message());
    exit_code_ = kError;
    return false;
  }
  for (int sig : DrainSignals()) OnSignal(sig);
  if (extra[1].readable) {
    // What landed of the attempts, the model hears with the next message.
    if (std::string note = attempts_.Pump(); !note.empty()) s_->agent().AddNote(note);
    prompt_due_ = true;
    if (editor_) editor_->Redraw();
  }
  if (exit_code_) return false;
  SteadyTime now = RealClock::Get()->Now();
  if (editor_ && (view_.TakeMessageEnded() || (Busy() && now - last_status_ >= milliseconds(500)))) {
    ++spinner_;
    last_status_ = now;
    editor_->Redraw();
  }
  if (!input_open_ || !extra.back().readable) return true;
  char chunk[4096];
  ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
  if (n > 0) {
    if (editor_) {
      editor_->Feed(chunk, static_cast<size_t>(n));
    } else {
      buffer->append(chunk, static_cast<size_t>(n));
    }
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    // Ctrl-D at the terminal's level, the end of piped input, or an input
    // that fails: finish the queue, then leave.
    input_open_ = false;
    if (editor_) editor_->FeedEof();
  }
  return true;
}

bool InteractiveSession::CancelUserCommands(const char* key) {
  if (user_command_ids_.empty()) return false;
  view_.Line(view_.Color("33", std::string(key) + ": stopping your command"));
  for (const std::string& id : std::set<std::string>(user_command_ids_)) s_->runtime().coordinator().Cancel(id);
  return true;
}

void InteractiveSession::RunUserCommand(const std::string& command) {
  // The user's own command: the same gates, sandbox and ledger as the
  // model's, in the session's mode, recorded under the agent "user".
  ToolCall call;
  call.tool = kExecuteCommandTool;
  call.arguments_json =
      nlohmann::json({{"command", command}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  call.agent_id = "user";
  call.mode = CallModeOf(mode_);
  call.timeout = seconds(600);
  call.execution_id = NewId("ex");
  user_command_ids_.insert(call.execution_id);
  view_.Line(view_.Color("36", "! " + VisibleControls(command)));
  auto partial = std::make_shared<std::string>();
  ++user_commands_;
  CallHandlers handlers;
  handlers.on_progress = [this, partial](const v1::ToolProgress& p) {
    if (!p.has_output()) return;
    *partial += p.output().data();
    size_t nl = partial->rfind('\n');
    if (nl == std::string::npos) return;
    Print(VisibleControls(ToDisplayText(partial->substr(0, nl + 1))));
    partial->erase(0, nl + 1);
  };
  std::string shown = command;
  handlers.on_done = [this, partial, shown](const v1::ToolResult& r, const Status&) {
    --user_commands_;
    user_command_ids_.erase(r.execution_id());
    if (!partial->empty()) Print(VisibleControls(ToDisplayText(*partial)) + "\n");
    const char* color = r.status() == v1::TOOL_STATUS_OK ? "32" : "31";
    view_.Line("  " + view_.Color(color, "⎿ " + VisibleControls(ToolResultLine(kExecuteCommandTool, r)) + " (" +
                                             r.execution_id() + ")"));
    // The model hears of it with the next message, as the user's own.
    std::string output = ToDisplayText(r.output_head().substr(0, 2000));
    s_->agent().AddNote("The user ran a command themselves (" + r.execution_id() + "): `" + shown + "`, " +
                        ToolResultLine(kExecuteCommandTool, r) + ". Its output began:\n" + output);
    if (editor_) editor_->Redraw();
  };
  s_->runtime().coordinator().Submit(std::move(call), std::move(handlers));
}

std::vector<std::string> InteractiveSession::Unreadable() {
  const char* home = getenv("HOME");
  return UnreadablePatterns(s_->runtime().config().permissions, s_->runtime().workspace().root,
                            home != nullptr ? home : "");
}

void InteractiveSession::RunCustomCommand(const SlashCommand& command) {
  view_.Line(view_.Color("2", "(" + VisibleControls(command.origin) + ")"));
  StatusOr<ExpandedCommand> expanded = ExpandSlashCommand(*s_, command, mode_);
  if (!expanded.ok()) return view_.Line(view_.Color("31", VisibleControls(expanded.status().message())));
  for (const std::string& n : expanded->notes) view_.Line(view_.Color("2", "(" + n + ")"));
  s_->agent().Send(expanded->text, mode_, /*slash_command=*/false, expanded->tool_list);
}

void InteractiveSession::StartInit() {
  view_.Line("surveying the repository to write ODIN.md (InitTool is offered for this message only)");
  s_->runtime().coordinator().set_init_active(true);
  s_->agent().Send(InitPrompt(s_->runtime().workspace().root, s_->runtime().config().checks), Mode::kEdit,
                   /*slash_command=*/true);
}

void InteractiveSession::ShowLastDiff() {
  std::string last = LastUserMessage(*s_);
  if (last.empty()) return view_.Line("no change yet: no message");
  Ledger& ledger = s_->runtime().ledger();
  StatusOr<std::vector<std::string>> calls = CallsOfMessage(&ledger, last);
  std::string diff = calls.ok() ? ChangesDiff(&ledger, s_->runtime().workspace().root, *calls) : "";
  if (diff.empty()) return view_.Line("your last message changed no file");
  view_.Line(RenderDiff(diff, UseColor(isatty(STDOUT_FILENO) != 0), 0).text);
}

After InteractiveSession::HandleLine(const std::string& raw) {
  std::string line = raw;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  prompt_due_ = true;
  Coordinator& co = s_->runtime().coordinator();
  if (Asking()) {
    questions_->Answer(line);
    return After::kContinue;
  }
  if (attempts_.choosing()) {
    attempts_.Answer(line);
    return After::kContinue;
  }
  if (init_confirm_) {
    init_confirm_ = false;
    if (line == "y" || line == "yes") {
      StartInit();
    } else {
      view_.Line("ODIN.md left as it is");
    }
    return After::kContinue;
  }
  if (attempts_.active() && !AllowedDuringAttempts(line)) {
    view_.Line("(the attempts are at work: that waits until they end; Esc stops them)");
    return After::kContinue;
  }
  if (line.empty()) return After::kContinue;
  if (!IsValidUtf8(line)) {
    view_.Line("(that line is not valid UTF-8; not sent)");
    return After::kContinue;
  }
  if (line[0] == '!') {
    std::string command = line.substr(1);
    while (!command.empty() && command[0] == ' ') command.erase(0, 1);
    if (command.empty()) {
      view_.Line("!command runs a command yourself, e.g. !ls");
    } else {
      RunUserCommand(command);
    }
    return After::kContinue;
  }
  if (line[0] != '/') {
    std::vector<std::string> notes;
    std::vector<ImageData> images;
    std::string message = AttachFiles(line, s_->runtime().workspace().root, Unreadable(), &notes, &images);
    for (const std::string& n : notes) view_.Line(view_.Color("2", "(" + VisibleControls(n) + ")"));
    s_->agent().Send(message, mode_, /*slash_command=*/false, std::nullopt, std::move(images));
    if (s_->agent().queued() > 0) {
      view_.Line(view_.Color("2", "(queued: " + std::to_string(s_->agent().queued()) + " waiting)"));
    }
    return After::kContinue;
  }
  std::string cmd = line.substr(0, line.find(' '));
  std::string arg = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
  Mode m;
  if (ParseMode(cmd.substr(1), &m)) {
    mode_ = m;
    view_.Line(std::string("mode: ") + ModeName(mode_));
  } else if (cmd == "/model") {
    if (!arg.empty()) s_->agent().set_model(arg);
    view_.Line("model: " + s_->agent().model());
  } else if (cmd == "/cost") {
    const MessageOutcome& t = s_->agent().totals();
    view_.Line(std::to_string(t.llm_calls) + " model calls, " + std::to_string(t.usage.input_tokens) + " tokens in" +
               CacheUseText(t.usage.cache_read_tokens, t.usage.cache_write_tokens) + ", " +
               std::to_string(t.usage.output_tokens) + " tokens out, " +
               CostText(t.cost_microusd, t.llm_calls, t.unpriced_calls) + " (prices from odinconfig.json llm.prices)");
    view_.Line(ContextLine(s_->agent().context()));
  } else if (cmd == "/workflow") {
    std::optional<Workflow> w = ParseWorkflow(arg == "none" ? "" : arg);
    if (!arg.empty() && !w) {
      view_.Line(std::string("unknown workflow '") + arg + "': one of " + WorkflowNames() + ", or none");
    } else {
      if (!arg.empty()) s_->agent().set_workflow(*w);
      Workflow now = s_->agent().workflow();
      view_.Line(std::string("workflow: ") +
                 (now == Workflow::kNone ? "none (the hydrator routes, when on)" : WorkflowName(now)));
    }
  } else if (cmd == "/unblock") {
    std::string rule = s_->agent().ClearReviewHold();
    view_.Line(rule.empty() ? "(no reviewer holds the running message)" : "cleared the " + rule + " hold");
  } else if (cmd == "/review") {
    s_->agent().SendReview();
    view_.Line(view_.Color("2", "(the QA verifier reviews the uncommitted change)"));
  } else if (cmd == "/compact") {
    view_.Line(s_->agent().CompactNow(arg) ? "compacting the conversation..."
                                           : "(busy: /compact waits until the agent is idle)");
  } else if (cmd == "/init") {
    if (Busy()) {
      view_.Line("(busy: /init waits until the agent is idle)");
    } else if (ExistsBelow(s_->runtime().workspace().root, "ODIN.md")) {
      view_.Line("ODIN.md exists: the model would read it and update it, keeping what still holds.");
      view_.Line(view_.Color("1", "  Update it? [y] yes, [n] no"));
      init_confirm_ = true;
    } else {
      StartInit();
    }
  } else if (cmd == "/attempts") {
    if (s_->agent().busy() || s_->agent().compacting() || s_->agent().queued() > 0 || user_commands_ > 0) {
      view_.Line("(busy: /attempts waits until the agent is idle)");
    } else if (mode_ != Mode::kEdit) {
      view_.Line("attempts change files: /edit first");
    } else {
      attempts_.Start(g_, f_, *s_, arg);
    }
  } else if (cmd == "/isolate") {
    if (!s_->runtime().workspace().view.empty()) {
      view_.Line("this session works in an isolated view already: odin apply " + co.session_id() +
                 " lands it once you leave");
    } else if (Busy()) {
      view_.Line("(busy: /isolate waits until the agent and the attempts are idle)");
    } else if (!co.background().Running().empty()) {
      view_.Line("background commands run in the workspace: /jobs stop them first");
    } else {
      return After::kIsolate;
    }
  } else if (cmd == "/diff") {
    ShowLastDiff();
  } else if (cmd == "/undo") {
    UndoLastMessage(*s_, arg == "force", view_);
  } else if (cmd == "/rewind") {
    RewindToMessage(*s_, arg, view_);
  } else if (cmd == "/jobs") {
    if (arg.starts_with("stop ")) co.StopBackgroundCommand(arg.substr(5), "/jobs stop");
    view_.Line(VisibleControls(DescribeBackgroundJobs(co.background(), RealClock::Get()->WallMillis())));
  } else if (cmd == "/hooks") {
    view_.Line(VisibleControls(DescribeHooks(co.hooks())));
  } else if (cmd == "/mcp") {
    // Servers' names and errors may carry anything: shown, not obeyed.
    view_.Line(VisibleControls(DescribeMcpServers(co.mcp())) + "(* not annotated readOnlyHint: edit mode only)");
  } else if (cmd == "/doctor") {
    std::cout << std::flush;
    RunDoctor(g_, false);
    fflush(stdout);
  } else if (cmd == "/resume") {
    if (arg.empty()) {
      RunSessions(g_, false);
      view_.Line("(/resume ID takes one of them up)");
    } else if (Busy()) {
      view_.Line("(busy: /resume waits until the agent is idle)");
    } else {
      StatusOr<std::string> id = PickResumableSession(s_->runtime().workspace().ledger_path, arg, false);
      if (!id.ok()) {
        view_.Line(id.status().message());
      } else {
        resume_id_ = *id;
        return After::kResume;
      }
    }
  } else if (cmd == "/clear") {
    view_.Line(s_->agent().ClearHistory() ? "conversation cleared" : "(busy: cancel the turn first)");
  } else if (cmd == "/help") {
    view_.Line(kHelp + DescribeSlashCommands(*s_));
  } else if (cmd == "/quit" || cmd == "/exit") {
    return After::kQuit;
  } else if (std::optional<SlashCommand> command = FindSlashCommand(*s_, line)) {
    RunCustomCommand(*command);
  } else {
    view_.Line("unknown command " + VisibleControls(cmd) + " (/help lists them)");
  }
  return After::kContinue;
}

int InteractiveSession::RunWithEditor() {
  LineEditor::Options eo;
  eo.history_path = HistoryPath(s_->runtime().workspace().root);
  eo.workspace = s_->runtime().workspace().root;
  eo.commands = kCommands;
  for (const ClaudeDef& d : s_->defs().commands) eo.commands.push_back("/" + d.name);
  eo.prompt = [this] { return Prompt(); };
  std::string unused;
  eo.pump = [this, &unused](Duration wait) {
    if (!Pump(wait, &unused)) editor_->Leave();
  };
  eo.on_escape = [this] {
    if (CancelUserCommands("Esc")) return;
    if (!s_->agent().busy() && !s_->agent().compacting()) {
      attempts_.Cancel();
      return;
    }
    view_.Line(view_.Color("33", "Esc: cancelling the current turn"));
    if (questions_) questions_->Clear();
    s_->agent().CancelCurrent();
  };
  editor_ = std::make_unique<LineEditor>(std::move(eo));
  std::string message;
  std::string line;
  while (!exit_code_ && editor_->ReadLine(&line)) {
    if (!Asking() && !init_confirm_ && !attempts_.choosing() && !line.empty() && line.back() == '\\') {
      // A trailing backslash: the message goes on.
      message += line.substr(0, line.size() - 1) + "\n";
      continuing_ = true;
      continue;
    }
    bool answer = Asking() || init_confirm_ || attempts_.choosing();
    message += line;
    continuing_ = false;
    std::string whole = std::move(message);
    message.clear();
    if (!answer && !whole.empty()) editor_->Remember(whole);
    After after = HandleLine(whole);
    if (after == After::kQuit) return 0;
    if (after == After::kResume || after == After::kIsolate) return Next(after);
  }
  if (exit_code_) return *exit_code_;
  // Ctrl-D: what is queued finishes; what waits for an answer is denied.
  editor_.reset();
  input_open_ = false;
  std::string unused_buffer;
  while (!exit_code_) {
    if (questions_) questions_->Refuse();
    if (attempts_.choosing()) attempts_.Answer("n");  // nobody to choose: none lands
    if (!Busy()) break;
    Pump(milliseconds(500), &unused_buffer);
  }
  return exit_code_.value_or(0);
}

int InteractiveSession::RunWithLines(std::string* buffer_io) {
  bool tty_in = isatty(STDIN_FILENO) != 0;
  std::string buffer = std::move(*buffer_io);
  for (;;) {
    if (prompt_due_ && tty_in && !s_->agent().busy()) {
      std::cout << view_.Color("1", std::string(ModeName(mode_)) + "> ") << std::flush;
      prompt_due_ = false;
    }
    if (!input_open_ && !Busy()) break;
    if (!Pump(milliseconds(500), &buffer)) return exit_code_.value_or(kError);
    if (view_.TakeMessageEnded()) prompt_due_ = true;
    if (!input_open_ && buffer.empty()) {
      // Nobody is left to answer: what waits for approval is denied, and
      // no attempt lands.
      if (questions_) questions_->Refuse();
      if (attempts_.choosing()) attempts_.Answer("n");
    }
    size_t nl;
    // Piped lines after /attempts wait for its question (or its end): a
    // script's next line is its answer, not a message to the session.
    auto held = [this] { return attempts_.active() && !attempts_.choosing(); };
    while (!held() && ((nl = buffer.find('\n')) != std::string::npos || (!input_open_ && !buffer.empty()))) {
      std::string line = nl == std::string::npos ? buffer : buffer.substr(0, nl);
      buffer.erase(0, nl == std::string::npos ? buffer.size() : nl + 1);
      After after = HandleLine(line);
      if (after == After::kQuit) return 0;
      if (after == After::kResume || after == After::kIsolate) {
        *buffer_io = std::move(buffer);
        return Next(after);
      }
    }
  }
  return 0;
}

int InteractiveSession::Next(After after) {
  if (after == After::kResume) {
    next_->resume = resume_id_;
    return 0;
  }
  // /isolate: this conversation goes on in a copy of the session, in a view.
  next_->isolate = true;
  next_->model = s_->agent().model();
  if (!LastUserMessage(*s_).empty()) next_->resume = s_->runtime().coordinator().session_id();
  return 0;
}

int InteractiveSession::Run(std::string* buffer_io, NextSession* next) {
  next_ = next;
  // The workers of an interactive session serve messages of every mode; the
  // mode gate keeps ask and plan from writing.
  AgentSessionFlags flags = SessionFlags(g_, f_, "interactive", "edit", f_.approval.empty() ? "prompt" : f_.approval);
  // Above the line being edited, never over it.
  flags.notice = [this](const std::string& line) { view_.Line(view_.Color("2", VisibleControls(line))); };
  StatusOr<std::unique_ptr<AgentSession>> session = AgentSession::Start(flags, &view_);
  if (!session.ok()) {
    std::cerr << "odin: " << session.status().message() << "\n";
    return kError;
  }
  s_ = std::move(*session);
  view_.set_ledger(&s_->runtime().ledger());
  view_.set_workspace(s_->runtime().workspace().root);
  // /init's InitTool is offered for its message only, whatever comes next.
  view_.set_on_message_done([this] { s_->runtime().coordinator().set_init_active(false); });
  if (Status sp = InstallSignalPipe(); !sp.ok()) {
    std::cerr << "odin: " << sp.message() << "\n";
    return kError;
  }
  Coordinator& co = s_->runtime().coordinator();
  questions_ = std::make_unique<PendingQuestions>(&view_, &co, [this] {
    if (editor_) editor_->Redraw();
  });
  co.on_approval_request = [this, &co](const ApprovalRequest& a) {
    if (!input_open_) return (void)co.AnswerApproval(a.execution_id, ApprovalAnswer::kDeny);  // nobody to answer
    questions_->AddApproval(a);
  };
  co.on_mcp_question = [this, &co](const McpQuestionRequest& q) {
    if (!input_open_) return (void)co.AnswerMcpQuestion(q.execution_id, q.question_id, "cancel", "");
    questions_->AddMcpQuestion(q);
  };
  // Non-blocking reads of a stdin the shell shares: put its flags back on the
  // way out, however we leave.
  int stdin_flags = fcntl(STDIN_FILENO, F_GETFL);
  fcntl(STDIN_FILENO, F_SETFL, stdin_flags | O_NONBLOCK);
  struct RestoreStdin {
    int flags;
    ~RestoreStdin() {
      if (flags >= 0) fcntl(STDIN_FILENO, F_SETFL, flags);
    }
  } restore{stdin_flags};
  const LlmSettings& llm = s_->llm();
  view_.Line("odin " ODIN_VERSION " · " + llm.endpoint.provider + " " + llm.model + " · " +
             s_->runtime().workspace().root + " · session " + s_->runtime().coordinator().session_id() +
             (s_->runtime().coordinator().commands_network() ? " · commands have network" : ""));
  bool isolated = !s_->runtime().workspace().view.empty();
  if (isolated) {
    view_.Line(
        "isolated: this session works in a view of the workspace; the workspace stays as it is until odin "
        "apply " +
        s_->runtime().coordinator().session_id());
  }
  if (llm.endpoint.provider == "demo") view_.Line("(the demo model gives scripted answers; it is not an LLM)");
  view_.Line("Type /help for commands.");
  int rc = tty_ ? RunWithEditor() : RunWithLines(buffer_io);
  if (isolated && !next_->isolate) {
    view_.Line("isolated session " + s_->runtime().coordinator().session_id() + ": odin diff, apply or discard it");
  }
  editor_.reset();
  return rc;
}

}  // namespace

int RunInteractive(const GlobalFlags& g, const AgentFlags& f_in) {
  AgentFlags f = f_in;
  Mode mode;
  if (!ParseMode(f.mode, &mode)) {
    std::cerr << "odin: unknown mode '" << f.mode << "' (ask, plan or edit)\n";
    return kUsageError;
  }
  // / and ~ are taken only when -C names them, or when you say so here.
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (std::string refused = ws.ok() ? TooBroadRefusal(g, *ws) : ""; !refused.empty()) {
    std::cerr << "odin: " << refused << "\n";
    if (!isatty(STDIN_FILENO)) return kUsageError;
    std::cerr << "Work here anyway (Odin keeps its state in " << ws->state_dir << ")? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer) || (answer != "y" && answer != "Y" && answer != "yes")) return kUsageError;
  }
  std::string buffer;
  std::optional<std::string> isolated_from;  // the session /isolate left
  for (;;) {
    NextSession next;
    int rc;
    bool started;
    {
      InteractiveSession session(g, f, mode);
      rc = session.Run(&buffer, &next);
      started = session.started();
    }
    if (!started && isolated_from) {
      // The view could not be made (too large, no space): back where it was.
      std::cerr << "odin: /isolate did not start; going on in the workspace\n";
      f.resume = *isolated_from;
      f.fork_session = f.isolated = false;
      isolated_from.reset();
      continue;
    }
    if (next.resume.empty() && !next.isolate) return rc;
    isolated_from.reset();
    if (next.isolate) {
      isolated_from = next.resume;
      if (!next.model.empty()) f.llm.model = next.model;
    }
    f.resume = next.resume;
    f.continue_last = false;
    f.fork_session = next.isolate && !next.resume.empty();
    f.isolated = next.isolate;
  }
}

}  // namespace odin
