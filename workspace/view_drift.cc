#include "workspace/view_drift.h"

#include <memory>
#include <set>

#include "base/file_util.h"
#include "workspace/git_ignore.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

// A drifted file is held whole while it is compared or brought over.
constexpr uint64_t kMaxFileBytes = 256ull << 20;

bool OdinsOwnName(const std::string& rel, const std::string& name) {
  if (name.rfind(".odin-new-", 0) == 0) return true;
  return rel.empty() && (name == ".odin" || name == ".git");
}

class DriftWalk {
 public:
  DriftWalk(const WorkspaceFiles& ws, const WorkspaceFiles& view, const std::set<std::string>& session_paths,
            GitIgnore* ignore)
      : ws_(ws), view_(view), session_(session_paths), ignore_(ignore) {
    // The directories above the session's paths are walked whatever they
    // are on either side: what the session made under them is its own.
    for (const std::string& p : session_) {
      for (size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1)) {
        above_session_.insert(p.substr(0, slash));
      }
    }
  }

  // rel: a directory on one side at least (w_dir, v_dir say which).
  Status Walk(const std::string& rel, bool w_dir, bool v_dir, ViewDrift* out) {
    std::set<std::string> names;
    for (const WorkspaceFiles* side : {&ws_, &view_}) {
      if (!(side == &ws_ ? w_dir : v_dir)) continue;
      ASSIGN_OR_RETURN(std::vector<std::string> listed, side->List(rel));
      for (std::string& n : listed) {
        if (!OdinsOwnName(rel, n)) names.insert(std::move(n));
      }
    }
    for (const std::string& name : names) {
      std::string path = rel.empty() ? name : rel + "/" + name;
      if (session_.count(path)) continue;  // the session's own: its change set
      FileEntry w = ws_.Look(path), v = view_.Look(path);
      if ((w.is_dir() && v.is_dir()) || (above_session_.count(path) && (w.is_dir() || v.is_dir()))) {
        RETURN_IF_ERROR(Walk(path, w.is_dir(), v.is_dir(), out));
        continue;
      }
      ASSIGN_OR_RETURN(bool same, Same(path, w, v));
      if (same || Ignored(path)) continue;
      (w.exists() ? out->changed : out->removed).push_back(path);
    }
    return Status::OK();
  }

 private:
  StatusOr<bool> Same(const std::string& path, const FileEntry& w, const FileEntry& v) const {
    if (w.type != v.type) return false;
    if (w.type == FileEntry::Type::kOther) return true;  // devices, FIFOs: never brought over
    if ((w.mode & 07777) != (v.mode & 07777)) return false;
    if (w.is_link()) {
      StatusOr<std::string> a = ws_.ReadLink(path), b = view_.ReadLink(path);
      return a.ok() && b.ok() && *a == *b;
    }
    if (w.size != v.size) return false;
    if (w.mtime_ns == v.mtime_ns) return true;  // cp -a kept the time: untouched since
    if (w.size > kMaxFileBytes) return false;
    StatusOr<std::string> a = ws_.ReadFile(path, kMaxFileBytes, WorkspaceFiles::Links::kNone);
    StatusOr<std::string> b = view_.ReadFile(path, kMaxFileBytes, WorkspaceFiles::Links::kNone);
    return a.ok() && b.ok() && *a == *b;
  }

  bool Ignored(const std::string& path) const { return ignore_ && !ignore_->IgnoredRoot(path).empty(); }

  const WorkspaceFiles& ws_;
  const WorkspaceFiles& view_;
  const std::set<std::string>& session_;
  std::set<std::string> above_session_;
  GitIgnore* ignore_;
};

// Puts what the workspace holds at rel into the view (which holds nothing
// there now), a directory with everything under it.
Status CopyInto(const WorkspaceFiles& ws, const WorkspaceFiles& view, const std::string& rel) {
  FileEntry e = ws.Look(rel);
  if (e.is_file()) {
    ASSIGN_OR_RETURN(std::string content, ws.ReadFile(rel, kMaxFileBytes, WorkspaceFiles::Links::kNone));
    return view.WriteFile(rel, content, e.mode & 07777);
  }
  if (e.is_link()) {
    ASSIGN_OR_RETURN(std::string target, ws.ReadLink(rel));
    return view.Symlink(target, rel);
  }
  if (e.is_dir()) {
    RETURN_IF_ERROR(view.MakeDirs(rel, e.mode & 07777));
    ASSIGN_OR_RETURN(std::vector<std::string> names, ws.List(rel));
    for (const std::string& n : names) {
      if (!OdinsOwnName(rel, n)) RETURN_IF_ERROR(CopyInto(ws, view, rel + "/" + n));
    }
    return Status::OK();
  }
  return Status::OK();  // gone meanwhile, or neither a file, a link nor a directory
}

Status RemoveFromView(const WorkspaceFiles& view, const std::string& rel) {
  FileEntry v = view.Look(rel);
  if (!v.exists()) return Status::OK();
  return v.is_dir() ? view.RemoveTree(rel) : view.Remove(rel);
}

}  // namespace

StatusOr<ViewDrift> FindViewDrift(Ledger* ledger, const SessionView& sv, const std::string& workspace) {
  ASSIGN_OR_RETURN(WorkspaceFiles ws, WorkspaceFiles::Open(workspace));
  ASSIGN_OR_RETURN(WorkspaceFiles view, WorkspaceFiles::Open(sv.view.tree));
  ASSIGN_OR_RETURN(std::vector<MutationRecord> all, ledger->ListMutations(sv.session_id));
  std::set<std::string> session_paths;
  for (const MutationRecord& m : all) {
    StatusOr<std::string> rel = view.Relative(m.path);
    if (rel.ok() && !rel->empty()) session_paths.insert(*rel);
  }
  std::unique_ptr<GitIgnore> ignore = GitIgnore::Open(workspace);
  ViewDrift drift;
  RETURN_IF_ERROR(DriftWalk(ws, view, session_paths, ignore.get()).Walk("", true, true, &drift));
  return drift;
}

Status BringDriftIntoView(const SessionView& sv, const std::string& workspace, const ViewDrift& drift) {
  ASSIGN_OR_RETURN(WorkspaceFiles ws, WorkspaceFiles::Open(workspace));
  ASSIGN_OR_RETURN(WorkspaceFiles view, WorkspaceFiles::Open(sv.view.tree));
  for (const std::string& rel : drift.removed) RETURN_IF_ERROR(RemoveFromView(view, rel));
  for (const std::string& rel : drift.changed) {
    RETURN_IF_ERROR(RemoveFromView(view, rel));
    std::string parent = DirName(rel);
    if (!parent.empty() && parent != ".") RETURN_IF_ERROR(view.MakeDirs(parent));
    RETURN_IF_ERROR(CopyInto(ws, view, rel));
  }
  return Status::OK();
}

}  // namespace odin
