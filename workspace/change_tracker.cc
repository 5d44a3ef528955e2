#include "workspace/change_tracker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include "base/sha256.h"
#include "workspace/entry_state.h"
#include "workspace/git_ignore.h"
#include "workspace/watch_coverage.h"

namespace odin {

namespace {

// Whether what stat says differs from what was seen. A directory's own
// times move whenever an entry inside it does: only its mode counts.
bool MetadataDiffers(const EntryState& a, const EntryState& b) {
  if (a.type != b.type || a.mode != b.mode) return true;
  if (a.type == EntryType::kDirectory) return false;
  return a.size != b.size || a.mtime_ns != b.mtime_ns || a.ctime_ns != b.ctime_ns || a.ino != b.ino;
}

std::string ReadLinkAt(int dir_fd, const char* name) {
  char target[4096];
  ssize_t n = readlinkat(dir_fd, name, target, sizeof target);
  return std::string(target, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

ChangeTracker::ChangeTracker(std::string root, std::unique_ptr<GitIgnore> ignore, ChangeTrackerOptions options)
    : root_(std::move(root)), ignore_(std::move(ignore)), o_(options) {
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root_);
  if (files.ok()) files_.emplace(std::move(*files));
}

bool ChangeTracker::StatNoFollow(const std::string& rel, struct stat* st) const {
  if (!files_) return false;
  size_t slash = rel.rfind('/');
  StatusOr<UniqueFd> dir = files_->OpenDirectory(slash == std::string::npos ? "" : rel.substr(0, slash));
  if (!dir.ok()) return false;
  std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return fstatat(dir->get(), name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0;
}

void ChangeTracker::Keep(const std::string& path, const std::string& content) {
  Forget(path);
  int64_t size = static_cast<int64_t>(content.size());
  if (size > o_.image_cap_bytes || images_bytes_ + size > o_.images_total_bytes) return;  // past a cap: not copied
  images_bytes_ += size;
  images_[path] = content;
}

void ChangeTracker::Forget(const std::string& path) {
  auto it = images_.find(path);
  if (it == images_.end()) return;
  images_bytes_ -= static_cast<int64_t>(it->second.size());
  images_.erase(it);
}

void ChangeTracker::Hash(int dir_fd, const char* name, EntryState* state, std::optional<std::string>* content) {
  HashEntryAt(dir_fd, name, o_.image_cap_bytes, state, content);
}

std::string ChangeTracker::IgnoredRootOf(const std::string& rel, EntryType type) {
  if (!ignore_) return "";
  // A directory asks with a trailing slash: patterns like "build/" match
  // directories only.
  std::string root = ignore_->IgnoredRoot(type == EntryType::kDirectory ? rel + "/" : rel);
  if (!root.empty() && root.back() == '/') root.pop_back();
  return root;
}

void ChangeTracker::Add(PathChange change, const std::string& ignored_root, ChangeSet* out) {
  if (!ignored_root.empty()) {
    ++out->ignored[ignored_root];
    return;
  }
  // A file changed whose bytes before nobody kept: git's index may have
  // them (FromIndex, once the look is done).
  if (ignore_ && change.before && change.before->type == EntryType::kFile && !change.before_content) {
    from_index_.push_back(out->changes.size());
  }
  out->changes.push_back(std::move(change));
}

std::string ChangeTracker::KnownSha256(const std::string& path, const struct stat& st) const {
  uint32_t id = table_.FindPath(path);
  if (id == EntryTable::kNone || id == EntryTable::kRoot || MetadataDiffers(StateOf(id), EntryStateOf(st))) return "";
  auto it = sha256_.find(id);
  return it == sha256_.end() ? "" : it->second;
}

void ChangeTracker::EraseAsDeleted(uint32_t id, ChangeSet* out) {
  // Under an ignored directory, everything is ignored there: asked once.
  const std::string top = IgnoredRootOf(table_.PathOf(id), static_cast<EntryType>(table_.meta(id).type));
  table_.Erase(id, [&](uint32_t gone) {
    PathChange c;
    c.path = table_.PathOf(gone);
    c.kind = ChangeKind::kDeleted;
    c.before = StateOf(gone);
    ForgetEntry(gone);
    if (auto img = images_.find(c.path); img != images_.end()) c.before_content = img->second;
    Forget(c.path);
    std::string root = top.empty() ? IgnoredRootOf(c.path, c.before->type) : top;
    Add(std::move(c), root, out);
  });
}

uint32_t ChangeTracker::Observe(uint32_t parent, int dir_fd, const char* name, const std::string& parent_rel,
                                const struct stat& st, ChangeSet* out) {
  EntryState now = EntryStateOf(st);
  uint32_t id = table_.Find(parent, name);
  if (id == EntryTable::kNone) {
    id = table_.Add(parent, name);
    table_.scan(id) = static_cast<uint32_t>(scans_);
    if (scans_ == 1) {
      SetState(id, now);
      return id;  // the first look: the reference, not a change
    }
    std::string rel = parent_rel.empty() ? std::string(name) : parent_rel + "/" + name;
    PathChange c;
    c.path = rel;
    c.kind = ChangeKind::kCreated;
    std::string root = ignored_hint_.empty() ? IgnoredRootOf(rel, now.type) : ignored_hint_;
    if (now.type == EntryType::kFile && root.empty()) Hash(dir_fd, name, &now, &c.after_content);
    if (now.type == EntryType::kSymlink) now.link_target = ReadLinkAt(dir_fd, name);
    if (c.after_content) Keep(rel, *c.after_content);
    SetState(id, now);
    c.after = std::move(now);
    Add(std::move(c), root, out);
    return id;
  }
  table_.scan(id) = static_cast<uint32_t>(scans_);
  EntryState before = StateOf(id);
  if (!MetadataDiffers(before, now)) return id;
  std::string rel = parent_rel.empty() ? std::string(name) : parent_rel + "/" + name;
  std::optional<std::string> before_content;
  if (auto img = images_.find(rel); img != images_.end()) before_content = img->second;
  std::string root = ignored_hint_.empty() ? IgnoredRootOf(rel, now.type) : ignored_hint_;
  std::optional<std::string> content;
  if (now.type == EntryType::kFile && root.empty()) Hash(dir_fd, name, &now, &content);
  if (now.type == EntryType::kSymlink) now.link_target = ReadLinkAt(dir_fd, name);
  SetState(id, now);
  if (content) {
    Keep(rel, *content);
  } else {
    Forget(rel);
  }
  if (before.type != now.type) {
    // Replaced by another kind of thing: a deletion and a creation.
    PathChange gone;
    gone.path = rel;
    gone.kind = ChangeKind::kDeleted;
    std::string gone_root = ignored_hint_.empty() ? IgnoredRootOf(rel, before.type) : ignored_hint_;
    gone.before = std::move(before);
    gone.before_content = std::move(before_content);
    Add(std::move(gone), gone_root, out);
    PathChange made;
    made.path = rel;
    made.kind = ChangeKind::kCreated;
    made.after = std::move(now);
    made.after_content = std::move(content);
    Add(std::move(made), root, out);
    return id;
  }
  // Touched, not changed: same bytes (when the bytes before are known), same
  // mode, same target.
  bool same_bytes = now.type == EntryType::kFile && !before.sha256.empty() && before.sha256 == now.sha256;
  bool same_link =
      now.type == EntryType::kSymlink && !before.link_target.empty() && before.link_target == now.link_target;
  if (before.mode == now.mode && (same_bytes || same_link)) return id;
  if (now.type == EntryType::kDirectory && before.mode == now.mode) return id;
  PathChange c;
  c.path = rel;
  c.kind = ChangeKind::kModified;
  c.before = std::move(before);
  c.after = std::move(now);
  c.before_content = std::move(before_content);
  c.after_content = std::move(content);
  Add(std::move(c), root, out);
  return id;
}

void ChangeTracker::Scan(int dir_fd, const std::string& rel, uint32_t dir, size_t* count, ChangeSet* out) {
  // A command can nest directories without end; each level is a frame
  // here. Past 256 levels the tree is not looked at (and the look says it
  // is incomplete).
  if (std::count(rel.begin(), rel.end(), '/') >= 256 || stopped()) {
    out->truncated = true;
    return;
  }
  if (progress_ && (++directories_read_ & 63) == 0) progress_();
  int own = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return;
  DIR* d = fdopendir(own);
  if (d == nullptr) {
    close(own);
    return;
  }
  std::vector<std::pair<std::string, uint32_t>> dirs;
  while (dirent* e = readdir(d)) {
    const char* name = e->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    // Git's own directories, at any depth, and Odin's state are not part of
    // the workspace's content.
    if (strcmp(name, ".git") == 0 || (rel.empty() && strcmp(name, ".odin") == 0)) continue;
    if (++*count > o_.max_entries) {
      out->truncated = true;
      break;
    }
    struct stat st;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    uint32_t id = Observe(dir, dir_fd, name, rel, st, out);
    if (S_ISDIR(st.st_mode) && id != EntryTable::kNone) {
      std::string child = rel.empty() ? std::string(name) : rel + "/" + name;
      Watch(child);
      dirs.emplace_back(std::move(child), id);
    }
  }
  for (const auto& [child, id] : dirs) {
    if (out->truncated) break;
    const char* name = child.c_str() + (rel.empty() ? 0 : rel.size() + 1);
    int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    Scan(fd, child, id, count, out);
    close(fd);
  }
  closedir(d);
}

namespace {

constexpr uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO |
                                IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW |
                                IN_EXCL_UNLINK;

bool Skipped(const std::string& rel) {
  // .git at any depth, .odin at the root.
  if (rel == ".odin" || rel.rfind(".odin/", 0) == 0) return true;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    if (rel.compare(start, end - start, ".git") == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

void ChangeTracker::Watch(const std::string& rel) {
  if (inotify_fd_ < 0) return;
  // The directory opened through the layer, watched through its fd: a
  // directory on the way swapped for a symlink is not followed.
  StatusOr<UniqueFd> dir = files_ ? files_->OpenDirectory(rel) : Status::Unavailable("watch", "no workspace");
  if (!dir.ok()) return;
  // (The fd's magic link must be followed: no IN_DONT_FOLLOW here.)
  std::string path = "/proc/self/fd/" + std::to_string(dir->get());
  int wd = inotify_add_watch(inotify_fd_, path.c_str(), kWatchMask & ~IN_DONT_FOLLOW);
  if (wd < 0) {
    // Out of watches (fs.inotify.max_user_watches) or refused: full looks
    // from now on, and whoever asks is told why.
    int error = errno;
    unwatched_ = error == ENOSPC ? "the inotify watch limit was reached (fs.inotify.max_user_watches = " +
                                       std::to_string(InotifyWatchLimit()) + ", after " +
                                       std::to_string(watched_.size()) + " directories)"
                                 : std::string("inotify refused a watch: ") + strerror(error);
    watch_refused_ = true;
    StopWatching();
    return;
  }
  watched_[wd] = rel;
}

void ChangeTracker::StartWatching() {
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    unwatched_ = std::string("inotify: ") + strerror(errno);
    watch_refused_ = true;
    return;
  }
  unwatched_.clear();
}

void ChangeTracker::Unwatched(const std::string& why) {
  unwatched_ = why;
  StopWatching();
}

void ChangeTracker::StopWatching() {
  if (inotify_fd_ >= 0) close(inotify_fd_);
  inotify_fd_ = -1;
  watched_.clear();
}

void ChangeTracker::ReleaseWatches() {
  if (inotify_fd_ < 0) return;
  int fd = inotify_fd_;
  inotify_fd_ = -1;
  // Removing the watches hands their marks to the kernel's reaper, which
  // waits for the grace period in the background; by the time the fd is
  // closed there is usually nothing left to wait for.
  for (const auto& [wd, dir] : watched_) inotify_rm_watch(fd, wd);
  watched_.clear();
  std::thread([fd] { close(fd); }).detach();  // touches nothing but the fd
}

ChangeTracker::~ChangeTracker() { ReleaseWatches(); }

void ChangeTracker::FullScan(ChangeSet* out) {
  reported_all_ = true;  // what changed was looked for, not heard of
  unscanned_.clear();    // every directory is read now
  StatusOr<UniqueFd> root = files_ ? files_->OpenDirectory("") : Status::Unavailable("scan", "no workspace");
  if (!root.ok()) return;
  int fd = root->release();
  size_t count = 0;
  Watch("");
  Scan(fd, "", EntryTable::kRoot, &count, out);
  close(fd);
  // What was there and is not any more (a directory gone takes what was
  // under it along). A look cut short cannot tell.
  if (!out->truncated) {
    std::vector<uint32_t> unseen;
    table_.ForEach([&](uint32_t id) {
      if (table_.scan(id) != static_cast<uint32_t>(scans_)) unseen.push_back(id);
    });
    for (uint32_t id : unseen) {
      if (table_.live(id)) EraseAsDeleted(id, out);
    }
  }
}

void ChangeTracker::Deleted(const std::string& rel, ChangeSet* out) {
  uint32_t id = table_.FindPath(rel);
  if (id != EntryTable::kNone && id != EntryTable::kRoot) EraseAsDeleted(id, out);
}

uint32_t ChangeTracker::DirectoryEntry(const std::string& rel) {
  uint32_t id = table_.FindPath(rel);
  if (id != EntryTable::kNone)
    return table_.meta(id).type == static_cast<uint8_t>(EntryType::kDirectory) || id == EntryTable::kRoot
               ? id
               : EntryTable::kNone;
  size_t slash = rel.rfind('/');
  std::string parent_rel = slash == std::string::npos ? "" : rel.substr(0, slash);
  uint32_t parent = DirectoryEntry(parent_rel);
  struct stat st;
  if (parent == EntryTable::kNone || !StatNoFollow(rel, &st) || !S_ISDIR(st.st_mode)) return EntryTable::kNone;
  id = table_.Add(parent, slash == std::string::npos ? rel : rel.substr(slash + 1));
  table_.scan(id) = static_cast<uint32_t>(scans_);
  SetState(id, EntryStateOf(st));
  Watch(rel);
  // Not read yet: what else is in it is read when the kernel's word on it
  // comes (LookAt), as for any new directory.
  unscanned_.insert(id);
  return id;
}

void ChangeTracker::LookAt(const std::string& rel, ChangeSet* out) {
  if (rel.empty() || Skipped(rel)) return;
  // Through the layer: a directory on the way that is a symlink now (a
  // command swapped it) holds nothing of the workspace's.
  size_t slash = rel.rfind('/');
  std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  StatusOr<UniqueFd> parent = files_ ? files_->OpenDirectory(slash == std::string::npos ? "" : rel.substr(0, slash))
                                     : Status::Unavailable("look", "no workspace");
  struct stat st;
  if (!parent.ok() || fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Deleted(rel, out);
  std::string parent_rel = slash == std::string::npos ? "" : rel.substr(0, slash);
  uint32_t parent_id = table_.FindPath(parent_rel);
  if (parent_id == EntryTable::kNone) {
    // Its directory is not known yet: looking at that looks at it too.
    if (!parent_rel.empty()) LookAt(parent_rel, out);
    return;
  }
  int dir_fd = parent->release();
  uint32_t known = table_.Find(parent_id, name);
  // (A directory a write made and nobody read yet counts as new here.)
  bool was_dir = known != EntryTable::kNone && table_.meta(known).type == static_cast<uint8_t>(EntryType::kDirectory) &&
                 unscanned_.erase(known) == 0;
  if (was_dir && !S_ISDIR(st.st_mode)) Deleted(rel, out);  // a directory replaced: what was under it is gone
  uint32_t id = Observe(parent_id, dir_fd, name.c_str(), parent_rel, st, out);
  if (S_ISDIR(st.st_mode) && !was_dir && id != EntryTable::kNone) {
    // A directory new here (made, or moved in): everything in it, watched.
    int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      Watch(rel);
      size_t count = 0;
      // A new tree under an ignored directory (an npm install) is all
      // ignored there: git's rules are asked once, not for each entry.
      ignored_hint_ = IgnoredRootOf(rel, EntryType::kDirectory);
      Scan(fd, rel, id, &count, out);
      ignored_hint_.clear();
      close(fd);
    }
  }
  close(dir_fd);
}

bool ChangeTracker::ReadEvents() {
  if (inotify_fd_ < 0) return false;
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + e->len;
      if (e->mask & IN_Q_OVERFLOW) {
        overflowed_ = true;
        continue;
      }
      auto w = watched_.find(e->wd);
      if (w == watched_.end()) continue;
      if (e->mask & IN_IGNORED) {
        watched_.erase(w);
        continue;
      }
      if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        if (!w->second.empty()) pending_.insert(w->second);
        continue;
      }
      if (e->len == 0) continue;
      pending_.insert(w->second.empty() ? std::string(e->name) : w->second + "/" + e->name);
    }
  }
  if (overflowed_) reported_all_ = true;
  reported_.insert(pending_.begin(), pending_.end());
  if (reported_.size() > kMaxReported) {
    // Nobody took them for long (commands over overlays never ask): the
    // next taker looks for itself rather than this growing without end.
    reported_.clear();
    reported_all_ = true;
  }
  return !overflowed_;
}

bool ChangeTracker::DirtyScan(ChangeSet* out) {
  if (!ReadEvents()) {
    pending_.clear();
    overflowed_ = false;
    return false;
  }
  std::set<std::string> dirty;
  dirty.swap(pending_);
  for (const std::string& rel : dirty) LookAt(rel, out);
  return true;
}

bool ChangeTracker::TakeReported(std::set<std::string>* out) {
  if (inotify_fd_ >= 0) ReadEvents();
  bool trusted = !reported_all_ && inotify_fd_ >= 0;
  out->swap(reported_);
  reported_.clear();
  reported_all_ = false;
  return trusted;
}

ChangeSet ChangeTracker::Rescan(bool full) {
  ++scans_;
  ChangeSet out;
  if (scans_ == 1) {
    // The reference, with a watch on every directory from here on.
    if (o_.watch_from_entries == 0) StartWatching();
    FullScan(&out);
    if (inotify_fd_ < 0 && o_.watch_from_entries > 0 && table_.size() >= o_.watch_from_entries && !out.truncated) {
      // A large tree: watched after all (nothing has run since the look).
      StartWatching();
      Watch("");
      table_.ForEach([&](uint32_t id) {
        if (table_.meta(id).type == static_cast<uint8_t>(EntryType::kDirectory)) Watch(table_.PathOf(id));
      });
    }
    cut_short_ = out.truncated;
    if (out.truncated) Unwatched("the tree has more than " + std::to_string(o_.max_entries) + " entries");
  } else if (full || inotify_fd_ < 0 || !DirtyScan(&out)) {
    // Asked to, no watches, or they lost events: look at everything again.
    out = ChangeSet();
    from_index_.clear();
    const bool overflowed = !full && inotify_fd_ >= 0;
    if (!full) StopWatching();
    // After a lost queue the watches are made again as the look goes: one
    // overflow (a checkout of many files) does not make every later look a
    // full one.
    if (overflowed && !watch_refused_) StartWatching();
    FullScan(&out);
    cut_short_ = out.truncated;
    if (out.truncated) Unwatched("the tree has more than " + std::to_string(o_.max_entries) + " entries");
  }
  FromIndex(&out);
  std::stable_sort(out.changes.begin(), out.changes.end(),
                   [](const PathChange& a, const PathChange& b) { return a.path < b.path; });
  // The index as it is after this look is the one the next look's
  // before-images come from.
  if (ignore_ && (o_.remember_git_index || ignore_->index_remembered()) && !stopped()) ignore_->RememberIndex();
  return out;
}

ChangeSet ChangeTracker::LookAtPaths(const std::vector<std::string>& paths) {
  ChangeSet out;
  if (scans_ == 0) return out;
  ++scans_;  // a look, as a Rescan that the kernel's word makes short
  for (const std::string& rel : paths) {
    // Past the entries a cut-short look took in, an entry unknown here is
    // not new: it was never looked at.
    if (cut_short_ && table_.FindPath(rel) == EntryTable::kNone) continue;
    LookAt(rel, &out);
  }
  FromIndex(&out);
  std::stable_sort(out.changes.begin(), out.changes.end(),
                   [](const PathChange& a, const PathChange& b) { return a.path < b.path; });
  return out;
}

bool ChangeTracker::NoteWrite(const std::string& path, const std::string& sha256, const std::string* content,
                              std::optional<Written> seen) {
  if (scans_ == 0) return true;    // the first look will see it
  if (Skipped(path)) return true;  // .git and .odin are not looked at
  struct stat st;
  uint32_t id = table_.FindPath(path);
  bool exists = StatNoFollow(path, &st);
  if (!exists && !seen) {
    if (id != EntryTable::kNone && id != EntryTable::kRoot)
      table_.Erase(id, [this](uint32_t gone) { ForgetEntry(gone); });
    Forget(path);
    return true;
  }
  if (id == EntryTable::kNone) {
    // A write that made its directories made them for itself: they are
    // taken as they are now (and watched), not as changes of their own.
    size_t slash = path.rfind('/');
    uint32_t parent = DirectoryEntry(slash == std::string::npos ? "" : path.substr(0, slash));
    if (parent == EntryTable::kNone) return !seen;
    id = table_.Add(parent, slash == std::string::npos ? path : path.substr(slash + 1));
  }
  EntryState state = exists ? EntryStateOf(st) : EntryState{};
  bool as_seen = !seen || (exists && state.type == EntryType::kFile && state.size == seen->size &&
                           state.mtime_ns == seen->mtime_ns && (seen->ino == 0 || state.ino == seen->ino));
  if (!as_seen) {
    // Not the file its writer saw: written again (or removed) since, or
    // a copy. The entry is recorded as the writer saw it, so the next look
    // finds it changed and hashes it: a change it finds is from this
    // content, and external.
    state.type = EntryType::kFile;
    state.size = seen->size;
    state.mtime_ns = seen->mtime_ns;
    state.ctime_ns = 0;
    if (seen->ino != 0) state.ino = seen->ino;
  }
  state.sha256 = sha256;
  SetState(id, state);
  table_.scan(id) = static_cast<uint32_t>(scans_);
  if (content != nullptr) {
    Keep(path, *content);
  } else {
    Forget(path);
  }
  return as_seen;
}

void ChangeTracker::NoteRead(const std::string& path, const std::string& sha256, const std::string* content) {
  uint32_t id = table_.FindPath(path);
  if (id == EntryTable::kNone || id == EntryTable::kRoot) return;
  struct stat st;
  if (!StatNoFollow(path, &st) || MetadataDiffers(StateOf(id), EntryStateOf(st))) return;
  if (sha256.empty()) {
    sha256_.erase(id);
  } else {
    sha256_[id] = sha256;
  }
  if (content != nullptr) Keep(path, *content);
}

}  // namespace odin
