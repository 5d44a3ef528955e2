#include "workspace/protected_paths.h"

// Long file: the one list of protected paths, the index of where they are
// below the root, and the snapshot and restore around commands all share
// that list's helpers (names, git layouts, control paths); apart, each
// would need them exported.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/file_util.h"
#include "base/sha256.h"
#include "workspace/git_layouts.h"
#include "workspace/workspace_files.h"

namespace odin {

const std::vector<std::string>& ProtectedRelativePaths() {
  static const std::vector<std::string> kPaths = {
      ".odin",   "odinconfig.json", ".mcp.json",   ".claude",  "ODIN.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md",
      ".bashrc", ".bash_profile",   ".bash_login", ".profile", ".zshrc",  ".zprofile", ".zshenv",   ".envrc",
  };
  return kPaths;
}

namespace {

bool IsInstructionsName(const std::string& name) {
  return name == "ODIN.md" || name == "AGENTS.md" || name == "CLAUDE.md" || name == "CLAUDE.local.md";
}

// path relative to workspace, or nullopt when it is not below it.
std::optional<std::string> Relative(const std::string& path, const std::string& workspace) {
  if (path.size() <= workspace.size() || path.compare(0, workspace.size(), workspace) != 0 ||
      path[workspace.size()] != '/') {
    return std::nullopt;
  }
  return path.substr(workspace.size() + 1);
}

std::vector<std::string> SplitPath(const std::string& rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    if (end > start) parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool Lexists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool IsRealDirectory(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names that make a git directory, as git's own check reads them.
bool GitLike(bool head, bool objects, bool refs, bool commondir) { return head && ((objects && refs) || commondir); }

// git's control files in a git directory (a worktree's also has gitdir).
constexpr const char* kGitControlFiles[] = {"config", "commondir", "config.worktree",
                                            "hooks",  "info",      "objects/info/alternates"};

void AddControlPaths(const std::string& git_dir, const std::string& prefix, int depth, std::vector<std::string>* out) {
  for (const char* p : kGitControlFiles) {
    if (Lexists(git_dir + "/" + p)) out->push_back(prefix + p);
  }
  if (depth > 8) return;  // submodules of submodules of ...: enough
  for (const char* sub : {"worktrees", "modules"}) {
    std::string dir = git_dir + "/" + sub;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
    for (const std::string& name : names) {
      std::string child = dir + "/" + name;
      std::string child_prefix = prefix + sub + "/" + name + "/";
      if (!IsRealDirectory(child)) continue;
      if (std::string(sub) == "worktrees") {
        if (Lexists(child + "/gitdir")) out->push_back(child_prefix + "gitdir");
        AddControlPaths(child, child_prefix, depth + 1, out);
      } else if (Lexists(child + "/HEAD")) {
        AddControlPaths(child, child_prefix, depth + 1, out);
      } else {
        // modules/<group>/<name>: a submodule whose name holds a slash.
        AddControlPaths(child, child_prefix, depth + 1, out);
      }
    }
  }
}

int64_t Ns(const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }

int64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return Ns(t);
}

}  // namespace

bool IsProtectedPath(const std::string& path, const std::string& workspace) {
  std::optional<std::string> rel = Relative(path, workspace);
  if (!rel) return false;
  std::vector<std::string> parts = SplitPath(*rel);
  if (parts.empty()) return false;
  for (const std::string& p : parts) {
    // Any .git, at any depth, and all below it; and any .odin (a nested
    // workspace's state: its ledger's before-images are what its undo
    // writes back).
    if (p == ".git" || p == ".odin") return true;
  }
  // Instructions files count in every directory: they are read from the root
  // down to the working directory.
  if (IsInstructionsName(parts.back())) return true;
  for (const std::string& p : ProtectedRelativePaths()) {
    if (parts[0] == p) return true;
  }
  return false;
}

bool LooksLikeGitDirectory(const std::string& dir) {
  struct stat st;
  bool head = lstat((dir + "/HEAD").c_str(), &st) == 0;
  if (!head) return false;
  return GitLike(head, IsDirectory(dir + "/objects"), IsDirectory(dir + "/refs"), Lexists(dir + "/commondir"));
}

std::string ProtectedWriteReason(const std::string& path, const std::string& workspace) {
  if (IsProtectedPath(path, workspace)) {
    return "a protected path (git's files, .odin, odinconfig.json, .mcp.json, .claude, ODIN.md, AGENTS.md, "
           "CLAUDE.md, shell rc files): read-only to the agent";
  }
  std::optional<std::string> rel = Relative(path, workspace);
  if (!rel) return "";
  // Would the write lay a directory on its way out like a git directory?
  // Each directory gains one entry: the next component of the path.
  std::vector<std::string> parts = SplitPath(*rel);
  std::string dir = workspace;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& added = parts[i];
    bool head = added == "HEAD" || Lexists(dir + "/HEAD");
    bool objects = added == "objects" || IsDirectory(dir + "/objects");
    bool refs = added == "refs" || IsDirectory(dir + "/refs");
    bool commondir = added == "commondir" || Lexists(dir + "/commondir");
    if (GitLike(head, objects, refs, commondir)) {
      std::string shown = dir == workspace ? "the workspace root" : dir.substr(workspace.size() + 1);
      return "writing it would leave " + shown +
             " laid out like a git directory (HEAD beside objects/ and refs/, or commondir), which git would "
             "take for a repository and whose config could run programs";
    }
    dir += "/" + added;
  }
  return "";
}

bool IsGitControlPath(std::string_view rel_in_git) {
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= rel_in_git.size();) {
    size_t end = rel_in_git.find('/', start);
    if (end == std::string_view::npos) end = rel_in_git.size();
    parts.push_back(rel_in_git.substr(start, end - start));
    start = end + 1;
  }
  auto control_name = [](std::string_view name) {
    if (name == "gitdir") return true;  // a worktree's: where its git directory is
    for (std::string_view f : kGitControlFiles) {
      if (f.find('/') == std::string_view::npos && f == name) return true;
    }
    return false;
  };
  // Below worktrees/ and modules/ are other git directories, each with its own.
  bool nested = parts[0] == "worktrees" || parts[0] == "modules";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (control_name(parts[i]) && (nested || i == 0)) return true;
    if (parts[i] == "objects" && i + 2 < parts.size() && parts[i + 1] == "info" && parts[i + 2] == "alternates") {
      return true;
    }
  }
  return false;
}

