#include "workspace/isolated_views.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include <cerrno>

#include <algorithm>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"
#include "workspace/protected_paths.h"
#include "workspace/workspace_files.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr char kApplyTool[] = "ApplyView";

// A view's id as the ledger may name it: only what NewId makes.
bool ValidViewId(const std::string& id) {
  return id.size() > 5 && id.size() < 64 && id.rfind("view_", 0) == 0 &&
         std::all_of(id.begin(), id.end(), [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A short program of the host's own (cp, du), with a plain environment.
StatusOr<CommandOutput> RunTool(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  o.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  return RunCommand(std::move(o));
}

// Whether all cp complained of is files that went while it copied (a
// build at work in the workspace): the view is of the tree as cp found it.
bool OnlyVanished(const CommandOutput& cp) {
  if (cp.output.empty()) return false;
  size_t start = 0;
  while (start < cp.output.size()) {
    size_t end = cp.output.find('\n', start);
    if (end == std::string::npos) end = cp.output.size();
    std::string line = cp.output.substr(start, end - start);
    bool vanished = line.rfind("cp: cannot stat '", 0) == 0 && line.size() > 28 &&
                    line.compare(line.size() - 28, 28, "': No such file or directory") == 0;
    if (!line.empty() && !vanished) return false;
    start = end + 1;
  }
  return true;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "(no output)" : line;
}

// One end of a path's changes: what was there before the first, or after
// the last.
struct State {
  bool exists = false;
  std::string type;    // file, symlink, directory, other
  std::string sha256;  // a file's, "" when not known
  std::string link_target;
  int64_t mode = -1;
};

State Before(const MutationRecord& first) {
  State s;
  if (first.change == "created") return s;
  s.exists = true;
  s.type = first.file_type;
  s.sha256 = first.before_sha256;
  if (first.change == "deleted") s.link_target = first.link_target;
  s.mode = first.before_mode;
  return s;
}

State After(const MutationRecord& last) {
  State s;
  if (last.change == "deleted") return s;
  s.exists = true;
  s.type = last.file_type;
  s.sha256 = last.after_sha256;
  s.link_target = last.link_target;
  s.mode = last.after_mode;
  return s;
}

bool SameState(const State& a, const State& b) {
  if (a.exists != b.exists) return false;
  if (!a.exists) return true;
  return a.type == b.type && a.sha256 == b.sha256 && (a.type != "symlink" || a.link_target == b.link_target);
}

// Whether what is there now is the state s ("" when it is), else how it
// differs. A file whose hash was not recorded is taken by its type.
std::string Matches(const PathNow& now, const State& s) {
  if (!s.exists) return now.exists ? "it exists" : "";
  if (!now.exists) return "it is gone";
  if (s.type == "file") {
    if (!now.is_file) return "it is no longer a file";
    if (!s.sha256.empty() && now.sha256 != s.sha256) return "its content differs";
  } else if (s.type == "symlink") {
    if (!now.is_link) return "it is no longer a link";
    if (!s.link_target.empty() && now.link_target != s.link_target) return "the link differs";
  } else if (s.type == "directory") {
    if (!now.is_dir) return "it is no longer a directory";
  }
  return "";
}

std::string PathsLanded(size_t n) { return std::to_string(n) + (n == 1 ? " path" : " paths") + " landed"; }

}  // namespace

std::string ViewsDir(const std::string& state_dir) { return JoinPath(state_dir, "views"); }

View ViewNamed(const std::string& state_dir, const std::string& id) {
  View v;
  v.id = id;
  v.dir = JoinPath(ViewsDir(state_dir), id);
  v.tree = JoinPath(v.dir, "tree");
  return v;
}

namespace {

// The apparent bytes of path, "du -s -b", with these --exclude patterns.
// What du says path takes: its files' sizes (apparent) or the blocks they
// hold, without what matches excludes.
StatusOr<uint64_t> Du(const std::string& path, bool apparent, const std::vector<std::string>& excludes = {}) {
  std::vector<std::string> argv = {"du", "-s", apparent ? "-b" : "-B1"};
  for (const std::string& e : excludes) argv.push_back("--exclude=" + e);
  argv.insert(argv.end(), {"--", path});
  StatusOr<CommandOutput> du = RunTool(argv);
  if (!du.ok()) return du.status().WithContext("cannot measure " + path);
  if (du->exit_code != 0) return Status::IOError("du " + path, FirstLine(du->output));
  return std::strtoull(du->output.c_str(), nullptr, 10);
}

// cp -a --reflink=auto of each of names (below from) into into/.
Status CopyInto(const std::string& from, const std::vector<std::string>& names, const std::string& into) {
  if (names.empty()) return Status::OK();
  std::vector<std::string> argv = {"cp", "-a", "--reflink=auto", "--"};
  for (const std::string& name : names) argv.push_back(JoinPath(from, name));
  argv.push_back(into + "/");
  StatusOr<CommandOutput> cp = RunTool(argv);
  if (!cp.ok()) return cp.status();
  if (cp->exit_code != 0 && !OnlyVanished(*cp)) return Status::IOError("cp", FirstLine(cp->output));
  return Status::OK();
}

}  // namespace

int64_t DiskBytes(const std::string& path) {
  StatusOr<uint64_t> bytes = Du(path, /*apparent=*/false);
  return bytes.ok() ? static_cast<int64_t>(*bytes) : -1;
}

StatusOr<View> MakeView(const Workspace& ws, uint64_t max_bytes) {
  ASSIGN_OR_RETURN(WorkspaceFiles root, WorkspaceFiles::Open(ws.root));
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(ws.state_dir));
  // Root on another user's workspace runs commands as that user, who could
  // not reach a view in root's state.
  struct stat owner;
  if (geteuid() == 0 && fstat(root.root_fd(), &owner) == 0 && owner.st_uid != 0) {
    return Status::FailedPrecondition(ws.root, "belongs to uid " + std::to_string(owner.st_uid) +
                                                   " and odin runs as root: isolated sessions need odin run as "
                                                   "the workspace's owner");
  }
  // git's objects are never changed in place: the view reads the
  // workspace's through git's alternates (as git worktree and clone
  // --shared do) and keeps only the objects its session makes.
  bool share_objects = root.Look(".git").is_dir() && root.Look(".git/objects").is_dir();
  // The bound first: nothing is copied of a workspace that would not fit.
  // (du matches a pattern against the path as it walks, from ws.root: one
  // with glob characters in it counts the objects too, never fewer.)
  std::vector<std::string> excludes = {JoinPath(ws.root, ".odin")};
  if (share_objects) excludes.push_back(JoinPath(ws.root, ".git/objects"));
  ASSIGN_OR_RETURN(uint64_t bytes, Du(ws.root, /*apparent=*/true, excludes));
  if (bytes > max_bytes) {
    return Status::ResourceExhausted(ws.root, "is " + std::to_string(bytes >> 20) +
                                                  " MB, more than an isolated view may take (isolation.max_view_mb: " +
                                                  std::to_string(max_bytes >> 20) + " MB)");
  }
  // The space free, less what views this process is copying will take
  // (parallel attempts check it at once).
  static std::mutex reserve_mu;
  static uint64_t reserved = 0;
  {
    std::lock_guard<std::mutex> lock(reserve_mu);
    struct statvfs fs;
    if (statvfs(ws.state_dir.c_str(), &fs) == 0 &&
        static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < bytes + reserved) {
      return Status::ResourceExhausted(ws.state_dir, "has less free space than the workspace's " +
                                                         std::to_string(bytes >> 20) + " MB a view copies" +
                                                         (reserved > 0 ? " (beside the views being made)" : ""));
    }
    reserved += bytes;
  }
  struct Unreserve {
    uint64_t bytes;
    ~Unreserve() {
      std::lock_guard<std::mutex> lock(reserve_mu);
      reserved -= bytes;
    }
  } unreserve{bytes};
  View v = ViewNamed(ws.state_dir, NewId("view"));
  std::string rel = "views/" + v.id;
  RETURN_IF_ERROR(state.MakeDirs("views", 0700));
  RETURN_IF_ERROR(state.MakeDirs(rel + "/tree", 0700));
  // Every entry but Odin's state (and another odin's making of it), copied
  // as it is: links as links (never followed), modes, times, hard links
  // within it kept.
  auto copy = [&]() -> Status {
    ASSIGN_OR_RETURN(std::vector<std::string> names, root.List(""));
    std::vector<std::string> top;
    for (const std::string& name : names) {
      if (name == ".odin" || name.rfind(".odin-new-", 0) == 0 || (share_objects && name == ".git")) continue;
      top.push_back(name);
    }
    RETURN_IF_ERROR(CopyInto(ws.root, top, v.tree));
    if (!share_objects) return Status::OK();
    ASSIGN_OR_RETURN(std::vector<std::string> git, root.List(".git"));
    git.erase(std::remove(git.begin(), git.end(), "objects"), git.end());
    ASSIGN_OR_RETURN(WorkspaceFiles tree, WorkspaceFiles::Open(v.tree));
    RETURN_IF_ERROR(tree.MakeDirs(".git/objects/info", 0755));
    RETURN_IF_ERROR(tree.MakeDirs(".git/objects/pack", 0755));
    RETURN_IF_ERROR(CopyInto(JoinPath(ws.root, ".git"), git, JoinPath(v.tree, ".git")));
    return tree.WriteFile(".git/objects/info/alternates", JoinPath(ws.root, ".git/objects") + "\n", 0644);
  };
  if (Status copied = copy(); !copied.ok()) {
    (void)state.RemoveTree(rel);
    return copied.WithContext("cannot copy the workspace into a view");
  }
  return v;
}

StatusOr<Workspace> ExistingViewWorkspace(const Workspace& ws, const std::string& id) {
  if (!ValidViewId(id)) return Status::InvalidArgument("view " + id, "is not a view's name");
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(ws.state_dir));
  if (!state.Look("views/" + id + "/tree").is_dir()) {
    return Status::NotFound("view " + id, "is not in this workspace's " + ws.state_dir);
  }
  return ViewWorkspace(ws, ViewNamed(ws.state_dir, id));
}

