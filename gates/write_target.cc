#include "gates/write_target.h"

#include <nlohmann/json.hpp>

#include "gates/read_before_edit_gate.h"
#include "tools/workspace_path.h"
#include "workspace/protected_paths.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

WriteTargetVerdict JudgeWriteTarget(const std::string& tool, const v1::ToolInput& input, const WriteTargetContext& o) {
  WriteTargetVerdict v;
  std::string given;
  StatusOr<std::string> path = ResolveWriteTarget(input, o.workspace, &given);
  if (!path.ok()) {
    if (!IsOutsideWorkspace(given, o.workspace)) {
      v.status = path.status();
      v.rejected = false;
      return v;
    }
    // No approval opens it: the sandbox lets no worker write there.
    std::string why = path.status().ToString();
    v.event = GateFinding{"outside_workspace", Dump({{"tool", tool}, {"reason", why}})};
    v.status = Status::PermissionDenied(why, "the file tools write only inside the workspace");
    return v;
  }
  v.path = *path;
  std::string shown = DisplayPath(v.path, o.workspace);
  if (o.init) return v;
  if (std::string reason = ProtectedWriteReason(v.path, o.workspace); !reason.empty()) {
    v.event = GateFinding{"protected_path", Dump({{"tool", tool}, {"path", shown}, {"reason", reason}})};
    v.status = Status::PermissionDenied(shown, reason);
    return v;
  }
  if (o.hold) {
    v.status = o.hold(v.path);
    if (!v.status.ok()) return v;
  }
  if (o.grounded_edits && o.covered) {
    v.status = o.covered(v.path, o.cited);
    json detail = {
        {"tool", tool}, {"path", shown}, {"evidence", o.cited}, {"decision", v.status.ok() ? "allow" : "deny"}};
    if (!v.status.ok()) detail["reason"] = v.status.ToString();
    v.event = GateFinding{"evidence", Dump(detail), /*in_message=*/true};
  }
  return v;
}

}  // namespace odin