std::vector<std::string> GitControlPaths(const std::string& git_dir) {
  std::vector<std::string> out;
  AddControlPaths(git_dir, "", 0, &out);
  return out;
}

std::vector<ProtectedMount> ProtectedMounts(const std::string& workspace) {
  // Only real files and directories: a bind follows a symlink at its source,
  // so a repository's "AGENTS.md -> /root/.ssh/id_ed25519" bound onto
  // itself would show the key inside the sandbox, where /root is hidden. A
  // symlink there is protected all the same (what a command does to it
  // does not land), and through it a command sees only what the sandbox
  // shows anyway.
  auto real = [](const std::string& p) {
    struct stat st;
    return lstat(p.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
  };
  std::vector<ProtectedMount> out;
  std::string git = workspace + "/.git";
  struct stat st;
  if (lstat(git.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      out.push_back({git, true});
      for (const std::string& rel : GitControlPaths(git)) {
        if (real(git + "/" + rel)) out.push_back({git + "/" + rel, false});
      }
    } else if (S_ISREG(st.st_mode)) {
      out.push_back({git, false});  // "gitdir: ..." sends git elsewhere
    }
  }
  for (const std::string& rel : ProtectedRelativePaths()) {
    if (rel == ".odin") continue;  // hidden altogether
    std::string p = workspace + "/" + rel;
    if (real(p)) out.push_back({p, false});
  }
  return out;
}

// ---------------------------------------------------------------------------
// ProtectedIndex

void ProtectedIndex::Refresh() {
  ++pass_;
  complete_ = true;
  size_t count = 0;
  int root_fd = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    dirs_.clear();
    Collect();
    return;
  }
  Visit(root_fd, "", ".", &count);
  close(root_fd);
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    it = it->second.seen == pass_ ? std::next(it) : dirs_.erase(it);
  }
  Collect();
}

