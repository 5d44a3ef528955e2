// /undo and /rewind of the interactive session (cli/cli_interactive.cc):
// what the user's messages changed, put back.

#include "cli/interactive_history.h"

#include "base/clock.h"
#include "base/terminal_text.h"
#include "cli/cli_agent_internal.h"
#include "session/rewind.h"
#include "tools/workspace_path.h"
#include "workspace/undo.h"

namespace odin {

std::string LastUserMessage(AgentSession& s) {
  StatusOr<std::vector<MessageRecord>> messages =
      s.runtime().ledger().ListMessages(s.runtime().coordinator().session_id());
  std::string last;
  if (messages.ok()) {
    for (const MessageRecord& m : *messages) {
      if (m.role == "user" && m.agent_id == "main") last = m.id;
    }
  }
  return last;
}

void UndoLastMessage(AgentSession& s, bool force, TerminalView& term) {
  if (s.agent().busy()) return term.Line("(busy: cancel the turn first)");
  Ledger& ledger = s.runtime().ledger();
  std::string last = LastUserMessage(s);
  if (last.empty()) return term.Line("nothing to undo: no message yet");
  const std::string& root = s.runtime().workspace().root;
  StatusOr<std::vector<std::string>> calls = CallsOfMessage(&ledger, last);
  StatusOr<UndoPlan> plan = calls.ok() ? PlanUndo(&ledger, root, *calls) : StatusOr<UndoPlan>(calls.status());
  if (!plan.ok()) return term.Line("nothing to undo: " + plan.status().message());
  term.Line(VisibleControls(RenderUndo(*plan, root)));
  for (const std::string& w : plan->warnings) term.Line("warning: " + w);
  StatusOr<std::string> undo = ApplyUndo(&ledger, root, *plan, force, RealClock::Get()->WallMillis());
  if (!undo.ok()) return term.Line(undo.status().message() + " (/undo force overrides)");
  std::string paths;
  for (const UndoStep& step : plan->steps) paths += (paths.empty() ? "" : ", ") + DisplayPath(step.path, root);
  term.Line("undone: " + PathsPutBack(plan->steps.size()) + " (recorded as " + *undo + ")");
  s.agent().AddNote("The user undid the changes of their previous message (" + *undo + "): " + paths +
                    " are as they were before it. Read them again before you edit them.");
}

void RewindToMessage(AgentSession& s, const std::string& arg, TerminalView& term) {
  // Idle as Agent::Rewind needs it, checked before any file changes.
  if (s.agent().busy() || s.agent().compacting()) return term.Line("(busy: cancel the turn first)");
  Ledger& ledger = s.runtime().ledger();
  Coordinator& co = s.runtime().coordinator();
  StatusOr<std::vector<MessageRecord>> all = ledger.ListMessages(co.session_id());
  if (!all.ok()) return term.Line(all.status().message());
  std::vector<const MessageRecord*> mine;
  for (const MessageRecord& m : *all) {
    if (m.role == "user" && m.agent_id == "main") mine.push_back(&m);
  }
  if (arg.empty()) {
    if (mine.empty()) return term.Line("nothing to rewind: no message yet");
    for (size_t i = 0; i < mine.size(); ++i) {
      std::string text = mine[i]->text.substr(0, mine[i]->text.find('\n'));
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      term.Line(std::to_string(i + 1) + ". " + VisibleControls(text) + "  (" + mine[i]->id + ")");
    }
    return term.Line("(/rewind N takes the session back to before message N: its files and the conversation)");
  }
  std::string id = arg;
  if (arg.find_first_not_of("0123456789") == std::string::npos && arg.size() < 9) {
    size_t n = std::stoul(arg);
    if (n < 1 || n > mine.size()) return term.Line("no message " + arg + " (/rewind lists them)");
    id = mine[n - 1]->id;
  }
  StatusOr<RewindOutcome> done = RewindSession(
      &ledger, s.runtime().workspace().root, {id, co.session_id(), true, true},
      [&](const std::string& m) { return s.agent().Rewind(m); },
      [&](const RewindOutcome& o) {
        co.RecordGateEvent("main", o.message_id, "rewind", o.undo_execution, o.gate_detail_json);
        return Status::OK();
      },
      RealClock::Get()->WallMillis());
  if (!done.ok()) return term.Line(VisibleControls(done.status().message()));
  for (const std::string& w : done->warnings) term.Line("warning: " + VisibleControls(w));
  std::string paths;
  for (const std::string& p : done->paths) paths += (paths.empty() ? "" : ", ") + p;
  term.Line("rewound to before " + done->message_id + ": " + PathsPutBack(done->paths.size()) +
            (paths.empty() ? "" : " (" + VisibleControls(paths) + ")") + "; the conversation after it is gone");
}

}  // namespace odin
