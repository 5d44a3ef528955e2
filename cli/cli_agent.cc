// The agent's front ends: `odin -p PROMPT` (headless, text, json or
// stream-json output) and `odin` alone (an interactive terminal session).

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>

#include "base/clock.h"
#include "base/canonical_json.h"
#include "base/unique_fd.h"
#include "base/terminal_text.h"
#include "base/version.h"
#include "coordinator/undo.h"
#include "session/resume.h"
#include "session/agent_session.h"
#include "cli/cli.h"
#include "session/session_events.h"
#include "odin/v1/worker.pb.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig) { (void)!write(g_signal_pipe[1], &sig, sizeof sig); }

// Routes SIGINT/SIGTERM/SIGHUP into a pipe the loop polls.
Status InstallSignalPipe() {
  // Both ends stay open for the rest of the process: the handler may run any time.
  if (g_signal_pipe[0] >= 0) return Status::OK();
  ASSIGN_OR_RETURN(Pipe p, MakePipe(O_CLOEXEC | O_NONBLOCK));
  g_signal_pipe[0] = p.read_end.release();
  g_signal_pipe[1] = p.write_end.release();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  return Status::OK();
}

// The signals that arrived since the last call.
std::vector<int> DrainSignals() {
  std::vector<int> sigs;
  int sig;
  while (read(g_signal_pipe[0], &sig, sizeof sig) == static_cast<ssize_t>(sizeof sig)) sigs.push_back(sig);
  return sigs;
}

// ---- interactive ------------------------------------------------------------