void ProtectedIndex::RefreshPaths(const std::set<std::string>& changed) {
  if (dirs_.empty() || !complete_) return Refresh();
  // Each changed path's directory, and the path itself (a directory now,
  // or one that is gone).
  std::set<std::string> reread;
  for (const std::string& p : changed) {
    if (p.empty() || p[0] == '/' || p.find("..") != std::string::npos) return Refresh();
    size_t slash = p.rfind('/');
    reread.insert(slash == std::string::npos ? "" : p.substr(0, slash));
    reread.insert(p);
  }
  ++pass_;
  size_t count = dirs_.size();
  int root_fd = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    dirs_.clear();
    Collect();
    return;
  }
  for (const std::string& rel : reread) {
    // Its parent, opened one component at a time without following a
    // symlink (a directory replaced by one is gone, as a full walk sees it).
    int parent = dup(root_fd);
    std::string name = ".";
    size_t start = 0;
    for (size_t slash = rel.find('/'); parent >= 0 && slash != std::string::npos; slash = rel.find('/', start)) {
      int next =
          openat(parent, rel.substr(start, slash - start).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close(parent);
      parent = next;
      start = slash + 1;
    }
    if (!rel.empty()) name = rel.substr(start);
    struct stat st;
    bool is_dir = parent >= 0 && fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    // .git is never walked into, nor the root's .odin.
    if (!is_dir || name == ".git" || rel == ".odin") {
      Forget(rel);
    } else {
      Visit(parent, rel, name, &count, true);
    }
    if (parent >= 0) close(parent);
  }
  close(root_fd);
  if (count > max_dirs_) complete_ = false;
  Collect();
}

void ProtectedIndex::Forget(const std::string& rel) {
  if (rel.empty()) {
    dirs_.clear();
    return;
  }
  // Only a directory the index read has anything below it in the index (a
  // changed file costs no walk over dirs_).
  if (dirs_.count(rel) == 0) return;
  std::string below = rel + "/";
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    it = it->first == rel || it->first.compare(0, below.size(), below) == 0 ? dirs_.erase(it) : std::next(it);
  }
}

void ProtectedIndex::Visit(int parent_fd, const std::string& rel, const std::string& name, size_t* count,
                           bool incremental) {
  if (++*count > max_dirs_) {
    complete_ = false;
    return;
  }
  int fd = openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (incremental) Forget(rel);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return;
  }
  bool known = dirs_.count(rel) != 0;
  Dir& d = dirs_[rel];
  int64_t mtime = Ns(st.st_mtim), ctime = Ns(st.st_ctim);
  // A directory changed within the file system's timestamp granularity of
  // its last reading may change again without its times moving: read it
  // again until it has been quiet for a while (git's "racy" entries). In an
  // incremental refresh the kernel said it changed: read it again.
  constexpr int64_t kRacyNs = 2'000'000'000;
  bool fresh = !incremental && known && d.seen != 0 && d.mtime_ns == mtime && d.ctime_ns == ctime &&
               d.ino == st.st_ino && d.read_at_ns - std::max(mtime, ctime) > kRacyNs;
  std::vector<std::string> old_subdirs;
  if (!fresh) {
    old_subdirs = std::move(d.subdirs);
    d.mtime_ns = mtime;
    d.ctime_ns = ctime;
    d.ino = st.st_ino;
    d.read_at_ns = NowNs();
    d.subdirs.clear();
    d.names.clear();
    int dup_fd = dup(fd);
    DIR* dir = dup_fd >= 0 ? fdopendir(dup_fd) : nullptr;
    if (dir != nullptr) {
      while (dirent* e = readdir(dir)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        if (n == ".git" || n == "HEAD" || n == "objects" || n == "refs" || n == "commondir" || IsInstructionsName(n)) {
          d.names.push_back(n);
        }
        if (n == ".git" || (rel.empty() && n == ".odin")) continue;  // not walked into
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
          struct stat cst;
          is_dir = fstatat(fd, n.c_str(), &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cst.st_mode);
        }
        if (is_dir) d.subdirs.push_back(n);
      }
      closedir(dir);
    } else if (dup_fd >= 0) {
      close(dup_fd);
    }
  }
  d.seen = pass_;
  std::vector<std::string> subdirs = d.subdirs;  // d may move as dirs_ grows
  if (incremental) {
    // Subdirectories no longer there are forgotten; known ones stay as they
    // are (the kernel would have said if they changed).
    for (const std::string& sub : old_subdirs) {
      if (std::find(subdirs.begin(), subdirs.end(), sub) == subdirs.end()) Forget(rel.empty() ? sub : rel + "/" + sub);
    }
  }
  for (const std::string& sub : subdirs) {
    std::string sub_rel = rel.empty() ? sub : rel + "/" + sub;
    if (incremental && dirs_.count(sub_rel) != 0) continue;
    Visit(fd, sub_rel, sub, count, incremental);
  }
  close(fd);
}