Workspace ViewedWorkspace(const Workspace& ws) {
  if (ws.view.empty()) return ws;
  Workspace w = ws;
  w.root = ws.view_of;
  w.cwd = ws.view_of + ws.cwd.substr(std::min(ws.cwd.size(), ws.root.size()));
  w.view.clear();
  w.view_of.clear();
  return w;
}

Workspace ViewWorkspace(const Workspace& ws, const View& v) {
  Workspace w = ws;
  w.root = v.tree;
  w.cwd = v.tree + ws.cwd.substr(std::min(ws.cwd.size(), ws.root.size()));
  w.view = v.id;
  w.view_of = ws.root;
  return w;
}

StatusOr<std::vector<std::string>> ListViewIds(const std::string& state_dir) {
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  if (!state.Look("views").is_dir()) return std::vector<std::string>{};
  ASSIGN_OR_RETURN(std::vector<std::string> names, state.List("views"));
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::vector<SessionView>> ListSessionViews(Ledger* ledger, const std::string& state_dir) {
  ASSIGN_OR_RETURN(std::vector<GateEvent> made, ledger->ListGateEventsOfKind(kIsolatedViewEvent, 1 << 20));
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  std::vector<SessionView> out;
  for (auto it = made.rbegin(); it != made.rend(); ++it) {
    json d = ParseJson(it->detail_json);
    if (!d.is_object() || !ValidViewId(d.value("view", ""))) continue;
    SessionView sv;
    sv.session_id = it->session_id;
    sv.view = ViewNamed(state_dir, d.value("view", ""));
    sv.workspace = d.value("workspace", "");
    sv.network = d.value("network", false);
    sv.sandbox = d.value("sandbox", "");
    sv.created_at_ms = it->created_at_ms;
    ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(sv.session_id));
    for (const GateEvent& e : events) {
      if (e.kind == kViewAppliedEvent) sv.applied = e.execution_id;
      if (e.kind == kViewDiscardedEvent) sv.discarded = true;
    }
    sv.tree_exists = state.Look("views/" + sv.view.id + "/tree").is_dir();
    out.push_back(std::move(sv));
  }
  return out;
}