class Terminal final : public AgentObserver {
 public:
  Terminal() : tty_(isatty(STDOUT_FILENO) != 0) {}
  std::string Color(const char* code, const std::string& text) const {
    return tty_ ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
  void Line(const std::string& text) {
    EndText();
    std::cout << text << "\n" << std::flush;
  }
  void OnMessageStart(const std::string&, const std::string& text, Mode mode) override {
    Line(Color("2", std::string("[") + ModeName(mode) + "] ") + text);
  }
  void OnTextDelta(const std::string& text) override {
    std::cout << text << std::flush;
    in_text_ = !text.empty() && text.back() != '\n';
  }
  void OnToolStart(const std::string& id, const ToolCallRequest& call) override {
    Line(Color("36", "⏺ " + CallLabel(call)));
    started_[id] = {call.name, RealClock::Get()->Now()};
  }
  void OnToolProgress(const v1::ToolProgress& p) override {
    // An MCP server's progress notifications, at most one line a second.
    if (!p.has_mcp_progress()) return;
    auto it = started_.find(p.execution_id());
    SteadyTime now = RealClock::Get()->Now();
    if (it == started_.end() || now - last_progress_ < seconds(1)) return;
    const v1::McpProgress& m = p.mcp_progress();
    char amount[64];
    if (m.total() > 0) {
      snprintf(amount, sizeof amount, "%g/%g", m.progress(), m.total());
    } else {
      snprintf(amount, sizeof amount, "%g", m.progress());
    }
    Line(Color("2", "  … " + it->second.first + " " + amount +
                        (m.message().empty() ? "" : " " + ToDisplayText(m.message().substr(0, 200)))));
    last_progress_ = now;
  }
  void OnToolEnd(const std::string& id, const std::string& tool, const v1::ToolResult& r) override {
    started_.erase(id);
    const char* color = r.status() == v1::TOOL_STATUS_OK ? "32" : "31";
    Line("  " + Color(color, "⎿ " + ToolResultLine(tool, r)));
  }
  void OnCompaction(const std::string& id, int64_t before, int64_t after, const std::string& how) override {
    Line(Color("2", "(context compacted, " + how + ": about " + std::to_string(before) + " -> " +
                        std::to_string(after) + " tokens; " + id + ")"));
    prompt_due_ = true;
  }
  void OnMessageDone(const MessageOutcome& o) override {
    EndText();
    if (o.status != "done") {
      Line(Color("33", "(" + o.status + (o.error.ok() ? "" : ": " + o.error.message()) + ")"));
    }
    // The model's words streamed above; what the ledger says follows.
    if (!o.report_text.empty()) std::cout << Color("2", o.report_text) << std::flush;
    prompt_due_ = true;
  }
  // A progress line for calls that run long, at most once a second each.
  void Progress() {
    SteadyTime now = RealClock::Get()->Now();
    for (auto& [id, t] : started_) {
      Duration ran = now - t.second;
      if (ran > seconds(2) && now - last_progress_ > seconds(1)) {
        Line(Color("2", "  … " + t.first + " running " + std::to_string(ToMillis(ran) / 1000) +
                            "s (Ctrl-C cancels the turn)"));
        last_progress_ = now;
      }
    }
  }
  void EndText() {
    if (in_text_) std::cout << "\n";
    in_text_ = false;
  }
  bool prompt_due_ = true;

 private:
  bool tty_;
  bool in_text_ = false;
  std::map<std::string, std::pair<std::string, SteadyTime>> started_;
  SteadyTime last_progress_{};
};

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
    "  /ask, /plan, /edit   switch the mode of the next messages (ask and plan do not change files)\n"
    "  /model [NAME]        show or change the model\n"
    "  /cost                tokens, cost and context so far\n"
    "  /compact [FOCUS]     compact the conversation now (older outputs masked, older turns summarised)\n"
    "  /clear               forget the conversation (the ledger keeps everything)\n"
    "  /resume [ID]         list the workspace's sessions, or take one up\n"
    "  /undo [force]        put back what your last message's calls changed (shown first)\n"
    "  /hooks               the hooks in force and where each comes from\n"
    "  /mcp                 the MCP servers: state, tools, where each comes from\n"
    "  /help                this help\n"
    "  /quit                leave (also Ctrl-D); Ctrl-C cancels the running turn\n";

// /undo: what the calls of the session's last message changed, shown, then
// put back (odin undo --message); the model hears of it with the next
// message.
template <typename Term>
void UndoLastMessage(AgentSession& s, bool force, Term& term) {
  if (s.agent().busy()) return term.Line("(busy: cancel the turn first)");
  Ledger& ledger = s.runtime().ledger();
  StatusOr<std::vector<MessageRecord>> messages = ledger.ListMessages(s.runtime().coordinator().session_id());
  std::string last;
  if (messages.ok()) {
    for (const MessageRecord& m : *messages) {
      if (m.role == "user" && m.agent_id == "main") last = m.id;
    }
  }
  if (last.empty()) return term.Line("nothing to undo: no message yet");
  const std::string& root = s.runtime().workspace().root;
  StatusOr<std::vector<std::string>> calls = CallsOfMessage(&ledger, last);
  StatusOr<UndoPlan> plan = calls.ok() ? PlanUndo(&ledger, root, *calls) : StatusOr<UndoPlan>(calls.status());
  if (!plan.ok()) return term.Line("nothing to undo: " + plan.status().message());
  std::cout << VisibleControls(RenderUndo(*plan, root));
  for (const std::string& w : plan->warnings) term.Line("warning: " + w);
  StatusOr<std::string> undo = ApplyUndo(&ledger, root, *plan, force, RealClock::Get()->WallMillis());
  if (!undo.ok()) return term.Line(undo.status().message() + " (/undo force overrides)");
  std::string paths;
  for (const UndoStep& step : plan->steps) paths += (paths.empty() ? "" : ", ") + DisplayPath(step.path, root);
  term.Line("undone: " + std::to_string(plan->steps.size()) + " paths put back (recorded as " + *undo + ")");
  s.agent().AddNote("The user undid the changes of their previous message (" + *undo + "): " + paths +
                    " are as they were before it. Read them again before you edit them.");
}

// The session's settings from the command line, for either front end.
AgentSessionFlags SessionFlags(const GlobalFlags& g, const AgentFlags& f, const std::string& kind,
                               const std::string& worker_mode, const std::string& approval) {
  AgentSessionFlags flags;
  flags.runtime.dir = g.dir;
  flags.runtime.sandbox = g.sandbox;
  flags.runtime.session_kind = kind;
  flags.runtime.mode = worker_mode;
  flags.runtime.approval = approval;
  flags.runtime.start_mcp = true;
  flags.llm = f.llm;
  flags.max_turns = f.max_turns;
  flags.max_tool_calls = f.max_tool_calls;
  flags.max_tokens = f.max_tokens;
  flags.max_budget_usd = f.max_budget_usd;
  flags.max_wall_seconds = f.max_wall_seconds;
  flags.profile = f.profile;
  flags.resume = f.resume;
  flags.continue_last = f.continue_last;
  return flags;
}

}  // namespace