void ProtectedIndex::Collect() {
  nested_git_.clear();
  git_like_.clear();
  instructions_.clear();
  for (const auto& [rel, d] : dirs_) {
    bool head = false, objects = false, refs = false, commondir = false;
    for (const std::string& n : d.names) {
      std::string path = rel.empty() ? n : rel + "/" + n;
      if (n == ".git" && !rel.empty()) nested_git_.insert(path);
      if (IsInstructionsName(n) && !rel.empty()) instructions_.insert(path);
      head |= n == "HEAD";
      objects |= n == "objects";
      refs |= n == "refs";
      commondir |= n == "commondir";
    }
    if (GitLike(head, objects, refs, commondir)) git_like_.insert(rel.empty() ? "." : rel);
  }
}

// ---------------------------------------------------------------------------
// Snapshot and restore

namespace {

using Kind = ProtectedSnapshot::Entry::Kind;

// What is at rel itself, read through the layer: no symlink followed on the
// way or at the end (a directory on the way replaced by a symlink makes
// everything below it absent).
ProtectedSnapshot::Entry Capture(const WorkspaceFiles& ws, const std::string& rel) {
  ProtectedSnapshot::Entry e;
  FileEntry f = ws.Look(rel);
  if (!f.exists()) return e;  // absent
  e.mode = f.mode;
  e.dev = f.dev;
  e.ino = f.ino;
  switch (f.type) {
    case FileEntry::Type::kFile: {
      e.kind = Kind::kFile;
      if (f.size <= kMaxCapturedBytes) {
        StatusOr<std::string> content = ws.ReadFile(rel, kMaxCapturedBytes, WorkspaceFiles::Links::kNone);
        if (content.ok()) {
          e.captured = true;
          e.content = std::move(*content);
          e.sha256 = Sha256Hex(e.content);
        }
      }
      if (!e.captured) {
        Sha256 hash;
        if (ws.ReadInPieces(
                  rel, UINT64_MAX, [&hash](std::string_view piece) { hash.Update(piece); },
                  WorkspaceFiles::Links::kNone)
                .ok()) {
          e.sha256 = HexDigest(hash.Finish());
        }
      }
      break;
    }
    case FileEntry::Type::kSymlink: {
      e.kind = Kind::kSymlink;
      StatusOr<std::string> target = ws.ReadLink(rel);
      e.captured = target.ok();
      if (target.ok()) e.content = *target;
      break;
    }
    case FileEntry::Type::kDirectory:
      e.kind = Kind::kDirectory;
      e.captured = true;
      break;
    default: e.kind = Kind::kOther;
  }
  return e;
}

bool Same(const ProtectedSnapshot::Entry& a, const ProtectedSnapshot::Entry& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kAbsent: return true;
    case Kind::kFile: return a.sha256 == b.sha256 && (a.mode & 07777) == (b.mode & 07777);
    case Kind::kSymlink: return a.content == b.content;
    case Kind::kDirectory: return a.dev == b.dev && a.ino == b.ino;
    case Kind::kOther: return a.dev == b.dev && a.ino == b.ino;
  }
  return false;
}

std::string JoinRel(const std::string& a, const std::string& b) { return a.empty() || a == "." ? b : a + "/" + b; }

// The paths a snapshot watches, relative: the root's protected files, .git
// and its control paths (the files inside hooks/ and info/ one by one),
// its HEAD, and for each nested git directory the same.
void AddGitWatch(const WorkspaceFiles& ws, const std::string& git_rel, std::set<std::string>* out) {
  out->insert(git_rel);
  if (!ws.Look(git_rel).is_dir()) return;
  // What may appear: watch the names even where they are absent now.
  for (const char* p : {"config", "commondir", "config.worktree", "objects/info/alternates", "HEAD"}) {
    out->insert(git_rel + "/" + p);
  }
  for (const std::string& rel : GitControlPaths(ws.Absolute(git_rel))) {
    std::string full = git_rel + "/" + rel;
    if (ws.Look(full).is_dir()) {
      StatusOr<std::vector<std::string>> names = ws.List(full);
      if (!names.ok()) continue;
      for (const std::string& n : *names) out->insert(full + "/" + n);
    } else {
      out->insert(full);
    }
  }
}

// Nested git directories (.git entries below the root, and directories laid
// out like one) whose control paths are watched like the root's.
std::set<std::string> NestedGitDirs(const ProtectedIndex& index) {
  std::set<std::string> out = index.nested_git();
  for (const std::string& g : index.git_like()) {
    if (g != ".") out.insert(g);
  }
  return out;
}

