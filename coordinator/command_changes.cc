// Every change is a mutation: what commands that can write change in the
// workspace, recorded, staled, validated and reported like a file tool's
// write (the coordinator's side; the overlay's upper directory, or the
// ChangeTracker without it, finds the changes).
// Long file: the writers' lane, the overlay's apply and the change records
// are one mechanism over the Coordinator's state, read together.
//
// Over the overlay, a command's change set is its upper directory, and
// such commands run side by side in the writers' lane (what changed after
// one started is a conflict for it). Without, the tracker looks at the tree
// when the command starts and when it ends, and the command runs alone
// (no other command that can write, no file-tool write beside it), so what
// changed in between is its own. What changed while no call of ours could
// write is an external change: looked for at every call's boundary,
// recorded as such, never charged to a call.

#include <sys/stat.h>
#include <time.h>

#include <cstring>

#include <algorithm>
#include <set>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_holds.h"
#include "workspace/protected_paths.h"
#include "workspace/git_head.h"
#include "workspace/git_ignore.h"
#include "workspace/command_landing.h"
#include "workspace/overlay_changes.h"
#include "sandbox/workspace_overlay.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

// Changed files bigger than this are recorded but not validated.
constexpr int64_t kMaxValidatedBytes = 4 << 20;

// What an entry holds, for the workspace's digest (change_digest.h).
std::string ContentToken(const std::optional<EntryState>& state) {
  if (!state) return ChangeDigest::kAbsent;
  switch (state->type) {
    case EntryType::kFile:
      if (state->sha256.empty()) return "";
      return (state->mode & 0111) != 0 ? state->sha256 + " x" : state->sha256;
    case EntryType::kSymlink: return state->link_target.empty() ? "" : "link " + state->link_target;
    case EntryType::kDirectory: return "directory";
    case EntryType::kOther: break;
  }
  return "";
}

// The newest writes other Odin sessions made in this workspace (they share
// its ledger), by absolute path: who made a change this session found made
// outside it. Only the newest rows are read; what another session wrote
// long ago is not what just changed.
std::map<std::string, MutationRecord> OtherSessionsWrites(Ledger* ledger, const std::string& session_id) {
  std::map<std::string, MutationRecord> by_path;
  if (ledger == nullptr) return by_path;
  StatusOr<std::vector<MutationRecord>> recent = ledger->ListRecentMutations(512);
  if (!recent.ok()) return by_path;
  for (MutationRecord& m : *recent) {  // newest first
    if (m.session_id == session_id || m.source == "external" || m.change == "ignored") continue;
    by_path.emplace(m.path, std::move(m));
  }
  return by_path;
}

// "another Odin session (ses_..., ex_...)" when the newest write of another
// session left path as it is now, else "".
std::string OtherSessionOf(const std::map<std::string, MutationRecord>& writes, const std::string& path,
                           const std::string& sha256_now) {
  auto w = writes.find(path);
  if (w == writes.end() || w->second.after_sha256 != sha256_now) return "";
  return "another Odin session (" + w->second.session_id +
         (w->second.execution_id.empty() ? "" : ", " + w->second.execution_id) + ")";
}

// The path relative to the workspace ("" for the workspace and what is outside).
std::string RelativeTo(const std::string& path, const std::string& workspace) {
  return path != workspace && IsInsideDir(path, workspace) ? DisplayPath(path, workspace) : "";
}

}  // namespace

bool Coordinator::TracksChanges(const Call& c) const { return o_.track_changes && CanWriteWorkspace(c); }

bool Coordinator::CanWriteWorkspace(const Call& c) const {
  // (A command in the read-only view cannot: the kernel says so.)
  if (c.handler() == ToolHandler::kCommand)
    return (c.request.policy == WorkerPolicy::kWritable || c.request.policy == WorkerPolicy::kBackground) &&
           !c.request.read_only_view;
  // A writable MCP server's tools, and, in edit mode, an unsandboxed one's.
  if (c.request.policy == WorkerPolicy::kMcpWritable) return true;
  if (c.request.policy == WorkerPolicy::kMcpHost) {
    return c.call.mode && (*c.call.mode == CallMode::kEdit || *c.call.mode == CallMode::kExec);
  }
  if (c.handler() != ToolHandler::kHook) return false;
  // An unsandboxed hook can write anywhere; in ask and plan mode what it
  // changes is found as external, like an editor's save.
  return c.request.policy == WorkerPolicy::kHookWritable ||
         (c.request.policy == WorkerPolicy::kHookHost && c.call.mode &&
          (*c.call.mode == CallMode::kEdit || *c.call.mode == CallMode::kExec));
}

