#pragma once
// Undo: puts back what calls changed, from their mutation records and the
// before-images the ledger keeps (odin undo).
//
// For each path the calls changed, the target is the state before the
// oldest of their changes to it, and the precondition is the state after
// the newest: a file changed since (by anything) is a conflict, refused
// unless forced. A path whose state before was not kept (no before-image:
// past the caps, or a first change by a command to a file never read) and
// changes git ignores cannot be undone: named, refused unless forced (then
// skipped). It warns when git's HEAD moved since the calls (a checkout, a
// commit): what it puts back may be older than the user expects. Paths are
// checked again before anything is written: inside the workspace, not
// through a symlink, not protected.
//
// The undo is an execution of its own ("Undo"), with mutation records of
// its own (source "undo", with before-images of what it replaced), so an
// undo can be undone; history is never edited.

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ledger/ledger.h"

namespace odin {

class WorkspaceFiles;

// What is at a path now, read through the safe file layer with nothing
// followed on the way or at the end (a file's content up to 1 GiB).
struct PathNow {
  bool exists = false;
  bool is_file = false, is_link = false, is_dir = false;
  std::string content;  // a file's
  std::string sha256;
  std::string link_target;
  int64_t mode = -1;  // permission bits
};
PathNow LookNow(const WorkspaceFiles& files, const std::string& path);

struct UndoStep {
  enum class Action { kWriteFile, kSymlink, kMakeDirectory, kRemove, kRemoveDirectory };
  std::string path;  // absolute
  Action action = Action::kWriteFile;
  std::string content;      // kWriteFile
  int64_t mode = 0644;      // kWriteFile, kMakeDirectory
  std::string link_target;  // kSymlink
  std::string current;      // what is there now (file content), for the diff and the undo's own before-image
  bool current_exists = false;
  bool conflict = false;  // changed since the calls: refused unless forced
  std::string why;        // the conflict, or why it cannot be undone
  bool undoable = true;
  // Already as the step leaves it (an apply taken up after a crash): not
  // written again, recorded with what was there before the first try
  // (base_exists, and a file's base_content when the ledger kept it).
  bool landed = false;
  bool base_exists = false;
  std::optional<std::string> base_content;
};

struct UndoPlan {
  std::vector<std::string> executions;  // the calls undone
  std::vector<UndoStep> steps;
  std::vector<std::string> not_undoable;  // display paths, with why
  std::vector<std::string> conflicts;     // display paths, with why
  std::vector<std::string> warnings;      // git's HEAD moved since the calls: undo goes on
  // What undo leaves as it is without refusing (changes git ignores: build
  // output, caches, made again by the next build), display paths with why.
  std::vector<std::string> left_alone;
  bool empty() const { return steps.empty() && not_undoable.empty(); }
};

// The calls `--last` means: the newest call that changed files and is not
// undone yet.
StatusOr<std::vector<std::string>> LastChangingCall(Ledger* ledger);
// The calls of a message (its id or a unique prefix): those its session
// started between it and the next message of the same agent.
StatusOr<std::vector<std::string>> CallsOfMessage(Ledger* ledger, const std::string& message_id);
// The calls a session started (any agent's) from since_ms through until_ms,
// oldest first; empty when there are none.
StatusOr<std::vector<std::string>> CallsBetween(Ledger* ledger, const std::string& session_id, int64_t since_ms,
                                                int64_t until_ms);

StatusOr<UndoPlan> PlanUndo(Ledger* ledger, const std::string& workspace, const std::vector<std::string>& executions);

// "1 path put back", "3 paths put back".
std::string PathsPutBack(size_t n);

// A unified diff of each step (now -> after the undo), for --dry-run.
std::string RenderUndo(const UndoPlan& plan, const std::string& workspace);

// How ApplySteps records what it did: a session of session_kind, one
// execution of tool with args_json, mutations of source; done_text says
// how many paths landed ("3 paths put back").
struct StepsRecord {
  std::string session_kind;
  std::string tool;
  std::string args_json;
  std::string source;
  std::string (*done_text)(size_t) = nullptr;
};
// Applies steps in a safe order (directories first, shallowest first; files
// and links; the directories to remove, deepest first), each checked again
// through the safe file layer as it is applied, and records them with
// before-images of what they replaced. Returns the execution's id; IOError
// naming what failed (what did land is recorded, under *execution_id when
// given).
StatusOr<std::string> ApplySteps(Ledger* ledger, const std::string& workspace, const std::vector<UndoStep>& steps,
                                 const StepsRecord& record, int64_t now_ms, std::string* execution_id = nullptr);

// Applies the plan and records it. With force, conflicts are overwritten and
// what cannot be undone is skipped; without, either refuses it all (nothing
// written). Returns the Undo execution's id.
StatusOr<std::string> ApplyUndo(Ledger* ledger, const std::string& workspace, const UndoPlan& plan, bool force,
                                int64_t now_ms);

}  // namespace odin