std::set<std::string> Watched(const WorkspaceFiles& ws, const std::set<std::string>& nested_git) {
  std::set<std::string> out;
  for (const std::string& p : ProtectedRelativePaths()) {
    if (p != ".odin") out.insert(p);
  }
  AddGitWatch(ws, ".git", &out);
  for (const std::string& n : nested_git) AddGitWatch(ws, n, &out);
  return out;
}

// What may not appear: a nested .git, the HEAD that makes a directory
// git-like (the workspace root included), an instruction file. Each, if
// new, is moved aside.
std::set<std::string> Markers(const ProtectedIndex& index) {
  std::set<std::string> out = index.nested_git();
  out.insert(index.instructions().begin(), index.instructions().end());
  for (const std::string& g : index.git_like()) out.insert(JoinRel(g, "HEAD"));
  return out;
}

}  // namespace

ProtectedSnapshot SnapshotProtected(const WorkspaceFiles& ws, ProtectedIndex* index, bool refreshed) {
  ProtectedSnapshot s;
  std::set<std::string> nested_git;
  if (index != nullptr) {
    if (!refreshed) index->Refresh();
    s.nested = Markers(*index);
    nested_git = NestedGitDirs(*index);
  }
  for (const std::string& rel : Watched(ws, nested_git)) s.entries[rel] = Capture(ws, rel);
  // Instruction files below the root are as protected as the root's: what
  // a command does to one is undone too.
  if (index != nullptr) {
    for (const std::string& rel : index->instructions()) s.entries[rel] = Capture(ws, rel);
  }
  return s;
}