int RunPrompt(const GlobalFlags& g, const AgentFlags& f) {
  Mode mode;
  if (!ParseMode(f.mode, &mode)) {
    std::cerr << "odin: unknown mode '" << f.mode << "' (ask, plan or edit)\n";
    return kUsageError;
  }
  if (f.approval == "prompt") {
    std::cerr << "odin: --approval prompt needs the interactive session (odin without -p)\n";
    return kUsageError;
  }
  // The events are printed as they happen; the session id and the breakers
  // are known once the session started.
  AgentSession* started = nullptr;
  std::string session_id;
  std::optional<int> exit_code;
  EventRecorder recorder(
      "",
      [&](v1::SessionEvent e) {
        e.set_session_id(session_id);
        PrintPromptEvent(e, f.output_format, std::cout, std::cerr);
        if (e.has_message_finished()) exit_code = e.message_finished().exit_code();
      },
      [&] { return started != nullptr ? started->runtime().coordinator().Breakers() : std::vector<BreakerInfo>{}; });
  AgentSessionFlags flags = SessionFlags(g, f, "agent", f.mode, f.approval.empty() ? "deny" : f.approval);
  StatusOr<std::unique_ptr<AgentSession>> session = AgentSession::Start(flags, &recorder);
  if (!session.ok()) {
    std::cerr << "odin: " << session.status().message() << "\n";
    return kError;
  }
  AgentSession& s = **session;
  started = &s;
  session_id = s.runtime().coordinator().session_id();
  recorder.set_session_id(session_id);
  s.runtime().coordinator().on_gate_event = [&recorder](const GateEvent& g) { recorder.OnGateEvent(g); };
  if (f.output_format == "stream-json") {
    std::cout << SessionStartJson(session_id, s.llm().endpoint.provider, s.llm().model, s.runtime().workspace().root)
              << "\n"
              << std::flush;
  }
  if (Status sp = InstallSignalPipe(); !sp.ok()) {
    std::cerr << "odin: " << sp.message() << "\n";
    return kError;
  }
  s.agent().Send(f.prompt, mode);
  bool interrupted = false;
  while (!exit_code) {
    std::vector<PollFd> extra = {{g_signal_pipe[0]}};
    Status st = s.Poll(seconds(1), &extra);
    if (!st.ok()) {
      std::cerr << "odin: " << st.message() << "\n";
      return kError;
    }
    for (int sig : DrainSignals()) {
      if (interrupted) return 128 + sig;  // a second signal: leave now
      interrupted = true;
      s.agent().CancelCurrent();
    }
  }
  return *exit_code;
}

