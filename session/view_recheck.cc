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

// "1 path changed in the workspace since the session started (a.c)"
std::string DriftText(const ViewRecheck& r) {
  if (!r.drift_known) return "the workspace as it is now";
  std::vector<std::string> paths = r.drift.changed;
  paths.insert(paths.end(), r.drift.removed.begin(), r.drift.removed.end());
  if (paths.empty()) return "the workspace as it is now (nothing else changed since the session started)";
  std::string names;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) names += (i ? ", " : "") + paths[i];
  if (paths.size() > 3) names += ", ...";
  return std::to_string(paths.size()) + (paths.size() == 1 ? " path" : " paths") +
         " changed in the workspace since the session started (" + names + ")";
}

// The copy's removal, however the checks end.
struct Scratch {
  std::string state_dir, id;
  ~Scratch() {
    if (!id.empty()) (void)RemoveView(state_dir, id);
  }
};

// Runs the checks in tree (the scratch copy), one after the other, as the
// convergence gate runs them at completion.
Status RunChecks(const Workspace& tree_ws, Config config, const SessionView& sv, const std::vector<CheckSpec>& specs,
                 const std::function<void(const std::string&)>& say, ViewRecheck* out) {
  RuntimeFlags rf;
  rf.session_kind = "recheck";
  rf.mode = "edit";
  rf.workers = 1;
  rf.approval = "deny";
  rf.network = sv.network;  // as the session's commands ran
  rf.sandbox = sv.sandbox;
  config.remote.launcher = "off";  // here, never on hosts: apply asks nobody for anything
  ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt, Runtime::Start(rf, tree_ws, config));
  Coordinator& coord = rt->coordinator();
  for (const CheckSpec& spec : specs) {
    if (spec.command.empty()) {
      out->checks.push_back({spec.name, "", "not_applicable", ""});
      continue;
    }
    say(spec.name + ": " + spec.command);
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
    // A check that cannot run refuses: fail_open is for a session's own
    // completion, not for landing.
    CheckVerdict v = JudgeCheck(spec, id, *result, config.checks.timeout_seconds, /*fail_open=*/false);
    coord.RecordGateEvent("main", "", "check", id, v.event);
    out->checks.push_back({spec.name, spec.command, CheckStatusName(v.status), id});
    if (v.failure && out->passed) {
      out->passed = false;
      out->why = "with " + DriftText(*out) + ", the " + spec.name + " check " +
                 (v.status == CheckStatus::kNotRun ? "could not run" : "fails") + " (odin show " + id + ")";
    }
  }
  rt->FlushLedger();
  return Status::OK();
}

}  // namespace

StatusOr<ViewRecheck> RecheckView(Ledger* ledger, const Workspace& ws, const Config& config, const SessionView& sv,
                                  const UndoPlan& plan, const std::function<void(const std::string&)>& say) {
  ViewRecheck out;
  StatusOr<ViewDrift> drift = FindViewDrift(ledger, sv, ws.root);
  out.drift_known = drift.ok();
  if (drift.ok()) out.drift = std::move(*drift);
  Profile profile = Profile::kAuto;
  (void)ParseProfile(config.profile, &profile);
  auto applicable = [](const std::vector<CheckSpec>& specs) {
    return std::any_of(specs.begin(), specs.end(), [](const CheckSpec& s) { return !s.command.empty(); });
  };
  if (!applicable(ChecksForProfile(profile, config.checks, ws.root)) &&
      !applicable(ChecksForProfile(profile, config.checks, sv.view.tree))) {
    out.why = "no check is configured or detected to judge it";
  } else {
    // The workspace as it is now, and on it what landing would write.
    ASSIGN_OR_RETURN(View copy, MakeView(ws, static_cast<uint64_t>(config.isolation_max_view_mb) << 20));
    Scratch scratch{ws.state_dir, copy.id};
    RETURN_IF_ERROR(LandPlanIn(copy.tree, ws.root, plan));
    std::vector<CheckSpec> specs = ChecksForProfile(profile, config.checks, copy.tree);
    RETURN_IF_ERROR(RunChecks(ViewWorkspace(ws, copy), config, sv, specs, say, &out));
    if (out.passed) out.why = "with " + DriftText(out) + ", the checks pass";
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
