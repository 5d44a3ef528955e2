// odin undo: puts back what calls changed (workspace/undo.h), file tools'
// writes and commands' changes alike, newest first. odin rewind and odin
// sessions fork (session/rewind.h), which build on it.

#include <iostream>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "base/ids.h"
#include "cli/cli.h"
#include "session/resume.h"
#include "session/rewind.h"
#include "workspace/undo.h"
#include "workspace/workspace.h"
#include "ledger/ledger.h"

namespace odin {

namespace {

int Fail(const Status& s, const char* what = "undo") {
  std::cerr << "odin " << what << ": " << VisibleControls(s.message()) << "\n";
  return kError;
}

// The workspace's ledger, opened to write, after checking that no live
// odin runs the session of the message (or the session) named.
StatusOr<std::unique_ptr<Ledger>> LedgerOfIdleSession(const Workspace& ws, const std::string& session_id) {
  RETURN_IF_ERROR(PickResumableSession(ws.ledger_path, session_id, false).status());
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(CurrentEnvironment());
  return Ledger::Open(ws.ledger_path, std::move(redactor));
}

}  // namespace

int RunUndo(const GlobalFlags& g, const UndoFlags& f) {
  int chosen = (f.execution_id.empty() ? 0 : 1) + (f.message_id.empty() ? 0 : 1) + (f.last ? 1 : 0);
  if (chosen != 1) return Fail(Status::InvalidArgument("undo", "give one of EXECUTION_ID, --message ID or --last"));
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail(ws.status());
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(CurrentEnvironment());
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::Open(ws->ledger_path, std::move(redactor));
  if (!ledger.ok()) return Fail(ledger.status());

  StatusOr<std::vector<std::string>> calls = std::vector<std::string>{};
  if (f.last) {
    calls = LastChangingCall(ledger->get());
  } else if (!f.message_id.empty()) {
    calls = CallsOfMessage(ledger->get(), f.message_id);
  } else {
    StatusOr<ExecutionRow> row = (*ledger)->FindExecution(f.execution_id);
    if (!row.ok()) return Fail(row.status());
    calls = std::vector<std::string>{row->start.execution_id};
  }
  if (!calls.ok()) return Fail(calls.status());
  StatusOr<UndoPlan> plan = PlanUndo(ledger->get(), ws->root, *calls);
  if (!plan.ok()) return Fail(plan.status());

  for (const std::string& w : plan->warnings) std::cerr << "odin undo: warning: " << VisibleControls(w) << "\n";
  if (f.dry_run) {
    std::string text = RenderUndo(*plan, ws->root);
    if (f.json) {
      nlohmann::json j = {{"executions", plan->executions},     {"conflicts", plan->conflicts},
                          {"not_undoable", plan->not_undoable}, {"warnings", plan->warnings},
                          {"left_alone", plan->left_alone},     {"diff", text}};
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << VisibleControls(text);
      if (!plan->conflicts.empty() || !plan->not_undoable.empty()) {
        std::cout << "(without --force, odin undo would refuse: see above)\n";
      }
    }
    return 0;
  }
  StatusOr<std::string> undo = ApplyUndo(ledger->get(), ws->root, *plan, f.force, RealClock::Get()->WallMillis());
  if (!undo.ok()) return Fail(undo.status());
  if (f.json) {
    nlohmann::json j = {{"execution_id", *undo},
                        {"undone", plan->executions},
                        {"paths", plan->steps.size()},
                        {"warnings", plan->warnings},
                        {"left_alone", plan->left_alone}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::string ids;
    for (const std::string& id : plan->executions) ids += (ids.empty() ? "" : ", ") + id;
    std::cout << "undid " << ids << ": " << PathsPutBack(plan->steps.size()) << " (recorded as " << *undo << ")\n";
    if (f.force) {
      for (const std::string& n : plan->not_undoable) std::cout << "  skipped " << VisibleControls(n) << "\n";
    }
    for (const std::string& n : plan->left_alone) std::cout << "  left alone: " << VisibleControls(n) << "\n";
  }
  return 0;
}

int RunRewind(const GlobalFlags& g, const RewindFlags& f) {
  if (f.code_only && f.conversation_only) {
    return Fail(Status::InvalidArgument("--code-only and --conversation-only", "give at most one"), "rewind");
  }
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail(ws.status(), "rewind");
  StatusOr<std::string> session = [&]() -> StatusOr<std::string> {
    ASSIGN_OR_RETURN(std::unique_ptr<Ledger> reader, Ledger::OpenReadOnly(ws->ledger_path));
    ASSIGN_OR_RETURN(MessageRecord m, reader->FindMessage(f.message_id));
    return m.session_id;
  }();
  if (!session.ok()) return Fail(session.status(), "rewind");
  StatusOr<std::unique_ptr<Ledger>> ledger = LedgerOfIdleSession(*ws, *session);
  if (!ledger.ok()) return Fail(ledger.status(), "rewind");
  Ledger* l = ledger->get();
  int64_t now = RealClock::Get()->WallMillis();
  RewindRequest request{f.message_id, *session, !f.conversation_only, !f.code_only};
  StatusOr<RewindOutcome> done = RewindSession(
      l, ws->root, request,
      [&](const std::string& id) { return RewindRecordedConversation(l, *session, "main", id, now); },
      [&](const RewindOutcome& o) {
        return l->AddGateEvent({NewId("gate"), o.session_id, o.agent_id, o.message_id, "rewind", o.undo_execution,
                                o.gate_detail_json, now});
      },
      now);
  if (!done.ok()) return Fail(done.status(), "rewind");
  for (const std::string& w : done->warnings) std::cerr << "odin rewind: warning: " << VisibleControls(w) << "\n";
  if (f.json) {
    nlohmann::json j = {{"message_id", done->message_id},
                        {"session_id", done->session_id},
                        {"undo", done->undo_execution},
                        {"paths", done->paths},
                        {"calls", done->calls},
                        {"code", request.code},
                        {"conversation", request.conversation}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::string paths;
  for (const std::string& p : done->paths) paths += (paths.empty() ? "" : ", ") + VisibleControls(p);
  std::cout << "rewound session " << done->session_id << " to before message " << done->message_id << ": ";
  if (request.code) {
    std::cout << PathsPutBack(done->paths.size()) << (paths.empty() ? "" : " (" + paths + ")")
              << (done->undo_execution.empty() ? "" : ", recorded as " + done->undo_execution);
  } else {
    std::cout << "the files left as they are";
  }
  std::cout << (request.conversation
                    ? "; the conversation goes back too (odin -r " + done->session_id + " takes it up)\n"
                    : "; the conversation left as it is\n");
  return 0;
}

int RunSessionsFork(const GlobalFlags& g, const std::string& id, bool json) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail(ws.status(), "sessions fork");
  StatusOr<std::string> session = PickResumableSession(ws->ledger_path, id, false);
  if (!session.ok()) return Fail(session.status(), "sessions fork");
  StatusOr<std::unique_ptr<Ledger>> ledger = LedgerOfIdleSession(*ws, *session);
  if (!ledger.ok()) return Fail(ledger.status(), "sessions fork");
  StatusOr<std::string> fork = ForkSession(ledger->get(), *session, RealClock::Get()->WallMillis());
  if (!fork.ok()) return Fail(fork.status(), "sessions fork");
  if (json) {
    std::cout << nlohmann::json({{"session_id", *fork}, {"forked_from", *session}}).dump(2) << "\n";
  } else {
    std::cout << "forked " << *session << " as " << *fork << " (odin -r " << *fork << " goes on with it)\n";
  }
  return 0;
}

}  // namespace odin
