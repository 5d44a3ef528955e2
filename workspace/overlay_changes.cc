// Applying an overlay's upper directory to the workspace (overlay_changes.h).
// Long file: one walk (the Applier) decides, for each entry, between
// landing, conflict, discarding and counting; its cases read together.

#include "workspace/overlay_changes.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "workspace/entry_state.h"
#include "workspace/git_ignore.h"

namespace odin {

int64_t CoarseRealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string CommandOverlayRoot(const std::string& state_dir) { return state_dir + "/overlay"; }

void EraseChangesUnder(const std::set<std::string>& paths, ChangeSet* changes) {
  std::erase_if(changes->changes, [&](const PathChange& pc) {
    for (const std::string& p : paths) {
      if (pc.path == p ||
          (pc.path.size() > p.size() && pc.path.compare(0, p.size(), p) == 0 && pc.path[p.size()] == '/')) {
        return true;
      }
    }
    return false;
  });
}

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// An upper directory (ROOT/ID/u), neither it nor its command's directory
// (ID) followed if a symlink: the worker that made them could have
// replaced ID with a link to anywhere its lander can read.
UniqueFd OpenUpper(const std::string& upper) {
  UniqueFd parent(open(DirName(upper).c_str(), kDirFlags));
  if (!parent.valid()) return UniqueFd();
  return UniqueFd(openat(parent.get(), upper.substr(upper.rfind('/') + 1).c_str(), kDirFlags));
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// Deeper than this, nothing is walked (each level is a frame of the
// recursion, and a command can nest directories without end): what lies
// there does not land, and a tree that deep is never deleted.
constexpr size_t kMaxDepth = 256;
size_t Depth(const std::string& rel) { return static_cast<size_t>(std::count(rel.begin(), rel.end(), '/')); }
bool TooDeep(const std::string& rel) { return Depth(rel) >= kMaxDepth; }

std::optional<struct stat> StatAt(int dir_fd, const std::string& name) {
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

// The value of an xattr of name in dir_fd (not following a symlink), "" if
// it has none. Entries are reached through /proc/self/fd so no path is
// followed twice.
std::string XattrAt(int dir_fd, const std::string& name, const char* attr) {
  UniqueFd fd(openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return "";
  char value[16];
  std::string via = "/proc/self/fd/" + std::to_string(fd.get());
  // getxattr follows the /proc link to the entry itself (a symlink stays a
  // symlink: O_NOFOLLOW opened the link, which has no user xattrs).
  ssize_t n = getxattr(via.c_str(), attr, value, sizeof value);
  return n > 0 ? std::string(value, static_cast<size_t>(n)) : "";
}

// The kernel writes a whiteout in the upper directory as a character device
// 0/0, never otherwise. (The "xwhiteout", an empty file with an
// overlay.whiteout xattr, is honoured in lower layers only: in the upper
// one it is the empty file the command saw. A command cannot make one
// either: the overlay escapes the overlay.* xattrs set through it.)
bool IsWhiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

bool IsOpaque(int dir_fd, const std::string& name) {
  std::string v = XattrAt(dir_fd, name, "user.overlay.opaque");
  if (v.empty()) v = XattrAt(dir_fd, name, "trusted.overlay.opaque");
  return v == "y";
}

// The entries of a tree: those inside a .git (the .git itself too) apart,
// as they are not mutations.
struct EntryCounts {
  int64_t entries = 0, in_git = 0;
};

// Counts the entries the tree below the directory at name (in dir_fd)
// holds, at any depth up to kMaxDepth, into counts (in_git: it is inside
// a .git): a listing, nothing stat'ed where the directory says what each
// entry is.
void CountBelow(int dir_fd, const std::string& name, size_t depth, bool in_git, EntryCounts* counts) {
  if (depth >= kMaxDepth) return;
  int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return;
  }
  std::vector<std::pair<std::string, bool>> dirs;  // and whether in a .git
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    bool git = in_git || strcmp(e->d_name, ".git") == 0;
    ++(git ? counts->in_git : counts->entries);
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      is_dir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) dirs.emplace_back(e->d_name, git);
  }
  for (const auto& [sub, git] : dirs) CountBelow(dirfd(d), sub, depth + 1, git, counts);
  closedir(d);
}

std::vector<std::string> ListDir(int dir_fd) {
  std::vector<std::string> names;
  int own = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return names;
  DIR* d = fdopendir(own);
  if (d == nullptr) {
    close(own);
    return names;
  }
  // The copy shares dir_fd's offset: from the start, whoever listed it before.
  rewinddir(d);
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class Applier {
 public:
  Applier(const OverlayApplyOptions& o, OverlayApplied* out) : o_(o), out_(out) {}

  void Dir(int upper_fd, int ws_fd, const std::string& rel, bool opaque, bool in_git) {
    std::vector<std::string> names = ListDir(upper_fd);
    if (opaque) {
      std::set<std::string> kept(names.begin(), names.end());
      for (const std::string& name : ListDir(ws_fd)) {
        if (kept.count(name) == 0 && !Skipped(rel, name)) Delete(ws_fd, name, Join(rel, name), in_git);
      }
    }
    for (const std::string& name : names) Entry(upper_fd, ws_fd, name, rel, in_git);
  }

 private:
  // Odin's own state at the root never lands, whatever the upper holds.
  static bool Skipped(const std::string& parent_rel, const std::string& name) {
    return parent_rel.empty() && name == ".odin";
  }
  bool MustNotLand(const std::string& rel) const { return o_.must_not_land && o_.must_not_land(rel); }
  // Whether the tree at name (an entry of dir_fd) holds anything that must
  // not go: deleting it would take a protected file with it.
  bool TreeMustNotLand(int dir_fd, const std::string& name, const std::string& rel, const struct stat& st) {
    if (MustNotLand(rel)) return true;
    if (!S_ISDIR(st.st_mode)) return false;
    if (TooDeep(rel)) return true;
    UniqueFd fd(openat(dir_fd, name.c_str(), kDirFlags));
    if (!fd.valid()) return true;
    for (const std::string& child : ListDir(fd.get())) {
      std::optional<struct stat> cst = StatAt(fd.get(), child);
      if (cst && TreeMustNotLand(fd.get(), child, Join(rel, child), *cst)) return true;
    }
    return false;
  }
  bool ChangedMeanwhile(const std::string& rel, const struct stat& st) const {
    if (o_.changed_meanwhile && o_.changed_meanwhile(rel)) return true;
    if (o_.changed_meanwhile && !o_.ctime_too) return false;
    return EntryStateOf(st).ctime_ns > o_.started_ns;
  }

  // Whether anything in the tree at name (an entry of dir_fd) changed
  // while the command ran. A directory's own ctime moves with its entries:
  // only what is in it counts.
  bool TreeChangedMeanwhile(int dir_fd, const std::string& name, const std::string& rel, const struct stat& st) {
    if (!S_ISDIR(st.st_mode)) return ChangedMeanwhile(rel, st);
    if (TooDeep(rel)) return true;
    if (o_.changed_meanwhile && o_.changed_meanwhile(rel)) return true;
    UniqueFd fd(openat(dir_fd, name.c_str(), kDirFlags));
    if (!fd.valid()) return true;  // cannot look: do not delete it blindly
    for (const std::string& child : ListDir(fd.get())) {
      std::optional<struct stat> cst = StatAt(fd.get(), child);
      if (cst && TreeChangedMeanwhile(fd.get(), child, Join(rel, child), *cst)) return true;
    }
    return false;
  }

  // Whether anything a command changed in a .git (the upper's, up_fd, at
  // rel; ws_fd the workspace's, or -1), its objects aside, changed in the
  // workspace meanwhile, or was deleted there meanwhile.
  bool GitChangedMeanwhile(int up_fd, int ws_fd, const std::string& rel, bool top) {
    if (TooDeep(rel)) return true;
    for (const std::string& child : ListDir(up_fd)) {
      if (top && child == "objects") continue;
      std::string crel = Join(rel, child);
      std::optional<struct stat> ust = StatAt(up_fd, child);
      std::optional<struct stat> wst = ws_fd >= 0 ? StatAt(ws_fd, child) : std::nullopt;
      if (!ust) continue;
      if (S_ISDIR(ust->st_mode) && (!wst || S_ISDIR(wst->st_mode))) {
        UniqueFd u(openat(up_fd, child.c_str(), kDirFlags));
        UniqueFd w(wst ? openat(ws_fd, child.c_str(), kDirFlags) : -1);
        if (!u.valid() || GitChangedMeanwhile(u.get(), w.get(), crel, false)) return true;
        continue;
      }
      if (wst ? ChangedMeanwhile(crel, *wst) : o_.gone_meanwhile && o_.gone_meanwhile(crel)) return true;
    }
    return false;
  }

  std::string IgnoredRoot(const std::string& rel, bool dir) {
    if (o_.ignore == nullptr) return "";
    std::string root = o_.ignore->IgnoredRoot(dir ? rel + "/" : rel);
    if (!root.empty() && root.back() == '/') root.pop_back();
    return root;
  }

  // The state of name in dir_fd with its hash or link target, and content.
  // rel: the workspace's file there (its hash may be known), or "".
  EntryState Describe(int dir_fd, const std::string& name, const struct stat& st, std::optional<std::string>* content,
                      const std::string& rel = "") {
    EntryState s = EntryStateOf(st);
    if (s.type == EntryType::kFile && !rel.empty() && s.size > o_.image_cap_bytes && o_.known_sha256) {
      // Too big to keep as a before-image: its hash is all, and may be known.
      s.sha256 = o_.known_sha256(rel, st);
      if (!s.sha256.empty()) return s;
    }
    if (s.type == EntryType::kFile) HashEntryAt(dir_fd, name.c_str(), o_.image_cap_bytes, &s, content);
    if (s.type == EntryType::kSymlink) {
      char target[4096];
      ssize_t n = readlinkat(dir_fd, name.c_str(), target, sizeof target);
      if (n > 0) s.link_target.assign(target, static_cast<size_t>(n));
    }
    return s;
  }

  // Records a change, or counts it (ignored, inside .git).
  void Record(PathChange change, bool in_git) {
    if (in_git) {
      ++out_->git_entries;
      out_->counted_paths.push_back(std::move(change.path));
      return;
    }
    const EntryState& s = change.after ? *change.after : *change.before;
    std::string root = IgnoredRoot(change.path, s.type == EntryType::kDirectory);
    if (!root.empty()) {
      ++out_->changes.ignored[root];
      out_->counted_paths.push_back(std::move(change.path));
      return;
    }
    out_->changes.changes.push_back(std::move(change));
  }

  // Whether the path is counted rather than described: no hashing there.
  bool Counted(const std::string& rel, bool dir, bool in_git) { return in_git || !IgnoredRoot(rel, dir).empty(); }

  // Records the tree at name (in ws_fd) as deleted and removes it.
  // Returns false if part of it could not be removed.
  bool RemoveTree(int ws_fd, const std::string& name, const std::string& rel, const struct stat& st, bool in_git) {
    bool ok = true;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd fd(openat(ws_fd, name.c_str(), kDirFlags));
      if (!fd.valid()) return false;
      for (const std::string& child : ListDir(fd.get())) {
        std::optional<struct stat> cst = StatAt(fd.get(), child);
        if (cst) ok = RemoveTree(fd.get(), child, Join(rel, child), *cst, in_git) && ok;
      }
    }
    PathChange c;
    c.path = rel;
    c.kind = ChangeKind::kDeleted;
    std::optional<std::string> content;
    if (Counted(rel, S_ISDIR(st.st_mode), in_git)) {
      c.before = EntryStateOf(st);
    } else {
      c.before = Describe(ws_fd, name, st, &content);
      c.before_content = std::move(content);
    }
    if (!ok || unlinkat(ws_fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
      out_->failed.push_back(rel + ": " + (ok ? std::string(strerror(errno)) : "not empty"));
      return false;
    }
    Record(std::move(c), in_git);
    return true;
  }

  void Delete(int ws_fd, const std::string& name, const std::string& rel, bool in_git) {
    std::optional<struct stat> st = StatAt(ws_fd, name);
    if (!st) return;  // gone already
    if (TreeMustNotLand(ws_fd, name, rel, *st)) {
      out_->discarded.push_back(rel);
      return;
    }
    if (TreeChangedMeanwhile(ws_fd, name, rel, *st)) {
      out_->conflicts.push_back(rel);
      return;
    }
    RemoveTree(ws_fd, name, rel, *st, in_git);
  }

  // Moves the command's version of a path that does not land into dir.
  static void KeepAside(int upper_fd, const std::string& name, const std::string& rel, const std::string& dir) {
    if (dir.empty()) return;
    std::string to = dir + "/" + rel;
    if (!MakeDirs(DirName(to), 0700).ok()) return;
    renameat(upper_fd, name.c_str(), AT_FDCWD, to.c_str());
  }
  void KeepConflict(int upper_fd, const std::string& name, const std::string& rel) {
    out_->conflicts.push_back(rel);
    KeepAside(upper_fd, name, rel, o_.conflicts_dir);
  }
  void Discard(int upper_fd, const std::string& name, const std::string& rel) {
    out_->discarded.push_back(rel);
    KeepAside(upper_fd, name, rel, o_.discarded_dir);
  }

  // What is neither a file, a directory nor a symlink (a whiteout aside).
  static bool Special(const struct stat& st) {
    return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) && !IsWhiteout(st);
  }

  // Whether the new tree at name (in upper_fd) can land whole: nothing in
  // it must not land, and it holds no whiteouts (which would land as
  // devices) and nothing else special.

  bool LandsWhole(int upper_fd, const std::string& name, const std::string& rel) {
    if (MustNotLand(rel) || TooDeep(rel)) return false;
    UniqueFd fd(openat(upper_fd, name.c_str(), kDirFlags));
    if (!fd.valid()) return false;
    for (const std::string& child : ListDir(fd.get())) {
      std::optional<struct stat> cst = StatAt(fd.get(), child);
      if (!cst || IsWhiteout(*cst) || Special(*cst)) return false;
      if (S_ISLNK(cst->st_mode) && (child == ".git" || rel == ".git" || rel.ends_with("/.git") ||
                                    rel.starts_with(".git/") || rel.find("/.git/") != std::string::npos)) {
        return false;
      }
      if (S_ISREG(cst->st_mode) && (cst->st_mode & (S_ISUID | S_ISGID)) != 0) return false;
      if (S_ISDIR(cst->st_mode) ? !LandsWhole(fd.get(), child, Join(rel, child)) : MustNotLand(Join(rel, child))) {
        return false;
      }
    }
    return true;
  }

  // Records every entry of the new tree at name (in upper_fd) as created.
  void RecordCreatedTree(int upper_fd, const std::string& name, const std::string& rel, const struct stat& st,
                         bool in_git) {
    // Counted, not described: so is all below it (git ignores nothing
    // below an ignored directory but by it), counted by a listing.
    std::string root = in_git ? "" : IgnoredRoot(rel, S_ISDIR(st.st_mode));
    if (in_git || !root.empty()) {
      EntryCounts n;
      ++(in_git ? n.in_git : n.entries);
      if (S_ISDIR(st.st_mode)) CountBelow(upper_fd, name, Depth(rel), in_git, &n);
      out_->git_entries += n.in_git;
      if (n.entries > 0) out_->changes.ignored[root] += n.entries;
      out_->counted_trees.push_back(rel);
      return;
    }
    PathChange c;
    c.path = rel;
    c.kind = ChangeKind::kCreated;
    std::optional<std::string> content;
    c.after = Describe(upper_fd, name, st, &content);
    c.after_content = std::move(content);
    Record(std::move(c), in_git);
    if (!S_ISDIR(st.st_mode)) return;
    UniqueFd fd(openat(upper_fd, name.c_str(), kDirFlags));
    if (!fd.valid()) return;
    for (const std::string& child : ListDir(fd.get())) {
      std::optional<struct stat> cst = StatAt(fd.get(), child);
      if (cst) RecordCreatedTree(fd.get(), child, Join(rel, child), *cst, in_git || child == ".git");
    }
  }

  // Copies a file or symlink at name (upper_fd) into ws_fd under name,
  // through a temporary name and a rename: for an upper directory on
  // another file system.
  bool CopyInto(int upper_fd, int ws_fd, const std::string& name, const struct stat& st) {
    std::string tmp = ".odin-apply-" + std::to_string(getpid()) + "-" + name;
    if (tmp.size() > 250) tmp = ".odin-apply-" + std::to_string(getpid());
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlinkat(upper_fd, name.c_str(), target, sizeof target - 1);
      if (n < 0) return false;
      target[n] = '\0';
      if (symlinkat(target, ws_fd, tmp.c_str()) != 0) return false;
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd in(openat(upper_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      UniqueFd dst(
          openat(ws_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 07777));
      if (!in.valid() || !dst.valid()) return false;
      char buf[64 * 1024];
      ssize_t n;
      while ((n = read(in.get(), buf, sizeof buf)) > 0) {
        if (!WriteAll(dst.get(), std::string_view(buf, static_cast<size_t>(n)), "apply").ok()) n = -1;
        if (n < 0) break;
      }
      if (n < 0 || fchmod(dst.get(), st.st_mode & 07777) != 0) {
        unlinkat(ws_fd, tmp.c_str(), 0);
        return false;
      }
    } else {
      errno = EOPNOTSUPP;
      return false;
    }
    if (renameat(ws_fd, tmp.c_str(), ws_fd, name.c_str()) != 0) {
      int e = errno;
      unlinkat(ws_fd, tmp.c_str(), 0);
      errno = e;
      return false;
    }
    return true;
  }

  // Lands the new directory at name: whole, by one rename, where it can;
  // else made empty and filled entry by entry.
  void LandDirectory(int upper_fd, int ws_fd, const std::string& name, const std::string& rel, const struct stat& st,
                     bool in_git) {
    if (LandsWhole(upper_fd, name, rel)) {
      if (renameat(upper_fd, name.c_str(), ws_fd, name.c_str()) == 0) {
        // Described where it landed: the same inodes, now in the workspace.
        RecordCreatedTree(ws_fd, name, rel, st, in_git);
        return;
      }
      if (errno != EXDEV) {
        out_->failed.push_back(rel + ": " + strerror(errno));
        return;
      }
    }
    if (MustNotLand(rel)) {
      Discard(upper_fd, name, rel);
      return;
    }
    if (mkdirat(ws_fd, name.c_str(), st.st_mode & 07777) != 0 && errno != EEXIST) {
      out_->failed.push_back(rel + ": " + strerror(errno));
      return;
    }
    std::optional<struct stat> made = StatAt(ws_fd, name);
    if (!made || !S_ISDIR(made->st_mode)) {
      out_->failed.push_back(rel + ": not a directory");
      return;
    }
    PathChange c;
    c.path = rel;
    c.kind = ChangeKind::kCreated;
    c.after = EntryStateOf(*made);
    Record(std::move(c), in_git);
    UniqueFd up(openat(upper_fd, name.c_str(), kDirFlags));
    UniqueFd ws(openat(ws_fd, name.c_str(), kDirFlags));
    if (!up.valid() || !ws.valid()) {
      out_->failed.push_back(rel + ": cannot open");
      return;
    }
    for (const std::string& child : ListDir(up.get())) {
      std::optional<struct stat> cst = StatAt(up.get(), child);
      if (!cst || IsWhiteout(*cst)) continue;  // nothing below a new directory to hide
      Entry(up.get(), ws.get(), child, rel, in_git);
    }
  }

  void Entry(int upper_fd, int ws_fd, const std::string& name, const std::string& parent_rel, bool in_git) {
    if (Skipped(parent_rel, name)) return;
    std::string rel = Join(parent_rel, name);
    if (TooDeep(rel)) {
      out_->failed.push_back(parent_rel + ": nested too deep (more than " + std::to_string(kMaxDepth) + " levels)");
      return;
    }
    bool child_in_git = in_git || name == ".git";
    std::optional<struct stat> ust = StatAt(upper_fd, name);
    if (!ust) return;
    if (IsWhiteout(*ust)) {
      Delete(ws_fd, name, rel, child_in_git);
      return;
    }
    if (Special(*ust) || (child_in_git && S_ISLNK(ust->st_mode))) {
      // A FIFO, socket or device never lands: the host side would block
      // on one (libgit2 opening a ".gitignore" FIFO), or open a device. Nor
      // does a symlink inside a .git (git makes none there; libgit2 reads
      // the index and objects on the host).
      Discard(upper_fd, name, rel);
      return;
    }
    std::optional<struct stat> wst = StatAt(ws_fd, name);
    if (S_ISDIR(ust->st_mode) && wst && S_ISDIR(wst->st_mode)) {
      // Merged: the directory stays; its mode may have changed.
      if ((ust->st_mode & 07777) != (wst->st_mode & 07777)) {
        if (MustNotLand(rel)) {
          out_->discarded.push_back(rel);
        } else if (ChangedMeanwhile(rel, *wst)) {
          out_->conflicts.push_back(rel);  // its mode changed meanwhile: not put back
        } else if (fchmodat(ws_fd, name.c_str(), ust->st_mode & 07777, 0) == 0) {
          PathChange c;
          c.path = rel;
          c.kind = ChangeKind::kModified;
          c.before = EntryStateOf(*wst);
          c.after = EntryStateOf(*ust);
          Record(std::move(c), child_in_git);
        }
      }
      UniqueFd up(openat(upper_fd, name.c_str(), kDirFlags));
      UniqueFd ws(openat(ws_fd, name.c_str(), kDirFlags));
      if (!up.valid() || !ws.valid()) {
        out_->failed.push_back(rel + ": cannot open");
        return;
      }
      if (name == ".git" && !in_git && GitChangedMeanwhile(up.get(), ws.get(), rel, /*top=*/true)) {
        // A git operation lands whole or not at all: where anything of it
        // but its objects (which only add) changed meanwhile, none of the
        // rest lands (an index without its ref, or a ref without its
        // index, would turn the next commit into a revert).
        for (const std::string& child : ListDir(up.get())) {
          if (child == "objects") {
            Entry(up.get(), ws.get(), child, rel, /*in_git=*/true);
          } else if (StatAt(up.get(), child)) {
            KeepConflict(up.get(), child, Join(rel, child));
          }
        }
        return;
      }
      Dir(up.get(), ws.get(), rel, IsOpaque(upper_fd, name), child_in_git);
      return;
    }
    if (MustNotLand(rel) || (wst && TreeMustNotLand(ws_fd, name, rel, *wst))) {
      Discard(upper_fd, name, rel);
      return;
    }
    // Changed meanwhile, or gone meanwhile (another command deleted it:
    // this one's copy would bring it back).
    if (wst ? TreeChangedMeanwhile(ws_fd, name, rel, *wst) : o_.gone_meanwhile && o_.gone_meanwhile(rel)) {
      KeepConflict(upper_fd, name, rel);
      return;
    }
    // What was there before: a directory replaced by something else is a
    // deletion of its tree; a file or link is this path's before.
    std::optional<EntryState> before;
    std::optional<std::string> before_content;
    bool counted = Counted(rel, S_ISDIR(ust->st_mode), child_in_git);
    if (wst && S_ISDIR(wst->st_mode)) {
      if (!RemoveTree(ws_fd, name, rel, *wst, child_in_git)) return;
      wst.reset();
    } else if (wst && !S_ISDIR(ust->st_mode)) {
      before = counted ? EntryStateOf(*wst) : Describe(ws_fd, name, *wst, &before_content, rel);
    } else if (wst) {
      // A file replaced by a directory.
      PathChange gone;
      gone.path = rel;
      gone.kind = ChangeKind::kDeleted;
      gone.before = counted ? EntryStateOf(*wst) : Describe(ws_fd, name, *wst, &before_content);
      gone.before_content = std::move(before_content);
      if (unlinkat(ws_fd, name.c_str(), 0) != 0) {
        out_->failed.push_back(rel + ": " + strerror(errno));
        return;
      }
      Record(std::move(gone), child_in_git);
      before_content.reset();
    }
    if (S_ISDIR(ust->st_mode)) {
      LandDirectory(upper_fd, ws_fd, name, rel, *ust, child_in_git);
      return;
    }
    // No set-user-ID or set-group-ID program lands: outside the sandbox it
    // would run with its owner's rights (root's, where Odin runs as root).
    if (S_ISREG(ust->st_mode) && (ust->st_mode & (S_ISUID | S_ISGID)) != 0) {
      fchmodat(upper_fd, name.c_str(), ust->st_mode & 01777, 0);
      ust->st_mode &= ~static_cast<mode_t>(S_ISUID | S_ISGID);
    }
    std::optional<std::string> after_content;
    EntryState after = counted ? EntryStateOf(*ust) : Describe(upper_fd, name, *ust, &after_content);
    if (renameat(upper_fd, name.c_str(), ws_fd, name.c_str()) != 0 &&
        (errno != EXDEV || !CopyInto(upper_fd, ws_fd, name, *ust))) {
      out_->failed.push_back(rel + ": " + strerror(errno));
      return;
    }
    // Copied up and written back unchanged (touch, an editor's save): not a
    // change, though the new times landed.
    if (before && !counted && before->type == after.type && before->mode == after.mode &&
        ((after.type == EntryType::kFile && !after.sha256.empty() && before->sha256 == after.sha256) ||
         (after.type == EntryType::kSymlink && before->link_target == after.link_target))) {
      out_->unchanged.push_back(rel);
      return;
    }
    PathChange c;
    c.path = rel;
    c.kind = before ? ChangeKind::kModified : ChangeKind::kCreated;
    if (before && before->type != after.type) {
      // Another kind of thing: a deletion and a creation.
      PathChange gone;
      gone.path = rel;
      gone.kind = ChangeKind::kDeleted;
      gone.before = std::move(before);
      gone.before_content = std::move(before_content);
      Record(std::move(gone), child_in_git);
      c.kind = ChangeKind::kCreated;
    } else {
      c.before = std::move(before);
      c.before_content = std::move(before_content);
    }
    c.after = std::move(after);
    c.after_content = std::move(after_content);
    Record(std::move(c), child_in_git);
  }

  const OverlayApplyOptions& o_;
  OverlayApplied* out_;
};

// Below dir (up_fd in the upper directory, ws_fd the workspace's same
// directory), for UpperPaths.
void ListUpper(int up_fd, int ws_fd, const std::string& rel, GitIgnore* ignore, std::vector<std::string>* out) {
  for (const std::string& name : ListDir(up_fd)) {
    std::string crel = Join(rel, name);
    out->push_back(crel);
    std::optional<struct stat> st = StatAt(up_fd, name);
    if (!st || !S_ISDIR(st->st_mode) || name == ".git" || TooDeep(crel)) continue;
    // What is in an ignored directory is counted by it, never looked at
    // one by one.
    if (ignore != nullptr && !ignore->IgnoredRoot(crel + "/").empty()) continue;
    UniqueFd ws_child(openat(ws_fd, name.c_str(), kDirFlags));
    if (!ws_child.valid()) continue;  // new here: the workspace has nothing below it
    UniqueFd up_child(openat(up_fd, name.c_str(), kDirFlags));
    if (up_child.valid()) ListUpper(up_child.get(), ws_child.get(), crel, ignore, out);
  }
}

}  // namespace

std::vector<std::string> UpperPaths(const std::string& workspace, const std::string& upper, GitIgnore* ignore) {
  std::vector<std::string> out;
  UniqueFd up = OpenUpper(upper);
  UniqueFd ws(open(workspace.c_str(), kDirFlags));
  if (up.valid() && ws.valid()) ListUpper(up.get(), ws.get(), "", ignore, &out);
  return out;
}

OverlayApplied ApplyOverlayUpper(const std::string& workspace, const std::string& upper,
                                 const OverlayApplyOptions& options) {
  OverlayApplied out;
  UniqueFd up = OpenUpper(upper);
  UniqueFd ws(open(workspace.c_str(), kDirFlags));
  if (!up.valid() || !ws.valid()) {
    out.failed.push_back(std::string(!up.valid() ? "upper directory " + upper : "workspace " + workspace) + ": " +
                         strerror(errno));
    return out;
  }
  Applier(options, &out).Dir(up.get(), ws.get(), "", false, false);
  std::stable_sort(out.changes.changes.begin(), out.changes.changes.end(),
                   [](const PathChange& a, const PathChange& b) { return a.path < b.path; });
  return out;
}

}  // namespace odin
