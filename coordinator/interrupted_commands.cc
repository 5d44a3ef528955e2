// A command a crash cut off (the odin process that ran it ended): what it
// wrote waits in its overlay's upper directory, and a resumed session
// applies it through the same steps as a command's end (ApplyCommandOverlay,
// the protected-path check, the mutation records, the validations).
// session/agent_session.cc decides when (docs/sessions.md).

#include <sys/file.h>

#include <chrono>
#include <optional>
#include <thread>

#include "base/file_util.h"
#include "coordinator/coordinator.h"
#include "workspace/protected_paths.h"
#include "workspace/overlay_changes.h"
#include "odin/v1/worker.pb.h"
#include "sandbox/workspace_overlay.h"
#include "tools/exec_command.h"

namespace odin {

bool Coordinator::ApplyInterruptedCommand(const ExecutionStart& start, CallHandlers handlers) {
  const std::string& id = start.execution_id;
  std::string base = JoinPath(CommandOverlayRoot(StateDir()), id);
  std::optional<CallMode> mode = ParseCallMode(start.mode);
  // The strict profile's holds need the evidence of the turn, gone with
  // the process: what such a command wrote stays where it is.
  if (!IsDirectory(base + "/u") || !mode || o_.grounded_edits || ledger_ == nullptr) return false;
  // Held by a live worker (shared, from its mkdir on): not ours to apply.
  // Tried a few times: odin doctor's look holds it for a moment.
  StatusOr<UniqueFd> lock = LockOverlayDir(base, /*exclusive=*/true);
  for (int i = 0; i < 10 && !lock.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lock = LockOverlayDir(base, /*exclusive=*/true);
  }
  if (!lock.ok()) return false;
  // Shared from now on, as a live command's: ApplyCommandOverlay holds it
  // so until the directories are gone.
  if (flock(lock->get(), LOCK_SH) != 0) return false;
  Call c;
  c.call.execution_id = id;
  c.call.agent_id = start.agent_id;
  c.call.tool = start.tool;
  c.call.mode = mode;
  c.request.policy = WorkerPolicy::kWritable;
  c.tracked = true;
  c.started = true;
  c.handlers = std::move(handlers);
  // What changed in the workspace since it started is a conflict.
  c.dispatched_wall_ns = start.started_at_ms * 1'000'000;
  // The protected paths as they are now (as they were when it started,
  // unless changed since): what it made of them is put back, as at a
  // command's end, whatever their names (a git-like layout).
  if (!protected_index_) protected_index_ = std::make_unique<ProtectedIndex>(o_.workspace);
  bool refreshed = RefreshProtectedIndex(c);
  if (const WorkspaceFiles* ws = WorkspaceLayer()) {
    c.protected_before = std::make_unique<ProtectedSnapshot>(SnapshotProtected(*ws, protected_index_.get(), refreshed));
  }
  OverlayApplied applied = ApplyCommandOverlay(c);
  v1::ToolResult result;
  result.set_execution_id(id);
  result.set_status(v1::TOOL_STATUS_ERROR);
  result.set_changes_tracked(!applied.changes.truncated);
  std::optional<v1::ToolResult> amended = result;
  EraseChangesUnder(PutBackProtected(c, result, &amended), &applied.changes);
  result = std::move(*amended);
  NoteOverlayOutcome(c, applied, &result);
  std::vector<ChangedFile> changed = RecordChanges(
      id, c.call.agent_id, c.handler() == ToolHandler::kHook ? "hook" : "command", applied.changes, &result);
  // Validated as its end would have had them: the session blocks on what
  // they broke.
  if (!changed.empty() && o_.validation.enabled) {
    ValidateCommandChanges(std::move(c), result, Status::OK(), changed);
  } else {
    Deliver(c, result, Status::OK());
  }
  return true;
}

}  // namespace odin