void Coordinator::StartTracking(Call& c) {
  c.tracked = true;
  if (!tracker_) {
    // odin exec's one command over the overlay: its change set is its upper
    // directory, what changed meanwhile shows in ctimes: no look needed.
    if (o_.session_kind == "exec" && o_.overlay_commands && capabilities_.overlay_not_lost()) {
      first_look_deferred_ = true;
      return;
    }
    FirstLook();
    return;
  }
  // A later look finds what changed since the last call by no call of ours
  // (the lane holds no other writer now). Without watches it is a walk of
  // the whole tree, made while the model thought (StartFirstLook) if it
  // could be: what changed since is found at the paths this command lands
  // on (ApplyCommandOverlay) or by the next such look.
  // (What a look on the thread found is told with this call's result.)
  c.external.insert(c.external.end(), unshown_external_.begin(), unshown_external_.end());
  unshown_external_.clear();
  // Only a command over an overlay may skip it: what another call changes
  // is found by looking after it, where an outside change since would be
  // taken for the call's.
  const bool fresh = std::exchange(tree_fresh_, false);
  if (fresh && !tracker_->watching() && SharesLane(c)) return;
  RecordExternal(c.call.agent_id, tracker_->Rescan(), &c.external);
}

void Coordinator::OnWorkerReady(const v1::Hello& hello) {
  // Only a worker whose commands or hooks can write has an overlay to have
  // (a read-only one's, for ask or plan mode or a reading subagent, says
  // nothing of it).
  bool writer = false;
  for (const WorkerPool::WorkerInfo& w : pool_.workers()) {
    // (A background command's worker has none, on purpose.)
    if (w.id == hello.worker_id()) writer = WritesWorkspace(w.policy) && w.policy != WorkerPolicy::kBackground;
  }
  auto offers = [&hello](const char* capability) {
    return std::find(hello.capabilities().begin(), hello.capabilities().end(), capability) !=
           hello.capabilities().end();
  };
  // The read-only view is offered by a tool worker whose commands can write
  // (the pool those commands go to); one that does not offer it turns it
  // off for the session.
  if (hello.kind() == v1::WORKER_KIND_TOOL && writer) {
    WorkerCapabilities::Lost lost = capabilities_.Hello(offers(kOverlayCapability), offers(kReadOnlyViewCapability));
    if (lost.view) {
      spdlog::info("worker {} offers no read-only view: commands that only read run over overlays", hello.worker_id());
    }
    if (lost.overlay) {
      // Its commands write into the workspace itself: the tree must have
      // been looked at before the first of them runs (the pool gives it
      // work only after this returns).
      if (first_look_deferred_ && !tracker_) FirstLook();
      first_look_deferred_ = false;
      // And what the protected files hold, before any command writes them.
      for (auto& [id, call] : calls_) {
        if (call.protected_deferred) SnapshotProtectedFor(call);
      }
    }
  }
  if (on_worker_ready) on_worker_ready(hello);
}

void Coordinator::DetectExternalChanges(const std::string& agent_id) {
  // The first look, once its thread is done, is the reference from here.
  if (!tracker_ && looking_.done() && !lane_.WriterRunning()) FirstLook();
  // Only while no call of ours can be writing, and only while a look is
  // cheap (the watches hold): a full look waits for a command's start.
  if (tracker_ && tracker_->watching() && !lane_.WriterRunning()) RecordExternal(agent_id, tracker_->Rescan(), nullptr);
  // What any look since found of the watches (said at a call boundary).
  NoteTrackerCoverage();
}