RestoreReport RestoreProtected(const WorkspaceFiles& ws, const ProtectedSnapshot& before, ProtectedIndex* index,
                               const WorkspaceFiles* kept, const std::string& id, bool refreshed) {
  RestoreReport report;
  const std::string kept_rel = "displaced/" + (id.empty() ? std::string("unknown") : id);
  if (kept != nullptr) report.displaced_dir = kept->Absolute(kept_rel);
  auto unrestored = [&report](const std::string& rel, const std::string& why) {
    report.unrestored.push_back(rel);
    report.why[rel] = why;
  };
  // Moves rel aside (never deletes it). Where it cannot go into Odin's
  // state (another file system: the state kept in the user's directory),
  // it is renamed where it is, to a name neither git nor Odin reads
  // ("HEAD.odin-displaced-ID"): never left as it was. False if neither
  // worked.
  auto displace = [&](const std::string& rel) {
    Status moved =
        kept == nullptr ? Status::Unavailable(rel, "nowhere to keep it") : ws.MoveTo(rel, *kept, kept_rel + "/" + rel);
    if (moved.ok()) {
      report.displaced.push_back(rel);
      return true;
    }
    std::string beside = rel + ".odin-displaced-" + (id.empty() ? std::string("unknown") : id);
    Status renamed = ws.Rename(rel, beside, /*no_replace=*/true);
    if (renamed.ok()) {
      report.displaced.push_back(rel);
      report.displaced_beside[rel] = beside;
      return true;
    }
    unrestored(rel, moved.message() + "; " + renamed.message());
    return false;
  };

  // 1. .git: one replaced by a file, a symlink or another directory is moved
  //    aside, and the original put back where it can be found. One made
  //    where there was none (git init) stays, unless its layout could run
  //    a program.
  auto git_before = before.entries.find(".git");
  // A .git that is new and judged harmless: what is in it is git init's.
  bool new_git = false;
  if (git_before != before.entries.end() && git_before->second.kind != Kind::kAbsent) {
    const ProtectedSnapshot::Entry& was = git_before->second;
    ProtectedSnapshot::Entry now = Capture(ws, ".git");
    if (!Same(was, now)) {
      bool ok = now.kind == Kind::kAbsent || displace(".git");
      Status put;
      if (ok && was.kind == Kind::kDirectory) {
        // The command may only have renamed it: find its inode at the root.
        std::string found;
        StatusOr<std::vector<std::string>> names = ws.List("");
        for (const std::string& n : names.ok() ? *names : std::vector<std::string>()) {
          FileEntry e = ws.Look(n);
          if (e.is_dir() && e.ino == was.ino && e.dev == was.dev) found = n;
        }
        put = found.empty() ? Status::NotFound(".git", "the directory it was is gone") : ws.Rename(found, ".git");
      } else if (ok && was.kind == Kind::kFile && was.captured) {
        put = ws.WriteFile(".git", was.content, was.mode & 07777);
      } else if (ok) {
        put = Status::FailedPrecondition(".git", "its content before was not kept");
      }
      if (ok && put.ok()) {
        report.restored.push_back(".git");
      } else if (ok) {
        unrestored(".git", put.message());
      }
    }
  } else if (ws.Look(".git").exists()) {
    // A new .git (git init): it stays, unless its config or hooks could run
    // a program.
    new_git = GitDirRunsPrograms(ws, ".git").empty();
    if (!new_git) displace(".git");
  }

  // 2. New instruction files below the root are moved aside; so are new
  //    nested git directories and git-like layouts (the root's too) that
  //    could run a program, or whose HEAD git cannot read. A harmless new
  //    repository (git init, git clone) stays.
  std::set<std::string> before_nested_git;
  if (index != nullptr) {
    if (!refreshed) index->Refresh();
    for (const std::string& rel : Markers(*index)) {
      if (before.nested.count(rel) != 0) continue;
      bool head = rel == "HEAD" || rel.ends_with("/HEAD");
      bool git = rel == ".git" || rel.ends_with("/.git");
      if (head || git) {
        std::string dir = head ? (rel == "HEAD" ? "" : rel.substr(0, rel.size() - 5)) : rel;
        bool harmless = ws.Look(dir).is_dir() && GitDirRunsPrograms(ws, dir).empty();
        if (harmless) {
          StatusOr<std::string> text = ws.ReadFile(JoinRel(dir, "HEAD"), 4096, WorkspaceFiles::Links::kNone);
          harmless = !ws.Look(JoinRel(dir, "HEAD")).exists() || (text.ok() && GitHeadParses(*text));
        }
        if (harmless) continue;
      }
      displace(rel);
    }
    // The nested git directories that were there before keep being watched.
    for (const std::string& rel : NestedGitDirs(*index)) {
      if (before.entries.count(rel) != 0) before_nested_git.insert(rel);
    }
  }

  // 3. Every watched path as it was. A path watched now but not captured
  //    before appeared inside a watched directory (a new hook): moved aside.
  //    A HEAD of a git directory that was there may change (a checkout), but
  //    only to one git reads.
  std::set<std::string> watched = Watched(ws, before_nested_git);
  for (const auto& [rel, was] : before.entries) watched.insert(rel);
  for (const std::string& rel : watched) {
    if (rel == ".git" || (new_git && rel.starts_with(".git/"))) continue;
    ProtectedSnapshot::Entry now = Capture(ws, rel);
    auto it = before.entries.find(rel);
    bool head = rel == "HEAD" || rel.ends_with("/HEAD");
    if (it == before.entries.end()) {
      if (now.kind != Kind::kAbsent && now.kind != Kind::kDirectory && !head) displace(rel);
      continue;
    }
    const ProtectedSnapshot::Entry& was = it->second;
    if (Same(was, now)) continue;
    if (head && now.kind == Kind::kFile && now.captured && GitHeadParses(now.content)) continue;
    if (was.kind == Kind::kAbsent) {  // made by the command
      displace(rel);
      continue;
    }
    if (!was.captured || was.kind == Kind::kOther) {
      unrestored(rel, "its content before was not kept");  // never overwrite what we hold no copy of
      continue;
    }
    bool ok = true;
    if (now.kind != Kind::kAbsent && now.kind != was.kind) ok = displace(rel);
    if (!ok) continue;
    // Through the layer: nothing is made or written through a symlink a
    // command put on the way (sub -> /root-only/dir: refused, and said).
    size_t slash = rel.rfind('/');
    Status put = slash == std::string::npos ? Status::OK() : ws.MakeDirs(rel.substr(0, slash));
    if (put.ok()) {
      if (was.kind == Kind::kDirectory) {
        put = ws.MakeDirs(rel, was.mode & 07777);
      } else if (was.kind == Kind::kFile) {
        put = ws.WriteFile(rel, was.content, was.mode & 07777);
      } else {
        put = ws.Symlink(was.content, rel);
      }
    }
    if (put.ok()) {
      report.restored.push_back(rel);
    } else {
      unrestored(rel, put.message());
    }
  }
  if (index != nullptr && !refreshed && !report.displaced.empty()) index->Refresh();
  for (std::vector<std::string>* v : {&report.restored, &report.displaced, &report.unrestored}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return report;
}

}  // namespace odin