// One interactive session. /resume ID ends it with *resume_next set (and
// the input not read yet in *buffer), for RunInteractive to take that
// session up.
static int RunInteractiveSession(const GlobalFlags& g, const AgentFlags& f, std::string* buffer_io,
                                 std::string* resume_next) {
  Mode mode;
  if (!ParseMode(f.mode, &mode)) {
    std::cerr << "odin: unknown mode '" << f.mode << "' (ask, plan or edit)\n";
    return kUsageError;
  }
  Terminal term;
  // The workers of an interactive session serve messages of every mode; the
  // mode gate keeps ask and plan from writing.
  AgentSessionFlags flags = SessionFlags(g, f, "interactive", "edit", f.approval.empty() ? "prompt" : f.approval);
  StatusOr<std::unique_ptr<AgentSession>> session = AgentSession::Start(flags, &term);
  if (!session.ok()) {
    std::cerr << "odin: " << session.status().message() << "\n";
    return kError;
  }
  AgentSession& s = **session;
  if (Status sp = InstallSignalPipe(); !sp.ok()) {
    std::cerr << "odin: " << sp.message() << "\n";
    return kError;
  }
  // Commands that need approval wait for the user's answer: the next line.
  std::deque<ApprovalRequest> approvals;
  // The command is the model's: control characters are shown, not obeyed,
  // so it cannot make itself look like something else.
  auto visible = [](const std::string& text) {
    std::string out;
    for (unsigned char ch : text) {
      if (ch < 0x20 && ch != '\t')
        out += "^" + std::string(1, static_cast<char>(ch + 64));
      else if (ch == 0x7f)
        out += "^?";
      else
        out += static_cast<char>(ch);
    }
    return out;
  };
  auto ask_next = [&term, &approvals, visible] {
    if (approvals.empty()) return;
    const ApprovalRequest& a = approvals.front();
    term.Line(term.Color("33", "⚠ approval needed: `" + visible(a.command) + "`"));
    term.Line(term.Color("33", "  " + visible(a.reason)));
    term.Line(term.Color("1", "  Allow? [y] once, [a] for this session, [n] no: "));
  };
  bool input_open = true;
  s.runtime().coordinator().on_approval_request = [&approvals, &ask_next, &input_open, &s](const ApprovalRequest& a) {
    if (!input_open) {
      // Nobody is left to answer.
      s.runtime().coordinator().AnswerApproval(a.execution_id, ApprovalAnswer::kDeny);
      return;
    }
    approvals.push_back(a);
    if (approvals.size() == 1) ask_next();
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
  bool tty_in = isatty(STDIN_FILENO) != 0;
  term.Line("odin " ODIN_VERSION " · " + s.llm().endpoint.provider + " " + s.llm().model + " · " +
            s.runtime().workspace().root + " · session " + s.runtime().coordinator().session_id());
  if (s.llm().endpoint.provider == "demo") term.Line("(the demo model gives scripted answers; it is not an LLM)");
  term.Line("Type /help for commands.");

  std::string buffer = std::move(*buffer_io);
  SteadyTime last_interrupt{};
  for (;;) {
    if (term.prompt_due_ && tty_in && !s.agent().busy()) {
      std::cout << term.Color("1", std::string(ModeName(mode)) + "> ") << std::flush;
      term.prompt_due_ = false;
    }
    if (!input_open && !s.agent().busy() && !s.agent().compacting() && s.agent().queued() == 0) break;
    std::vector<PollFd> extra = {{g_signal_pipe[0]}};
    if (input_open) extra.push_back({STDIN_FILENO});
    Status st = s.Poll(milliseconds(500), &extra);
    if (!st.ok()) {
      term.Line("odin: " + st.message());
      return kError;
    }
    for (int sig : DrainSignals()) {
      if (sig != SIGINT) return 128 + sig;
      SteadyTime now = RealClock::Get()->Now();
      if (s.agent().busy() || s.agent().compacting()) {
        term.Line(term.Color("33", "^C: cancelling the current turn"));
        approvals.clear();  // their calls end as cancelled
        s.agent().CancelCurrent();
      } else if (now - last_interrupt < seconds(2)) {
        term.Line("");
        return 0;
      } else {
        term.Line("(Ctrl-C again, Ctrl-D or /quit to leave)");
        term.prompt_due_ = true;
      }
      last_interrupt = now;
    }
    term.Progress();
    if (!input_open || !extra.back().readable) continue;
    char chunk[4096];
    ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
    // Ctrl-D, the end of piped input, or an input that fails: finish the
    // queue, then leave.
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) input_open = false;
    if (!input_open && buffer.empty()) {
      // Nobody is left to answer: what waits for approval is denied.
      while (!approvals.empty()) {
        s.runtime().coordinator().AnswerApproval(approvals.front().execution_id, ApprovalAnswer::kDeny);
        approvals.pop_front();
      }
    }
    if (n > 0) buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos || (!input_open && !buffer.empty())) {
      std::string line = nl == std::string::npos ? buffer : buffer.substr(0, nl);
      buffer.erase(0, nl == std::string::npos ? buffer.size() : nl + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      term.prompt_due_ = true;
      if (!approvals.empty()) {
        ApprovalRequest a = approvals.front();
        approvals.pop_front();
        ApprovalAnswer answer = line == "y" || line == "yes"      ? ApprovalAnswer::kOnce
                                : line == "a" || line == "always" ? ApprovalAnswer::kSession
                                                                  : ApprovalAnswer::kDeny;
        term.Line(answer == ApprovalAnswer::kOnce      ? "  allowed once"
                  : answer == ApprovalAnswer::kSession ? "  allowed for this session"
                                                       : "  denied");
        s.runtime().coordinator().AnswerApproval(a.execution_id, answer);
        ask_next();
        continue;
      }
      if (line.empty()) continue;
      if (!IsValidUtf8(line)) {
        term.Line("(that line is not valid UTF-8; not sent)");
        continue;
      }
      if (line[0] != '/') {
        s.agent().Send(line, mode);
        if (s.agent().queued() > 0)
          term.Line(term.Color("2", "(queued: " + std::to_string(s.agent().queued()) + " waiting)"));
        continue;
      }
      std::string cmd = line.substr(0, line.find(' '));
      std::string arg = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
      Mode m;
      if (ParseMode(cmd.substr(1), &m)) {
        mode = m;
        term.Line(std::string("mode: ") + ModeName(mode));
      } else if (cmd == "/model") {
        if (!arg.empty()) s.agent().set_model(arg);
        term.Line("model: " + s.agent().model());
      } else if (cmd == "/cost") {
        const MessageOutcome& t = s.agent().totals();
        char cost[32];
        snprintf(cost, sizeof cost, "%.4f", static_cast<double>(t.cost_microusd) / 1e6);
        term.Line(std::to_string(t.llm_calls) + " model calls, " + std::to_string(t.usage.input_tokens) +
                  " tokens in, " + std::to_string(t.usage.output_tokens) + " tokens out, $" + cost +
                  " (prices from odinconfig.json llm.prices)");
        term.Line(ContextLine(s.agent().context()));
      } else if (cmd == "/compact") {
        term.Line(s.agent().CompactNow(arg) ? "compacting the conversation..."
                                            : "(busy: /compact waits until the agent is idle)");
      } else if (cmd == "/undo") {
        UndoLastMessage(s, arg == "force", term);
      } else if (cmd == "/hooks") {
        std::cout << DescribeHooks(s.runtime().coordinator().hooks()) << std::flush;
      } else if (cmd == "/mcp") {
        std::cout << DescribeMcpServers(s.runtime().coordinator().mcp())
                  << "(* not annotated readOnlyHint: edit mode only)\n"
                  << std::flush;
      } else if (cmd == "/resume") {
        if (arg.empty()) {
          RunSessions(g, false);
          term.Line("(/resume ID takes one of them up)");
        } else if (s.agent().busy() || s.agent().compacting() || s.agent().queued() > 0) {
          term.Line("(busy: /resume waits until the agent is idle)");
        } else {
          StatusOr<std::string> id = PickResumableSession(s.runtime().workspace().ledger_path, arg, false);
          if (!id.ok()) {
            term.Line(id.status().message());
          } else {
            *resume_next = *id;
            *buffer_io = std::move(buffer);
            return 0;
          }
        }
      } else if (cmd == "/clear") {
        term.Line(s.agent().ClearHistory() ? "conversation cleared" : "(busy: cancel the turn first)");
      } else if (cmd == "/help") {
        std::cout << kHelp << std::flush;
      } else if (cmd == "/quit" || cmd == "/exit") {
        return 0;
      } else {
        term.Line("unknown command " + cmd + " (/help lists them)");
      }
    }
  }
  return 0;
}

int RunInteractive(const GlobalFlags& g, const AgentFlags& f_in) {
  AgentFlags f = f_in;
  std::string buffer;
  for (;;) {
    std::string next;
    int rc = RunInteractiveSession(g, f, &buffer, &next);
    if (next.empty()) return rc;
    f.resume = next;
    f.continue_last = false;
  }
}

}  // namespace odin