StatusOr<SessionView> FindSessionView(Ledger* ledger, const std::string& state_dir, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<SessionView> all, ListSessionViews(ledger, state_dir));
  std::vector<SessionView> found;
  for (SessionView& sv : all) {
    if (!id.empty() && sv.session_id.rfind(id, 0) == 0) found.push_back(std::move(sv));
  }
  if (found.size() > 1) return Status::InvalidArgument("session " + id, "is the start of more than one session's id");
  if (found.empty()) {
    return Status::NotFound("session " + id,
                            "is not an isolated session of this workspace's ledger (odin doctor lists them)");
  }
  return std::move(found.front());
}

StatusOr<UniqueFd> LockApplies(const std::string& state_dir) {
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  ASSIGN_OR_RETURN(UniqueFd fd, state.OpenAppend("apply.lock", 0600));
  while (flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return PosixError(JoinPath(state_dir, "apply.lock"), errno);
  }
  return fd;
}

StatusOr<UndoPlan> PlanViewApply(Ledger* ledger, const SessionView& sv, const std::string& workspace) {
  if (!sv.tree_exists) {
    return Status::FailedPrecondition("session " + sv.session_id, "its view " + sv.view.id + " is gone");
  }
  ASSIGN_OR_RETURN(WorkspaceFiles tree, WorkspaceFiles::Open(sv.view.tree));
  ASSIGN_OR_RETURN(WorkspaceFiles dest, WorkspaceFiles::Open(workspace));
  ASSIGN_OR_RETURN(std::vector<MutationRecord> all, ledger->ListMutations(sv.session_id));
  // Each path's changes, oldest first; what git ignores (build output) is
  // the view's own and never lands.
  std::map<std::string, std::vector<MutationRecord>> by_path;
  for (MutationRecord& m : all) {
    if (m.change == "ignored") continue;
    StatusOr<std::string> rel = tree.Relative(m.path);
    if (!rel.ok() || rel->empty()) continue;
    by_path[*rel].push_back(std::move(m));
  }
  UndoPlan plan;
  plan.executions = {sv.session_id};
  for (auto& [rel, changes] : by_path) {
    std::stable_sort(changes.begin(), changes.end(), [](const MutationRecord& a, const MutationRecord& b) {
      return a.created_at_ms < b.created_at_ms;
    });
    State base = Before(changes.front());
    State final = After(changes.back());
    if (SameState(base, final)) continue;
    std::string target = JoinPath(workspace, rel);
    if (std::string why = ProtectedWriteReason(target, workspace); !why.empty()) {
      plan.not_undoable.push_back(rel + ": " + why);
      continue;
    }
    // The view must hold what the ledger says the session left.
    PathNow view = LookNow(tree, rel);
    if (std::string differs = Matches(view, final); !differs.empty()) {
      plan.not_undoable.push_back(rel + ": the view's copy is not what the session left (" + differs +
                                  "): changed outside the session's record");
      continue;
    }
    PathNow now = LookNow(dest, rel);
    UndoStep step;
    step.path = target;
    step.current_exists = now.exists;
    step.current = now.content;
    if (Matches(now, final).empty() && final.exists) {
      // An apply cut off after this path landed.
      step.landed = true;
      step.base_exists = base.exists;
      const MutationRecord& first = changes.front();
      if (base.type == "file" && !first.before_artifact.empty()) {
        StatusOr<std::string> image = ledger->ReadBeforeImage(first.before_artifact);
        if (image.ok()) step.base_content = std::move(*image);
      }
    } else if (std::string differs = Matches(now, base); !differs.empty()) {
      step.conflict = true;
      step.why = "changed in the workspace since the session started (" + differs + ")";
      plan.conflicts.push_back(rel + ": " + step.why);
    } else if (base.exists && base.type == "file" && base.sha256.empty()) {
      plan.not_undoable.push_back(rel +
                                  ": the session's record does not say what it was before, so a change in "
                                  "the workspace since cannot be told apart");
      continue;
    }
    if (!final.exists) {
      step.action = base.type == "directory" ? UndoStep::Action::kRemoveDirectory : UndoStep::Action::kRemove;
    } else if (final.type == "directory") {
      step.action = UndoStep::Action::kMakeDirectory;
      step.mode = view.mode >= 0 ? view.mode : 0755;
    } else if (final.type == "symlink") {
      step.action = UndoStep::Action::kSymlink;
      step.link_target = view.link_target;
    } else if (final.type == "file") {
      step.action = UndoStep::Action::kWriteFile;
      step.content = std::move(view.content);
      step.mode = view.mode >= 0 ? view.mode : 0644;
    } else {
      plan.not_undoable.push_back(rel + ": neither a file, a link nor a directory");
      continue;
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

std::string RenderViewDiff(const UndoPlan& plan, const std::string& workspace) {
  std::string out;
  for (const UndoStep& s : plan.steps) {
    std::string shown = DisplayPath(s.path, workspace);
    std::string mark = s.conflict ? "  (conflict: " + s.why + ")" : s.landed ? "  (landed already)" : "";
    switch (s.action) {
      case UndoStep::Action::kWriteFile: {
        std::string before = s.landed ? s.base_content.value_or("") : s.current_exists ? s.current : "";
        DiffResult diff = UnifiedDiff(before, s.content, shown);
        out +=
            ((s.landed ? s.base_exists : s.current_exists) ? "modify " : "create ") + shown + mark + "\n" + diff.text;
        break;
      }
      case UndoStep::Action::kRemove: out += "delete " + shown + mark + "\n"; break;
      case UndoStep::Action::kRemoveDirectory: out += "delete directory " + shown + mark + "\n"; break;
      case UndoStep::Action::kMakeDirectory: out += "create directory " + shown + mark + "\n"; break;
      case UndoStep::Action::kSymlink: out += "link " + shown + " -> " + s.link_target + mark + "\n"; break;
    }
  }
  for (const std::string& n : plan.not_undoable) out += "cannot apply " + n + "\n";
  return out;
}

Status PlanRefusal(const UndoPlan& plan) {
  if (plan.conflicts.empty() && plan.not_undoable.empty()) return Status::OK();
  std::string why;
  for (const std::string& c : plan.conflicts) why += "\n  " + c;
  for (const std::string& n : plan.not_undoable) why += "\n  cannot apply " + n;
  return Status::FailedPrecondition("apply", "nothing was changed:" + why);
}

StatusOr<std::string> ApplyView(Ledger* ledger, const std::string& state_dir, const SessionView& sv,
                                const std::string& workspace, const UndoPlan& plan, int64_t now_ms) {
  if (!sv.applied.empty()) {
    return Status::FailedPrecondition("session " + sv.session_id, "was applied already (" + sv.applied + ")");
  }
  if (sv.discarded) return Status::FailedPrecondition("session " + sv.session_id, "was discarded");
  RETURN_IF_ERROR(PlanRefusal(plan));
  if (plan.steps.empty()) return Status::NotFound("session " + sv.session_id, "changed nothing to apply");
  json args = {{"session", sv.session_id}, {"view", sv.view.id}};
  std::string id;
  StatusOr<std::string> applied =
      ApplySteps(ledger, workspace, plan.steps, {"apply", kApplyTool, args.dump(), "apply", PathsLanded}, now_ms, &id);
  if (!applied.ok()) {
    // All or nothing: what did land is put back.
    StatusOr<UndoPlan> back =
        id.empty() ? StatusOr<UndoPlan>(Status::NotFound("apply", "no execution")) : PlanUndo(ledger, workspace, {id});
    Status undone = back.ok() ? ApplyUndo(ledger, workspace, *back, /*force=*/false, now_ms).status() : back.status();
    return Status::IOError(
        "apply", applied.status().message() +
                     (undone.ok() || !back.ok()
                          ? "\nwhat had landed was put back"
                          : "\nputting back what landed failed too: " + undone.message() + " (odin undo " + id + ")"));
  }
  RETURN_IF_ERROR(ledger->AddGateEvent({NewId("gate"), sv.session_id, "user", "", kViewAppliedEvent, *applied,
                                        json({{"view", sv.view.id}}).dump(), now_ms}));
  (void)RemoveView(state_dir, sv.view.id);
  return *applied;
}

Status LandPlanIn(const std::string& tree, const std::string& workspace, const UndoPlan& plan) {
  ASSIGN_OR_RETURN(WorkspaceFiles to, WorkspaceFiles::Open(tree));
  for (const UndoStep& step : plan.steps) {
    if (!PathIsBelow(step.path, workspace))
      return Status::Internal("apply's checks", step.path + " is not below " + workspace);
    std::string rel = step.path.substr(workspace.size() + 1);
    FileEntry there = to.Look(rel);
    if (std::string parent = DirName(rel); parent != ".") RETURN_IF_ERROR(to.MakeDirs(parent));
    switch (step.action) {
      case UndoStep::Action::kWriteFile:
        if (there.is_dir()) RETURN_IF_ERROR(to.RemoveTree(rel));
        RETURN_IF_ERROR(to.WriteFile(rel, step.content, static_cast<mode_t>(step.mode)));
        break;
      case UndoStep::Action::kSymlink:
        if (there.exists()) RETURN_IF_ERROR(there.is_dir() ? to.RemoveTree(rel) : to.Remove(rel));
        RETURN_IF_ERROR(to.Symlink(step.link_target, rel));
        break;
      case UndoStep::Action::kMakeDirectory:
        if (there.exists() && !there.is_dir()) RETURN_IF_ERROR(to.Remove(rel));
        RETURN_IF_ERROR(to.MakeDirs(rel, static_cast<mode_t>(step.mode)));
        break;
      case UndoStep::Action::kRemove:
      case UndoStep::Action::kRemoveDirectory:
        if (there.exists()) RETURN_IF_ERROR(there.is_dir() ? to.RemoveTree(rel) : to.Remove(rel));
        break;
    }
  }
  return Status::OK();
}

Status RemoveView(const std::string& state_dir, const std::string& id) {
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(state_dir));
  return state.RemoveTree("views/" + id);
}

Status DiscardView(Ledger* ledger, const std::string& state_dir, const SessionView& sv, int64_t now_ms) {
  RETURN_IF_ERROR(RemoveView(state_dir, sv.view.id));
  if (sv.discarded) return Status::OK();
  return ledger->AddGateEvent(
      {NewId("gate"), sv.session_id, "user", "", kViewDiscardedEvent, "", json({{"view", sv.view.id}}).dump(), now_ms});
}

}  // namespace odin
