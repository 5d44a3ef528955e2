// The tree's first look: the change tracker's reference (and the protected
// paths' index) taken once per session; and, where the tracker has no
// watches, the later looks that find what changed outside Odin. In an
// agent's session in edit mode it runs on a thread of its own while the model thinks (ModelRequestStarted,
// then the next Poll that may wait); the first call that may write joins it
// (EnterLane, StartTracking), and so does a write made on the coordinator's
// side (RecordFileToolWrite). Reads never wait for it. Without watches
// (the limit reached, coverage lost), each look is a walk of the whole
// tree: after a command, the next one is made the same way, on a thread
// while the model thinks, instead of at the next command's start.

#include "workspace/change_tracker.h"
#include "coordinator/coordinator.h"
#include "workspace/protected_paths.h"
#include "workspace/git_ignore.h"
#include "tools/workspace_path.h"
#include "workspace/overlay_changes.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace odin {

std::unique_ptr<ChangeTracker> Coordinator::NewTracker() const {
  ChangeTrackerOptions o;
  o.image_cap_bytes = o_.image_cap_bytes;
  o.images_total_bytes = o_.images_per_command_bytes;
  if (o_.session_kind == "exec") {  // odin exec runs one command
    o.watch_from_entries = 5000;
    o.remember_git_index = false;
  }
  return std::make_unique<ChangeTracker>(o_.workspace, GitIgnore::Open(o_.workspace), o);
}

void Coordinator::ModelRequestStarted(Mode mode) {
  look_wanted_ |= mode == Mode::kEdit && o_.track_changes && o_.session_kind != "exec";
  // An edit mode's background commands never serve an ask or plan message.
  if (mode != Mode::kEdit)
    StopBackgroundCommands(mode == Mode::kAsk ? "an ask message started" : "a plan message started");
}

void Coordinator::StartFirstLook() {
  // Not while a write of ours is under way: the look could take it for the
  // tree as it was. (It is still wanted: the next Poll that waits starts it.)
  if (lane_.WriterRunning()) return;
  look_wanted_ = false;
  if (looking_.running()) return;
  if (tracker_) {
    // Without watches a look is a walk of the whole tree: the one a
    // command's start would make is made now, while the model thinks, on
    // the tracker itself (every use of it joins the look: FirstLook).
    if (!later_look_due_ || tracker_->watching()) return;
    tracker_->OnProgress(nullptr);  // the pool is this thread's
    if (!looking_.Start(std::move(tracker_), nullptr)) {
      // No thread: taken back as it was, the look still due.
      tracker_ = looking_.Take().first;
      tracker_->OnProgress([this] { pool_.SendDueHeartbeats(); });
      return;
    }
    later_look_due_ = false;
    later_look_ = true;
    return;
  }
  if (!looking_.Start(NewTracker(), protected_index_ ? nullptr : std::make_unique<ProtectedIndex>(o_.workspace))) {
    looking_.Stop();  // the first command makes it
  }
}

void Coordinator::StopTracking() {
  look_wanted_ = false;
  looking_.Stop();
  // A command still running keeps them: its end looks at what it changed
  // (the tracker's own end releases them).
  if (tracker_ && !lane_.CommandAloneRunning()) tracker_->ReleaseWatches();
}

void Coordinator::FirstLook() {
  // A look at a large tree takes seconds here: the workers go on hearing
  // from the coordinator meanwhile (they take 1.5 s of silence for its end).
  auto heartbeats = [this] { pool_.SendDueHeartbeats(); };
  ChangeSet found;
  if (looking_.running()) {
    auto [tracker, index] = looking_.Take(heartbeats, &found);
    tracker_ = std::move(tracker);
    if (index) protected_index_ = std::move(index);
    tracker_->OnProgress(heartbeats);
  } else {
    tracker_ = NewTracker();
    tracker_->OnProgress(heartbeats);
    tracker_->Rescan();  // the reference
  }
  // A walk of the whole tree: a command's start without watches need not
  // make another (StartTracking). A later look's findings changed by no
  // call of ours (none could write while it ran).
  tree_fresh_ = tracker_->started();
  if (std::exchange(later_look_, false)) {
    RecordExternal("", found, &unshown_external_);
    NoteTrackerCoverage();
  }
  // What the agents read before: a change of it has its bytes before.
  for (auto& [id, agent] : agents_) {
    if (!agent.cache) continue;
    for (const CachedFile* f : agent.cache->Entries()) {
      if (f->path == o_.workspace || !IsInsideDir(f->path, o_.workspace)) continue;
      std::string rel = DisplayPath(f->path, o_.workspace);
      if (!f->full || !f->content_known || !agent.cache->IsFresh(f->path)) continue;
      tracker_->NoteRead(rel, f->sha256, &f->content);
    }
  }
}

void Coordinator::LookWhereItLands(Call& c, const std::string& upper, std::set<std::string>* meanwhile,
                                   std::set<std::string>* looked) {
  // Only the paths the overlay lands on, not the whole tree: what changed
  // there is external, and was changed meanwhile if its ctime says so (the
  // last look may be older than the command's start). A deletion has no
  // ctime to tell when: taken for one meanwhile (at worst a conflict, never
  // a deletion undone).
  ChangeSet external = tracker_->LookAtPaths(UpperPaths(o_.workspace, upper, tracker_->ignore()));
  for (const PathChange& pc : external.changes) {
    (pc.kind == ChangeKind::kDeleted ? meanwhile : looked)->insert(pc.path);
  }
  RecordExternal(c.call.agent_id, external, &c.external);
}

void Coordinator::TakeLandedWithoutWatches(const OverlayApplied& applied) {
  // What landed besides the files NoteWrite took (deletions, directories,
  // links, ignored trees, files written back unchanged), the tracker takes
  // now, at those paths only: the command's, recorded already. The next
  // look is a walk, made while the model thinks.
  std::vector<std::string> own(applied.unchanged.begin(), applied.unchanged.end());
  for (const PathChange& pc : applied.changes.changes) {
    if (!pc.after || pc.after->type != EntryType::kFile || pc.after->sha256.empty()) own.push_back(pc.path);
  }
  for (const auto& [dir, count] : applied.changes.ignored) own.push_back(dir);
  own.insert(own.end(), applied.counted_trees.begin(), applied.counted_trees.end());
  std::sort(own.begin(), own.end());
  tracker_->LookAtPaths(own);
  later_look_due_ = true;
}

}  // namespace odin
