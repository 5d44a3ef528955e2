// A command a crash cut off (the odin process that ran it ended): what it
// wrote waits in its overlay's upper directory, and a resumed session
// applies it through the same steps as a command's end (ApplyCommandOverlay,
// the protected-path check, the mutation records, the validations).
// session/agent_session.cc decides when (docs/sessions.md).

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <optional>

#include "base/file_util.h"
#include "coordinator/coordinator.h"
#include "coordinator/gates/protected_paths.h"
#include "coordinator/overlay_changes.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"

namespace odin {

std::vector<std::string> Coordinator::ApplyInterruptedCommand(const std::string& execution_id, CallHandlers handlers) {
  std::string base = JoinPath(CommandOverlayRoot(o_.workspace), execution_id);
  // The strict profile's holds need the evidence of the turn, gone with
  // the process: what such a command wrote stays where it is.
  if (!IsDirectory(base + "/u") || o_.grounded_edits || ledger_ == nullptr) return {};
  // Held by a live worker (shared, PreparedOverlay): not ours to apply.
  int lock = open(base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
    if (lock >= 0) close(lock);
    return {};
  }
  std::vector<std::string> landed;
  StatusOr<std::vector<ExecutionRow>> rows = ledger_->ListSessionExecutions(session_id_);
  for (const ExecutionRow& row : rows.ok() ? *rows : std::vector<ExecutionRow>{}) {
    std::optional<CallMode> mode = ParseCallMode(row.start.mode);
    if (row.start.execution_id != execution_id || !mode) continue;
    Call c;
    c.call.execution_id = execution_id;
    c.call.agent_id = row.start.agent_id;
    c.call.tool = row.start.tool;
    c.call.mode = mode;
    c.call.policy = WorkerPolicy::kWritable;
    c.tracked = true;
    c.started = true;
    c.handlers = std::move(handlers);
    // What changed in the workspace since it started is a conflict.
    c.dispatched_wall_ns = row.start.started_at_ms * 1'000'000;
    // The protected paths as they are now (as they were when it started,
    // unless changed since): what it made of them is put back, as at a
    // command's end, whatever their names (a git-like layout).
    if (!protected_index_) protected_index_ = std::make_unique<ProtectedIndex>(o_.workspace);
    c.protected_before = std::make_unique<ProtectedSnapshot>(
        SnapshotProtected(o_.workspace, protected_index_.get(), RefreshProtectedIndex(c)));
    OverlayApplied applied = ApplyCommandOverlay(c);
    v1::ToolResult result;
    result.set_execution_id(execution_id);
    result.set_status(v1::TOOL_STATUS_ERROR);
    result.set_changes_tracked(!applied.changes.truncated);
    std::optional<v1::ToolResult> amended = result;
    EraseChangesUnder(PutBackProtected(c, result, &amended), &applied.changes);
    result = std::move(*amended);
    NoteOverlayOutcome(c, applied, &result);
    for (const PathChange& pc : applied.changes.changes) {
      if (!pc.after || pc.after->type != EntryType::kDirectory) landed.push_back(pc.path);
    }
    std::vector<ChangedFile> changed = RecordChanges(
        execution_id, c.call.agent_id, c.call.tool == kHookTool ? "hook" : "command", applied.changes, &result);
    // Validated as its end would have had them: the session blocks on
    // what they broke.
    if (!changed.empty() && o_.validation.enabled) {
      ValidateCommandChanges(std::move(c), result, Status::OK(), changed);
    } else {
      Deliver(c, result, Status::OK());
    }
    break;
  }
  close(lock);
  return landed;
}

}  // namespace odin
