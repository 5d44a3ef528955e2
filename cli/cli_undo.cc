// odin undo: puts back what calls changed (workspace/undo.h), file tools'
// writes and commands' changes alike, newest first.

#include <iostream>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "cli/cli.h"
#include "workspace/undo.h"
#include "workspace/workspace.h"
#include "ledger/ledger.h"

namespace odin {

namespace {

int Fail(const Status& s) {
  std::cerr << "odin undo: " << s.message() << "\n";
  return kError;
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

}  // namespace odin
