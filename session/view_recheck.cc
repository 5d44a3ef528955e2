#include "session/view_recheck.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "planner/checks.h"
#include "planner/convergence_gate.h"
#include "session/runtime.h"
#include "odin/v1/worker.pb.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// "3 files changed in the workspace since the session started (a.c, b.c, ...)"
std::string DriftText(const ViewDrift& drift) {
  std::vector<std::string> paths = drift.changed;
  paths.insert(paths.end(), drift.removed.begin(), drift.removed.end());
  std::string names;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) names += (i ? ", " : "") + paths[i];
  if (paths.size() > 3) names += ", ...";
  return std::to_string(paths.size()) + (paths.size() == 1 ? " path" : " paths") +
         " changed in the workspace since the session started (" + names + ")";
}

// Runs the checks in the view, one after the other, as the convergence
// gate runs them at completion.
Status RunChecks(const Workspace& view_ws, const Config& config, ViewRecheck* out) {
  Profile profile = Profile::kAuto;
  (void)ParseProfile(config.profile, &profile);
  std::vector<CheckSpec> specs = ChecksForProfile(profile, config.checks, view_ws.root);
  bool any = false;
  for (const CheckSpec& s : specs) any = any || !s.command.empty();
  if (!any) {
    for (const CheckSpec& s : specs) out->checks.push_back({s.name, "", "not_applicable", ""});
    return Status::OK();
  }
  RuntimeFlags rf;
  rf.session_kind = "recheck";
  rf.mode = "edit";
  rf.workers = 1;
  rf.approval = "deny";
  ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt, Runtime::Start(rf, view_ws, config));
  Coordinator& coord = rt->coordinator();
  for (const CheckSpec& spec : specs) {
    if (spec.command.empty()) {
      out->checks.push_back({spec.name, "", "not_applicable", ""});
      continue;
    }
    ToolCall call;
    call.tool = "ExecuteCommand";
    call.arguments_json = json({{"command", spec.command}, {"timeout_seconds", config.checks.timeout_seconds}}).dump();
    call.mode = CallMode::kEdit;
    call.agent_id = "main";
    call.timeout = seconds(config.checks.timeout_seconds);
    call.internal = true;
    std::optional<v1::ToolResult> result;
    CallHandlers handlers;
    handlers.on_done = [&](const v1::ToolResult& r, const Status&) { result = r; };
    std::string id = coord.Submit(std::move(call), std::move(handlers));
    while (!result) RETURN_IF_ERROR(coord.Poll(seconds(1)));
    CheckVerdict v = JudgeCheck(spec, id, *result, config.checks.timeout_seconds, config.validation.fail_open);
    coord.RecordGateEvent("main", "", "check", id, v.event);
    out->checks.push_back({spec.name, spec.command, CheckStatusName(v.status), id});
    if (v.failure && out->passed) {
      out->passed = false;
      out->why = DriftText(out->drift) + ", and with them the " + spec.name + " check " +
                 (v.status == CheckStatus::kNotRun ? "could not run" : "fails") + " (odin show " + id + ")";
    }
  }
  rt->FlushLedger();
  return Status::OK();
}

}  // namespace

StatusOr<ViewRecheck> RecheckView(Ledger* ledger, const Workspace& ws, const Config& config, const SessionView& sv) {
  ViewRecheck out;
  ASSIGN_OR_RETURN(out.drift, FindViewDrift(ledger, sv, ws.root));
  if (out.drift.empty()) {
    out.why = "the workspace is the session's base outside its change: its own checks judged what lands";
  } else {
    RETURN_IF_ERROR(BringDriftIntoView(sv, ws.root, out.drift));
    RETURN_IF_ERROR(RunChecks(ViewWorkspace(ws, sv.view), config, &out));
    bool ran = std::any_of(out.checks.begin(), out.checks.end(),
                           [](const ViewRecheck::Check& c) { return c.status != "not_applicable"; });
    if (out.passed) {
      out.why = DriftText(out.drift) +
                (ran ? "; the checks pass with them" : "; no check is configured or detected to judge them");
    }
  }
  json checks = json::array();
  for (const ViewRecheck::Check& c : out.checks) {
    checks.push_back({{"name", c.name}, {"status", c.status}, {"execution_id", c.execution_id}});
  }
  json detail = {{"view", sv.view.id}, {"changed", out.drift.changed}, {"removed", out.drift.removed},
                 {"checks", checks},   {"passed", out.passed},         {"why", out.why}};
  RETURN_IF_ERROR(ledger->AddGateEvent(
      {NewId("gate"), sv.session_id, "user", "", "view_rechecked", "", Dump(detail), RealClock::Get()->WallMillis()}));
  return out;
}

}  // namespace odin
