// odin diff|apply|discard SESSION: an isolated session's change set
// (workspace/isolated_views.h) shown, landed in the workspace, or dropped
// with its view; and the views odin doctor lists.

#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "cli/cli.h"
#include "config/config_loader.h"
#include "ledger/ledger.h"
#include "session/resume.h"
#include "session/view_recheck.h"
#include "workspace/isolated_views.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

int Fail(const std::string& action, const Status& s) {
  std::cerr << "odin " << action << ": " << VisibleControls(s.message()) << "\n";
  return kError;
}

// What a session's view is now, in a few words.
std::string ViewState(const SessionView& sv, Ledger* ledger) {
  if (!sv.applied.empty()) return "applied (" + sv.applied + ")";
  if (sv.discarded) return "discarded";
  if (!sv.tree_exists) return "gone";
  StatusOr<std::vector<ConversationEntry>> entries = ledger->ListConversation(sv.session_id, "main");
  if (entries.ok()) {
    if (int64_t pid = RunningOwner(*entries); pid > 0) return "running (odin process " + std::to_string(pid) + ")";
  }
  return "ended";
}

}  // namespace

nlohmann::json IsolatedViews(const Workspace& ws, Ledger* ledger) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> recorded;
  if (ledger != nullptr) {
    StatusOr<std::vector<SessionView>> views = ListSessionViews(ledger, ws.state_dir);
    for (const SessionView& sv : views.ok() ? *views : std::vector<SessionView>{}) {
      recorded.insert(sv.view.id);
      if (!sv.tree_exists) continue;
      out.push_back({{"session_id", sv.session_id},
                     {"view", sv.view.id},
                     {"path", sv.view.dir},
                     {"bytes", DiskBytes(sv.view.dir)},
                     {"state", ViewState(sv, ledger)}});
    }
  }
  // A view no session recorded: its session's start failed, or is under
  // way right now.
  StatusOr<std::vector<std::string>> ids = ListViewIds(ws.state_dir);
  for (const std::string& id : ids.ok() ? *ids : std::vector<std::string>{}) {
    if (recorded.count(id)) continue;
    View v = ViewNamed(ws.state_dir, id);
    out.push_back({{"session_id", ""},
                   {"view", id},
                   {"path", v.dir},
                   {"bytes", DiskBytes(v.dir)},
                   {"state", "not recorded by any session (one starting now, or one whose start failed)"}});
  }
  return out;
}

int RunView(const GlobalFlags& g, const ViewFlags& f) {
  const std::string& action = f.action;
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail(action, ws.status());
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(CurrentEnvironment());
  StatusOr<std::unique_ptr<Ledger>> ledger =
      action == "diff" ? Ledger::OpenReadOnly(ws->ledger_path) : Ledger::Open(ws->ledger_path, std::move(redactor));
  if (!ledger.ok()) return Fail(action, ledger.status());
  // Apply and discard hold the lock from before they look at the session
  // to their end: what they saw still holds when they act.
  StatusOr<UniqueFd> lock = action == "diff" ? StatusOr<UniqueFd>(UniqueFd()) : LockApplies(ws->state_dir);
  if (!lock.ok()) return Fail(action, lock.status());
  StatusOr<SessionView> sv = FindSessionView(ledger->get(), ws->state_dir, f.session);
  if (!sv.ok()) return Fail(action, sv.status());
  if (action != "diff") {
    // Never under a session still at work in it.
    StatusOr<std::vector<ConversationEntry>> entries = (*ledger)->ListConversation(sv->session_id, "main");
    if (!entries.ok()) return Fail(action, entries.status());
    if (int64_t pid = RunningOwner(*entries); pid > 0) {
      return Fail(action,
                  Status::FailedPrecondition("session " + sv->session_id, "is still running in odin process " +
                                                                              std::to_string(pid) + " (end it first)"));
    }
  }
  int64_t now = RealClock::Get()->WallMillis();
  if (action == "discard") {
    if (!sv->applied.empty()) {
      return Fail(action, Status::FailedPrecondition("session " + sv->session_id,
                                                     "was applied (" + sv->applied + "): odin undo puts it back"));
    }
    Status dropped = DiscardView(ledger->get(), ws->state_dir, *sv, now);
    if (!dropped.ok()) return Fail(action, dropped);
    std::cout << "discarded session " << sv->session_id << "'s view " << sv->view.id << "\n";
    return 0;
  }
  if (!sv->applied.empty() || sv->discarded) {
    return Fail(action, Status::FailedPrecondition(
                            "session " + sv->session_id,
                            sv->discarded ? "was discarded" : "was applied already (" + sv->applied + ")"));
  }
  StatusOr<UndoPlan> plan = PlanViewApply(ledger->get(), *sv, ws->root);
  if (!plan.ok()) return Fail(action, plan.status());
  if (action == "diff") {
    std::string text = RenderViewDiff(*plan, ws->root);
    if (f.json) {
      nlohmann::json j = {{"session_id", sv->session_id}, {"view", sv->view.id},
                          {"conflicts", plan->conflicts}, {"not_applicable", plan->not_undoable},
                          {"paths", plan->steps.size()},  {"diff", text}};
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << (text.empty() ? "session " + sv->session_id + " changed nothing\n" : VisibleControls(text));
      if (!plan->conflicts.empty() || !plan->not_undoable.empty()) {
        std::cout << "(odin apply would refuse: see above)\n";
      }
    }
    return 0;
  }
  // Refused before anything else runs: conflicts, protected paths.
  if (Status refused = PlanRefusal(*plan); !refused.ok()) return Fail(action, refused);
  // Judged against the workspace as it is now, then planned again: the
  // workspace may have changed while the checks ran.
  StatusOr<ViewRecheck> recheck = ViewRecheck();
  if (f.no_recheck) {
    recheck->why = "not re-validated (--no-recheck)";
    std::cerr << "odin apply: " << recheck->why << "\n";
  } else {
    StatusOr<LoadedConfig> loaded = LoadConfig(*ws, EnvironmentMap());
    if (!loaded.ok()) return Fail(action, loaded.status());
    recheck = RecheckView(ledger->get(), *ws, loaded->config, *sv, *plan, [](const std::string& line) {
      std::cerr << "odin apply: re-validating on the workspace as it is now: " << VisibleControls(line) << "\n";
    });
  }
  if (!recheck.ok()) return Fail(action, recheck.status());
  if (!recheck->passed) {
    return Fail(action, Status::FailedPrecondition(
                            "session " + sv->session_id,
                            "re-validated against the workspace as it is now: " + recheck->why + "; nothing landed"));
  }
  plan = PlanViewApply(ledger->get(), *sv, ws->root);
  if (!plan.ok()) return Fail(action, plan.status());
  StatusOr<std::string> applied = ApplyView(ledger->get(), ws->state_dir, *sv, ws->root, *plan, now);
  if (!applied.ok()) return Fail(action, applied.status());
  size_t n = plan->steps.size();
  if (f.json) {
    std::cout << nlohmann::json({{"session_id", sv->session_id},
                                 {"execution_id", *applied},
                                 {"paths", n},
                                 {"recheck", recheck->why},
                                 {"drift", recheck->drift.size()}})
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    if (!recheck->checks.empty()) std::cout << "re-validated: " << VisibleControls(recheck->why) << "\n";
    std::cout << n << (n == 1 ? " path" : " paths") << " landed from session " << sv->session_id << " (" << *applied
              << "; odin undo " << *applied << " puts them back)\n";
  }
  return 0;
}

}  // namespace odin
