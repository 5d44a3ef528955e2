#include "workspace/view_drift.h"

#include <memory>
#include <set>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "workspace/git_ignore.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

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
    UniqueFd fds[2];  // the workspace's directory, the view's: each entry one fstatat
    for (int i = 0; i < 2; ++i) {
      const WorkspaceFiles& side = i == 0 ? ws_ : view_;
      if (!(i == 0 ? w_dir : v_dir)) continue;
      ASSIGN_OR_RETURN(fds[i], side.OpenDirectory(rel));
      ASSIGN_OR_RETURN(std::vector<std::string> listed, side.List(rel));
      for (std::string& n : listed) {
        if (!OdinsOwnName(rel, n)) names.insert(std::move(n));
      }
    }
    for (const std::string& name : names) {
      std::string path = rel.empty() ? name : rel + "/" + name;
      if (session_.count(path)) continue;  // the session's own: its change set
      FileEntry w = w_dir ? WorkspaceFiles::LookAt(fds[0].get(), name) : FileEntry();
      FileEntry v = v_dir ? WorkspaceFiles::LookAt(fds[1].get(), name) : FileEntry();
      if (!above_session_.count(path) && Ignored(path)) continue;  // build output: the view's own
      if ((w.is_dir() && v.is_dir()) || (above_session_.count(path) && (w.is_dir() || v.is_dir()))) {
        RETURN_IF_ERROR(Walk(path, w.is_dir(), v.is_dir(), out));
        continue;
      }
      ASSIGN_OR_RETURN(bool same, Same(path, w, v));
      if (same) continue;
      (w.exists() ? out->changed : out->removed).push_back(path);
    }
    return Status::OK();
  }

 private:
  StatusOr<bool> Same(const std::string& path, const FileEntry& w, const FileEntry& v) const {
    if (w.type != v.type) return false;
    if (w.type == FileEntry::Type::kOther) return true;  // devices, FIFOs: not what the checks judge
    if ((w.mode & 07777) != (v.mode & 07777)) return false;
    if (w.is_link()) {
      StatusOr<std::string> a = ws_.ReadLink(path), b = view_.ReadLink(path);
      return a.ok() && b.ok() && *a == *b;
    }
    if (w.size != v.size) return false;
    if (w.mtime_ns == v.mtime_ns) return true;  // cp -a kept the time: untouched since
    std::string a = Hash(ws_, path), b = Hash(view_, path);
    return !a.empty() && a == b;
  }

  // The file's SHA-256, read a piece at a time ("" if it cannot be read).
  static std::string Hash(const WorkspaceFiles& side, const std::string& path) {
    Sha256 h;
    Status read = side.ReadInPieces(
        path, UINT64_MAX, [&](std::string_view piece) { h.Update(piece); }, WorkspaceFiles::Links::kNone);
    return read.ok() ? HexDigest(h.Finish()) : "";
  }

  bool Ignored(const std::string& path) const { return ignore_ && !ignore_->IgnoredRoot(path).empty(); }

  const WorkspaceFiles& ws_;
  const WorkspaceFiles& view_;
  const std::set<std::string>& session_;
  std::set<std::string> above_session_;
  GitIgnore* ignore_;
};

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

}  // namespace odin