void Coordinator::NoteTrackerCoverage() {
  if (!tracker_ || tracker_->unwatched() == coverage_lost_) return;
  coverage_lost_ = tracker_->unwatched();
  if (coverage_lost_.empty()) return;
  // Said once per cause: in the log, the ledger and the report.
  spdlog::warn(
      "changes made outside Odin are not watched in this workspace ({}): the whole tree is looked at "
      "between calls, while the model thinks",
      coverage_lost_);
  RecordGateEvent("", "", "external_changes_unwatched", "",
                  json({{"why", coverage_lost_}}).dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string Coordinator::WorkspaceDigest() {
  DetectExternalChanges("");
  return digest_.Value();
}

void Coordinator::RecordExternal(const std::string& agent_id, const ChangeSet& external,
                                 std::vector<std::string>* paths) {
  if (external.empty()) return;
  // While background commands run, what no call changed is theirs.
  if (RecordBackgroundChanges(external)) return;
  RecordChanges("", agent_id, "external", external, nullptr);
  if (paths == nullptr) return;
  for (const PathChange& pc : external.changes) paths->push_back(JoinPath(o_.workspace, pc.path));
}

OverlayApplied Coordinator::ApplyCommandOverlay(Call& c) {
  const std::string& id = c.call.execution_id;
  std::string base = JoinPath(CommandOverlayRoot(StateDir()), id);
  // Held (shared) until its directories are gone, as its worker held it
  // until now: a sweep, a resume or doctor's look never finds these writes
  // unheld. The worker holds it still, unless it died (then doctor's look
  // may hold it a moment; without it we go on as before).
  StatusOr<UniqueFd> lock = LockOverlayDir(base, /*exclusive=*/false);
  for (int i = 0; i < 10 && !lock.ok() && lock.status().code() != StatusCode::kNotFound; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock = LockOverlayDir(base, /*exclusive=*/false);
  }
  // A look on the thread (first_look.cc) ends before anything lands: the
  // tracker is its until then.
  if (looking_.running()) FirstLook();
  // What changed in the workspace while the command ran, by no call of ours
  // (the lane held no other writer): external changes, and where the
  // command's own version would overwrite one, a conflict.
  std::set<std::string> meanwhile;
  std::vector<std::string> meanwhile_dirs;  // ignored roots: everything below
  // Without watches, only the paths it lands on are looked at, not the
  // whole tree; what changed there is external, and was changed meanwhile
  // if its ctime says so (the look may be older than the command's start).
  const bool watched = tracker_ && tracker_->watching();
  std::set<std::string> looked;  // what that look found: recorded now, yet maybe from before the start
  if (tracker_ && c.tracked && !watched) {
    LookWhereItLands(c, base + "/u", &meanwhile, &looked);
  } else if (tracker_ && c.tracked) {
    ChangeSet external = tracker_->Rescan();
    for (const PathChange& pc : external.changes) meanwhile.insert(pc.path);
    for (const auto& [dir, count] : external.ignored) meanwhile_dirs.push_back(dir);
    RecordExternal(c.call.agent_id, external, &c.external);
  }
  OverlayApplyOptions o;
  // What changed after the command started (start_change: 0 for a cut-off
  // command a resume applies; it started in the process before).
  const uint64_t start = c.start_change;
  // When it started, for the ctime rule (without a tracker, or one without
  // watches). A file's ctime comes from the kernel's coarse clock (never
  // behind the coarse time read at the dispatch, for a change after it):
  // what was changed at or after that time counts. The price is a change in
  // the same tick before the dispatch (a few ms), taken for one meanwhile.
  // A resumed command's start is known to the millisecond only: a margin.
  const int64_t started_ns =
      c.dispatched_coarse_ns != 0 ? c.dispatched_coarse_ns - 1 : c.dispatched_wall_ns - 10'000'000;
  auto under = [](const std::string& rel, const std::string& d) {
    return rel == d || (rel.size() > d.size() && rel.compare(0, d.size(), d) == 0 && rel[d.size()] == '/');
  };
  if (tracker_ && c.tracked) {
    // Also what landed from other commands, or was found changed, since it
    // started (commands over overlays run side by side): by path, below a
    // tree that landed whole, and under ignored directories.
    o.gone_meanwhile = [&, start](const std::string& rel) {
      return meanwhile.count(rel) != 0 || (looked.count(rel) == 0 && changes_.PathSince(rel, start));
    };
    o.changed_meanwhile = [&, start](const std::string& rel) {
      if (meanwhile.count(rel) != 0 || (looked.count(rel) == 0 && changes_.ChangedSince(rel, start))) return true;
      for (const std::string& d : meanwhile_dirs) {
        if (under(rel, d)) return true;
      }
      return false;
    };
    o.ctime_too = !watched;
    o.started_ns = started_ns;
  } else {
    // No tracker to ask: ctimes after the dispatch (less a margin for the
    // file system's coarse clock) count. A path gone is one whose deletion
    // this process applied since (a resume applies the commands a crash
    // cut off one after the other: one's deletion is not undone by the
    // next's copy).
    o.started_ns = started_ns;
    o.gone_meanwhile = [&, start](const std::string& rel) { return changes_.PathSince(rel, start); };
  }
  CommandLandingRules rules(o_.workspace, WorkspaceLayer(), base + "/u");
  o.must_not_land = [&rules](const std::string& rel) { return rules.MustNotLand(rel); };
  std::unique_ptr<GitIgnore> own_ignore;
  if (tracker_) {
    o.ignore = tracker_->ignore();
  } else {
    own_ignore = GitIgnore::Open(o_.workspace);
    o.ignore = own_ignore.get();
  }
  o.image_cap_bytes = o_.image_cap_bytes;
  if (tracker_) {
    ChangeTracker* tracker = tracker_.get();
    o.known_sha256 = [tracker](const std::string& rel, const struct stat& st) { return tracker->KnownSha256(rel, st); };
  }
  o.conflicts_dir = JoinPath(StateDir(), "conflicts/" + id);
  o.discarded_dir = JoinPath(StateDir(), "displaced/" + id);
  OverlayApplied applied = ApplyOverlayUpper(o_.workspace, base + "/u", o);
  // What it changed that is counted, not recorded (.git, ignored paths),
  // is numbered too, for the commands beside it (its mutations are, as
  // they are recorded).
  for (const std::string& p : applied.counted_paths) changes_.Path(p);
  // Its mutations are numbered as they are recorded, but a hold or the
  // protected check may put some back first: changed twice, numbered now.
  for (const PathChange& pc : applied.changes.changes) changes_.Path(pc.path);
  for (const std::string& t : applied.counted_trees) changes_.Tree(t);
  // What is left (the work directory, empty ones) goes on a thread of its
  // own: removing what the overlay used costs milliseconds the call need
  // not wait for.
  // (The coordinator waits for it before it goes: an exit would leave it.)
  auto held = std::make_shared<UniqueFd>(lock.ok() ? std::move(*lock) : UniqueFd());
  removals_.Run([base, held] { RemoveWorkspaceOverlayDirs(base); });
  // The tracker sees what landed; it is the command's, not external. What
  // else it sees (a write in the instant since) is external.
  if (tracker_ && c.tracked) {
    // (Also what it wrote back unchanged: new inodes, the same bytes.)
    std::set<std::string> landed(applied.unchanged.begin(), applied.unchanged.end());
    for (const PathChange& pc : applied.changes.changes) {
      // Its hash is known: the tracker need not read the file again. (A
      // directory new to it is still read whole.) A file that no longer
      // looks as it landed was written since: what the look finds there
      // is external.
      bool as_landed = true;
      if (pc.after && pc.after->type == EntryType::kFile && !pc.after->sha256.empty()) {
        as_landed = tracker_->NoteWrite(pc.path, pc.after->sha256, pc.after_content ? &*pc.after_content : nullptr,
                                        ChangeTracker::Written{pc.after->size, pc.after->mtime_ns, pc.after->ino});
      }
      if (as_landed) landed.insert(pc.path);
    }
    if (!watched) {
      TakeLandedWithoutWatches(applied);
      return applied;
    }
    ChangeSet after = tracker_->Rescan();
    ChangeSet rest;
    for (PathChange& pc : after.changes) {
      if (landed.count(pc.path) == 0) rest.changes.push_back(std::move(pc));
    }
    for (const auto& [dir, count] : after.ignored) {
      if (applied.changes.ignored.count(dir) == 0) rest.ignored[dir] = count;
    }
    RecordExternal(c.call.agent_id, rest, &c.external);
  }
  return applied;
}

void Coordinator::NoteOverlayOutcome(const Call& c, const OverlayApplied& a, v1::ToolResult* result) {
  if (a.conflicts.empty() && a.discarded.empty() && a.failed.empty()) return;
  auto list = [](const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
    return out;
  };
  const std::string& id = c.call.execution_id;
  std::string note = "\n[odin]";
  if (!a.discarded.empty()) {
    std::string kept = ShownStatePath("displaced/" + id);
    RecordGateEvent(
        c.call.agent_id, "", "protected_path_discarded", id,
        json({{"paths", a.discarded}, {"kept_in", kept}}).dump(-1, ' ', false, json::error_handler_t::replace));
    note +=
        " the command's changes to protected paths (git's configuration, a .git, Odin's settings or "
        "instructions) did not land (what it wrote is in " +
        kept + "): " + list(a.discarded) + ";";
  }
  if (!a.conflicts.empty()) {
    std::string kept = ShownStatePath("conflicts/" + id);
    // Who changed them: another Odin session, when its ledger rows say so.
    std::map<std::string, MutationRecord> others = OtherSessionsWrites(ledger_, session_id_);
    std::set<std::string> sessions;
    json by = json::object();
    for (const std::string& p : a.conflicts) {
      auto w = others.find(JoinPath(o_.workspace, p));
      if (w == others.end()) continue;
      by[p] = {{"session_id", w->second.session_id}, {"execution_id", w->second.execution_id}};
      sessions.insert(w->second.session_id);
    }
    RecordGateEvent(c.call.agent_id, "", "overlay_conflict", id,
                    json({{"paths", a.conflicts}, {"kept_in", kept}, {"by", by}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    std::string who = "something else";
    if (!sessions.empty()) {
      who = sessions.size() == 1 ? "another Odin session (" + *sessions.begin() + ")" : "other Odin sessions (";
      if (sessions.size() > 1) {
        for (const std::string& sid : sessions) who += sid + (sid == *sessions.rbegin() ? ")" : ", ");
      }
    }
    note += " changed by " + who + " while the command ran, so the command's version did not land (it is in " + kept +
            "): " + list(a.conflicts) + ";";
  }
  if (!a.failed.empty()) {
    spdlog::warn("{}: changes that could not be applied: {}", id, list(a.failed));
    note += " could not be applied: " + list(a.failed) + ";";
  }
  note.back() = '\n';
  result->set_output_tail(result->output_tail() + note);
  result->set_output_total_bytes(result->output_total_bytes() + note.size());
}

bool Coordinator::RefreshProtectedIndex(const Call& c) {
  // The tracker heard from the kernel what changed since the index was last
  // brought up to date: only that is read again. Without its word (no
  // tracking, no watches, an overflow), the index looks for itself.
  if (!c.tracked || !tracker_) return false;
  std::set<std::string> changed;
  if (tracker_->TakeReported(&changed)) {
    protected_index_->RefreshPaths(changed);
  } else {
    protected_index_->Refresh();
  }
  return true;
}

bool Coordinator::ReadOnlyViewUsable(const Call& c) const {
  // Where the command could write (edit mode, a subagent's too) and its
  // changes are tracked, on workers of this machine that said they have
  // the overlay, whose namespaces the view shares; odin exec's command is
  // not judged by the rules, so never judged read-only either.
  return c.handler() == ToolHandler::kCommand && c.request.policy == WorkerPolicy::kWritable && o_.track_changes &&
         o_.overlay_commands && capabilities_.overlays() && capabilities_.view() && o_.pool.hosts == nullptr;
}

bool Coordinator::UsesLane(const Call& c) const {
  // A background command runs beside everything: what it writes is found
  // at call boundaries (background_commands.cc).
  return o_.track_changes && !c.background && (TracksChanges(c) || !c.write_path.empty());
}

bool Coordinator::SharesLane(const Call& c) const {
  // Only where every command that can write gets an overlay: one that
  // writes into the workspace itself (no overlay on some worker, a remote
  // host) is found by looking at the tree, which needs it alone. Until a
  // writable worker's Hello has said it has the overlay, commands run alone.
  return c.handler() == ToolHandler::kCommand && TracksChanges(c) && o_.overlay_commands && capabilities_.overlays() &&
         o_.pool.hosts == nullptr;
}

WritersLane::Caller Coordinator::LaneCaller(const Call& c) const {
  WritersLane::Kind kind = !TracksChanges(c) ? WritersLane::Kind::kWrite  // a file-tool write
                           : SharesLane(c)   ? WritersLane::Kind::kSharedCommand
                                             : WritersLane::Kind::kCommand;
  return {kind, c.call.agent_id};
}

void Coordinator::ForgetOldChangeNumbers() {
  uint64_t oldest = changes_.now();
  for (const auto& [id, c] : calls_) {
    if (c.dispatched_wall_ns != 0) oldest = std::min(oldest, c.start_change);
  }
  changes_.ForgetUpTo(oldest);
}

void Coordinator::EnterLane(Call& c) {
  // A write during the first look could be taken for the tree as it was.
  if (looking_.running()) FirstLook();
  WritersLane::Caller caller = LaneCaller(c);
  // Its worker runs it over an overlay or not at all (one that says it has
  // none refuses it): written into the workspace itself, beside other
  // commands, its changes could not be told from theirs.
  if (caller.kind == WritersLane::Kind::kSharedCommand) c.request.needs_overlay = true;
  lane_.Enter(c.call.execution_id, caller);
}

void Coordinator::LeaveLane(Call& c) {
  if (lane_.Leave(c.call.execution_id)) PumpLane();
}

void Coordinator::PumpLane() {
  auto lookup = [this](const std::string& id) -> std::optional<WritersLane::Caller> {
    auto it = calls_.find(id);
    if (it == calls_.end()) return std::nullopt;
    return LaneCaller(it->second);
  };
  // DispatchNow may end the call at once, and pump again.
  while (std::optional<std::string> id = lane_.Next(lookup)) DispatchNow(calls_[*id]);
}

std::vector<Coordinator::ChangedFile> Coordinator::RecordChanges(const std::string& execution_id,
                                                                 const std::string& agent_id, const char* source,
                                                                 const ChangeSet& changes, v1::ToolResult* result) {
  std::vector<MutationRecord> records;
  std::vector<BeforeImage> images;
  std::vector<ChangedFile> files;
  int64_t images_bytes = 0;
  int64_t now = clock_->WallMillis();
  // Under ignored directories the tracker knows only which directory; a
  // command's are numbered by path (ApplyCommandOverlay).
  // An external change another Odin session made (its ledger row says it
  // left the path so) is named as that session's.
  std::map<std::string, MutationRecord> others;
  if (strcmp(source, "external") == 0) {
    for (const auto& [dir, count] : changes.ignored) changes_.IgnoredDir(dir);
    if (!changes.changes.empty()) others = OtherSessionsWrites(ledger_, session_id_);
  }
  // (Changes under ignored directories are not in the digest: a test run
  // rewrites its caches each time, and that is no progress.)
  for (const PathChange& change : changes.changes) {
    changes_.Path(change.path);
    digest_.Note(change.path, ContentToken(change.before), ContentToken(change.after));
    MarkIndexDirty(change.path);
    std::string path = JoinPath(o_.workspace, change.path);
    MutationRecord m;
    m.id = NewId("mut");
    m.session_id = session_id_;
    m.agent_id = execution_id.empty() ? "" : agent_id;
    m.execution_id = execution_id;
    m.source = source;
    m.path = path;
    m.change = ChangeKindName(change.kind);
    const EntryState& state = change.after ? *change.after : *change.before;
    m.file_type = EntryTypeName(state.type);
    if (change.before) {
      m.before_sha256 = change.before->sha256;
      m.before_size = change.before->size;
      m.before_mode = change.before->mode;
    }
    if (change.after) {
      m.after_sha256 = change.after->sha256;
      m.after_size = change.after->size;
      m.after_mode = change.after->mode;
    }
    m.link_target = state.link_target;
    m.created_at_ms = now;
    std::string by_other = others.empty() ? "" : OtherSessionOf(others, path, m.after_sha256);
    // Undoable when what was there can be put back: nothing (a creation), a
    // directory or a symlink (its metadata says all), or bytes kept.
    bool image = false;
    if (change.before && change.before->type == EntryType::kFile && change.before_content) {
      int64_t size = static_cast<int64_t>(change.before_content->size());
      if (images_bytes + size <= o_.images_per_command_bytes) {
        images_bytes += size;
        image = true;
        if (m.before_sha256.empty()) m.before_sha256 = Sha256Hex(*change.before_content);
        images.push_back({m.before_sha256, *change.before_content});
      }
    }
    m.undoable = !change.before || change.before->type == EntryType::kDirectory ||
                 (change.before->type == EntryType::kSymlink && !change.before->link_target.empty()) || image;
    if (!m.undoable) m.note = "not undoable: its content before was not kept";
    if (!by_other.empty()) m.note = "by " + by_other + (m.note.empty() ? "" : "; " + m.note);

    // A regular file there now: its +/- lines counted when the bytes before
    // are known, and validated when a validator covers it. One too big for
    // a language server, or that changed again while it was being read, is
    // not validated: the checks must vouch for it (not_validated).
    if (change.after && change.after->type == EntryType::kFile) {
      bool covered = validation_.Covers(path);
      ChangedFile f;
      f.path = path;
      f.existed = change.before && change.before->type == EntryType::kFile;
      if (f.existed && change.before_content) f.before = *change.before_content;
      if (!f.existed) f.before = std::string();
      if (change.after->size <= kMaxValidatedBytes) {
        // The tracker hands over the bytes it hashed when they were small
        // enough to keep; larger ones are read again (and must still be what
        // it hashed).
        StatusOr<std::string> content =
            change.after_content ? StatusOr<std::string>(*change.after_content)
            : WorkspaceLayer()   ? WorkspaceLayer()->ReadFile(path, kMaxValidatedBytes, WorkspaceFiles::Links::kNone)
                                 : Status::Unavailable(path, "the workspace cannot be opened");
        if (content.ok() && (change.after_content || Sha256Hex(*content) == change.after->sha256)) {
          if (f.before) {
            DiffResult diff = UnifiedDiff(*f.before, *content, DisplayPath(path, o_.workspace));
            m.lines_added = diff.added;
            m.lines_removed = diff.removed;
          }
          f.content = std::move(*content);
        } else {
          f.unvalidatable = true;
        }
      } else {
        f.unvalidatable = true;
      }
      if (covered) files.push_back(std::move(f));
    }
    if (result != nullptr) {
      v1::FileChange* fc = result->add_changes();
      fc->set_path(path);
      fc->set_change(m.change);
      fc->set_file_type(m.file_type);
      fc->set_sha256_before(m.before_sha256);
      fc->set_sha256_after(m.after_sha256);
      fc->set_undoable(m.undoable);
    }
    // No agent may edit it on the strength of an earlier Read.
    for (auto& [id, agent] : agents_) {
      if (agent.cache) {
        agent.cache->MarkChanged(path, !execution_id.empty() ? execution_id
                                       : by_other.empty()    ? "a change outside Odin"
                                                             : by_other);
      }
    }
    records.push_back(std::move(m));
  }
  for (const auto& [dir, count] : changes.ignored) {
    MutationRecord m;
    m.id = NewId("mut");
    m.session_id = session_id_;
    m.agent_id = execution_id.empty() ? "" : agent_id;
    m.execution_id = execution_id;
    m.source = source;
    m.path = JoinPath(o_.workspace, dir);
    m.change = "ignored";
    m.file_type = "other";
    m.entries = count;
    m.note = "changes under a path git ignores: counted, not validated, not undoable";
    m.created_at_ms = now;
    records.push_back(std::move(m));
    if (result != nullptr) {
      v1::IgnoredChanges* ic = result->add_ignored_changes();
      ic->set_path(dir);
      ic->set_entries(static_cast<uint64_t>(count));
    }
  }
  if (ledger_ != nullptr) {
    bool any = !records.empty();
    Status s = ledger_->AddMutations(std::move(records), images);
    LogLedgerWriteFailure(s);
    if (any && !execution_id.empty()) RecordGitHead(agent_id, execution_id);
  }
  return files;
}

void Coordinator::RecordGitHead(const std::string& agent_id, const std::string& execution_id) {
  // Where git's HEAD was once the call's changes landed: undo warns when it
  // has moved since. Straight to the ledger, not the event stream.
  GitHead head = ReadGitHead(o_.workspace);
  if (head.commit.empty() && head.ref.empty()) return;
  AppendGateEvent({NewId("gate"), session_id_, agent_id, "", "git_head", execution_id,
                   json({{"commit", head.commit}, {"ref", head.ref}}).dump(), clock_->WallMillis()});
}

void Coordinator::NoteReadForTracking(const v1::FileSnapshot& read) {
  // A whole file read: a later change of it has its bytes before.
  std::string rel = RelativeTo(read.path(), o_.workspace);
  if (!tracker_ || !read.full() || rel.empty()) return;
  tracker_->NoteRead(rel, read.sha256(), &read.content());
}

void Coordinator::RecordFileToolWrite(const Call& c, const v1::ToolResult& r) {
  const v1::FileSnapshot& written = r.file_written();
  std::string path = written.path();
  bool existed = !r.sha256_before().empty();
  if (std::string rel = RelativeTo(path, o_.workspace); !rel.empty()) {
    changes_.Path(rel);
    digest_.Note(rel, existed ? r.sha256_before() : ChangeDigest::kAbsent, written.sha256());
  }
  MutationRecord m;
  m.id = NewId("mut");
  m.session_id = session_id_;
  m.agent_id = c.call.agent_id;
  m.execution_id = r.execution_id();
  m.source = "file_tool";
  m.path = path;
  m.change = existed ? "modified" : "created";
  m.file_type = "file";
  m.before_sha256 = r.sha256_before();
  m.before_size = existed ? static_cast<int64_t>(r.content_before().size()) : -1;
  m.after_sha256 = written.sha256();
  m.after_size = static_cast<int64_t>(written.size_bytes());
  m.created_at_ms = clock_->WallMillis();
  json out = ParseJson(r.output_json());
  if (out.is_object()) {
    m.lines_added = out.value("lines_added", -1);
    m.lines_removed = out.value("lines_removed", -1);
  }
  std::vector<BeforeImage> images;
  bool image = existed && static_cast<int64_t>(r.content_before().size()) <= o_.image_cap_bytes;
  if (image) images.push_back({r.sha256_before(), r.content_before()});
  m.undoable = !existed || image;
  if (!m.undoable) m.note = "not undoable: its content before is past the cap";
  if (ledger_ != nullptr) {
    Status s = ledger_->AddMutations({m}, images);
    LogLedgerWriteFailure(s);
    RecordGitHead(c.call.agent_id, r.execution_id());
  }
  MarkIndexDirty(path);
  // The tracker learns of it, so the next command is not charged with it.
  // A write made here (InitTool's) met no lane: a first look under way ends
  // first, and the file is looked at after it.
  if (looking_.running()) FirstLook();
  std::string rel = RelativeTo(path, o_.workspace);
  if (tracker_ && !rel.empty()) {
    tracker_->NoteWrite(rel, written.sha256(), &written.content(),
                        ChangeTracker::Written{static_cast<int64_t>(written.size_bytes()), written.mtime_ns(), 0});
  }
}

void Coordinator::ValidateCommandChanges(Call command, v1::ToolResult result, const Status& recorded,
                                         std::vector<ChangedFile> files) {
  std::string id = command.call.execution_id;
  // Too big to validate, or changed again while being read: the checks
  // vouch for those.
  auto unvalidatable =
      std::stable_partition(files.begin(), files.end(), [](const ChangedFile& f) { return !f.unvalidatable; });
  for (auto it = unvalidatable; it != files.end(); ++it) result.add_not_validated(it->path);
  files.erase(unvalidatable, files.end());
  size_t limit = o_.validation.max_files_per_command;
  if (files.size() > limit) {
    // The rest are not validated: the session cannot complete until the
    // checks vouch for them (the convergence gate).
    for (size_t i = limit; i < files.size(); ++i) result.add_not_validated(files[i].path);
    files.resize(limit);
  }
  if (files.empty()) return Deliver(command, result, recorded);
  auto hold = std::make_unique<CommandHold>();
  hold->command = std::move(command);
  hold->result = std::move(result);
  hold->recorded = recorded;
  hold->outstanding = files.size();
  std::string agent = hold->command.call.agent_id;
  std::optional<CallMode> mode = hold->command.call.mode;
  command_holds_[id] = std::move(hold);
  // Every check is counted before the first is submitted: one may end at once.
  for (ChangedFile& f : files) CheckChangedFile(f, agent, mode, id, /*validates_command=*/true);
}

void Coordinator::CheckChangedFile(ChangedFile& f, const std::string& agent, std::optional<CallMode> mode,
                                   const std::string& parent, bool validates_command) {
  validation_.NoteChange(f.path, f.existed, f.before ? &*f.before : nullptr);
  std::string check_id = NewId("ex");
  Call& check = calls_[check_id];
  check.call.execution_id = check_id;
  check.call.tool = kLspCheckTool;
  check.call.arguments_json = json({{"file_path", DisplayPath(f.path, o_.workspace)}}).dump();
  check.call.agent_id = agent;
  check.call.mode = mode;
  check.call.parent_id = parent;
  if (validates_command) check.validates_command = parent;
  SubmitLspCheck(check_id, f.path, std::move(f.content));
}

void Coordinator::FinishCommandCheck(const std::string& command_id, const v1::ToolResult& check) {
  auto it = command_holds_.find(command_id);
  if (it == command_holds_.end()) return;
  CommandHold& hold = *it->second;
  *hold.result.add_command_verdicts() = check.verdict();
  if (--hold.outstanding > 0) return;
  std::unique_ptr<CommandHold> done = std::move(it->second);
  command_holds_.erase(it);
  Deliver(done->command, done->result, done->recorded);
}

}  // namespace odin
