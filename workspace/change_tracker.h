#pragma once
// ChangeTracker: what changed in the workspace between two looks at it, for
// the change set of a command that can write (a metadata scan: the fallback
// design of DESIGN's mutation tracking, which needs no kernel support).
//
// The first Rescan takes the tree as it is (lstat of every entry, no
// reading) and puts an inotify watch on every directory; each later Rescan
// looks again only at the paths the kernel said changed (a full look when
// the watches overflowed or could not be set up), and returns the paths
// created, modified and deleted, with their type, size,
// mode, symlink target and, for regular files, SHA-256 before (when known)
// and after. A file whose metadata changed but whose bytes and mode did not
// is not a change. .git (at any depth) and the workspace's .odin are not
// looked at: changes inside a git directory are not mutations.
//
// Before-images: the tracker remembers the content of small files it has
// read (a change it hashed, a write the coordinator told it of), so the
// next change of such a file has its before-image. Other files changed for
// the first time have a before hash only if it was told one, and no image.
//
// Ignored paths (GitIgnore) come back summarised: a count per outermost
// ignored directory, never listed one by one.
//
// Thread-safety: none, but for Stop.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "workspace/entry_table.h"
#include "workspace/workspace_files.h"

struct stat;

namespace odin {

class GitIgnore;

enum class EntryType : uint8_t { kFile, kSymlink, kDirectory, kOther };
const char* EntryTypeName(EntryType type);

struct EntryState {
  EntryType type = EntryType::kOther;
  int64_t size = 0;
  uint32_t mode = 0;  // permission bits (07777)
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t ino = 0;
  std::string sha256;       // regular files: hex, once known
  std::string link_target;  // symlinks, once read
};

enum class ChangeKind : uint8_t { kCreated, kModified, kDeleted };
const char* ChangeKindName(ChangeKind kind);

struct PathChange {
  std::string path;  // relative to the workspace
  ChangeKind kind = ChangeKind::kModified;
  std::optional<EntryState> before;  // unset when created
  std::optional<EntryState> after;   // unset when deleted
  // The file's bytes before the change, when the tracker held them, and
  // after it, when small enough to keep (image_cap_bytes).
  std::optional<std::string> before_content;
  std::optional<std::string> after_content;
};

struct ChangeSet {
  std::vector<PathChange> changes;  // sorted by path
  // Changes under ignored paths: the outermost ignored directory (or file),
  // relative, and how many entries changed there.
  std::map<std::string, int64_t> ignored;
  bool truncated = false;  // the tree has more entries than the tracker looks at
  bool empty() const { return changes.empty() && ignored.empty(); }
};

struct ChangeTrackerOptions {
  size_t max_entries = 2000000;       // entries looked at per scan (about 90 bytes each)
  int64_t image_cap_bytes = 1 << 20;  // files kept in memory for before-images
  int64_t images_total_bytes = 64 << 20;
  // Watch the tree (inotify) so later looks are incremental, when it has at
  // least this many entries (0: always). The watches cost a grace period of
  // the kernel's (5 to 15 ms) to release, more than a full look at a small
  // tree: odin exec, which looks once more after the first, watches only
  // large trees.
  size_t watch_from_entries = 0;
  // Read git's index at the first look (and again after each look, if it
  // changed), so the next look's before-images come from the index as it
  // was before (a command may rewrite it: git checkout). Off for odin exec,
  // whose one command must not wait for libgit2: its index is read only
  // when a change asks, as it is then.
  bool remember_git_index = true;
};

class ChangeTracker {
 public:
  // ignore may be null (nothing is ignored).
  ChangeTracker(std::string root, std::unique_ptr<GitIgnore> ignore, ChangeTrackerOptions options = {});
  ~ChangeTracker();

  // Looks at the whole tree. Returns what changed since the previous look
  // (nothing, the first time), which becomes the new reference. full: look
  // at every entry even where the kernel reported nothing, as for a
  // command another machine ran on a shared filesystem (inotify hears only
  // this machine's writes); the watches stay.
  ChangeSet Rescan(bool full = false);
  // Looks only at paths (relative; parents before children; a directory
  // new here is looked at whole): what changed there since the previous
  // look, which becomes the reference there. Where the tree has no watches
  // and a Rescan walks all of it: the paths a command's overlay is about to
  // land on. Nothing before the first Rescan; where the last full look was
  // cut short (past max_entries), only the paths it took in.
  ChangeSet LookAtPaths(const std::vector<std::string>& paths);
  bool started() const { return scans_ > 0; }

  // What the writer of a file saw of it once written: the size and
  // modification time, and the inode where known (0: not known).
  struct Written {
    int64_t size = 0;
    int64_t mtime_ns = 0;
    uint64_t ino = 0;
  };
  // A write the coordinator knows of (a file tool's): the file at path
  // (relative) now holds content with this hash, so the next Rescan sees no
  // change there and a later change has its before-image (content is kept
  // within the caps; null when not known). With seen, the hash is taken
  // only while the file still looks as its writer saw it; else (written
  // again since, or copied) the next look hashes it, and a change it finds
  // is from this content, and not the writer's. Returns false then. Without
  // seen (a write of the coordinator's own, through the safe file layer),
  // the file is taken as it is now.
  bool NoteWrite(const std::string& path, const std::string& sha256, const std::string* content,
                 std::optional<Written> seen = std::nullopt);
  // The hash (and content, kept within the caps) of a file as read, so a later change
  // has a before hash and image. Ignored if the file's metadata changed.
  void NoteRead(const std::string& path, const std::string& sha256, const std::string* content);

  // The paths (relative) the kernel reported since the last call, whether
  // or not they were changes, for another index of the tree to follow
  // (ProtectedIndex::RefreshPaths). Reads the events pending now first;
  // they are still looked at by the next Rescan. False when they cannot
  // be trusted to be complete: a full look happened in between (the first,
  // an overflow, no watches), so the caller must look for itself.
  bool TakeReported(std::set<std::string>* out);

  // The hash of the file at path (relative) as the tracker last knew it,
  // if stat still says what it said then; else "".
  std::string KnownSha256(const std::string& path, const struct stat& st) const;
  size_t entries() const { return table_.size(); }
  // The workspace's ignore rules (null when none were given).
  GitIgnore* ignore() const { return ignore_.get(); }
  // Whether later looks are incremental (the inotify watches are in place).
  bool watching() const { return inotify_fd_ >= 0; }
  // Why the tree is not watched when it should be (the watch limit, a tree
  // past max_entries, no inotify): each later look is a full one. "" while
  // it is watched, or was never to be.
  const std::string& unwatched() const { return unwatched_; }
  // Drops the watches (later looks are full ones). Closing an inotify fd
  // waits for the kernel's SRCU grace period, 5 to 15 ms; that wait happens
  // on a thread of its own, so a process on its way out overlaps it with
  // the rest of its shutdown. The destructor does the same.
  void ReleaseWatches();
  // The one call another thread may make while a Rescan runs: the look is
  // no longer wanted (the session ends before its first look is done). It
  // stops at the next directory, incomplete (truncated), and git's index
  // is not read; so does every later one.
  void Stop() { stop_.store(true, std::memory_order_relaxed); }
  // Called every 64 directories a look reads (on the thread that looks), so
  // that a caller's loop can keep its peers from taking a long look for a
  // hang.
  void OnProgress(std::function<void()> progress) { progress_ = std::move(progress); }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  // The directory at rel is entry dir.
  void Scan(int dir_fd, const std::string& rel, uint32_t dir, size_t* count, ChangeSet* out);
  // A full look at the tree (the first, or after the watches failed).
  void FullScan(ChangeSet* out);
  // A look at the paths the watches reported. False if they cannot be
  // trusted (a queue overflow): then a full look is needed.
  bool DirtyScan(ChangeSet* out);
  // Moves the kernel's events into pending_ (and reported_). False after a
  // queue overflow.
  bool ReadEvents();
  void LookAt(const std::string& rel, ChangeSet* out);
  void Deleted(const std::string& rel, ChangeSet* out);  // rel and everything under it
  void Watch(const std::string& rel);
  void StartWatching();
  // Stops watching, for why (unwatched()).
  void Unwatched(const std::string& why);
  void StopWatching();
  // What stat says of name in the directory dir_fd (entry parent, at
  // parent_rel); returns its entry (EntryTable::kNone if none is kept).
  uint32_t Observe(uint32_t parent, int dir_fd, const char* name, const std::string& parent_rel, const struct stat& st,
                   ChangeSet* out);
  // Adds change, or counts it under ignored_root ("" when not ignored).
  void Add(PathChange change, const std::string& ignored_root, ChangeSet* out);
  // The before-images git's index holds for the changes Add set aside
  // (from_index_), and the touched files among them dropped.
  void FromIndex(ChangeSet* out);
  std::string IgnoredRootOf(const std::string& rel, EntryType type);
  // Records the entry and everything under it as deleted, and forgets them.
  void EraseAsDeleted(uint32_t id, ChangeSet* out);
  // An entry's state as kept (its hash and link target from the side tables).
  EntryState StateOf(uint32_t id) const;
  void SetState(uint32_t id, const EntryState& state);
  // Drops what the side tables hold of an entry going away (its id may be
  // handed out again).
  void ForgetEntry(uint32_t id);
  // The directory entry at rel, added (with what stat says, watched) where
  // it is missing along the way; kNone if it is not a directory there.
  uint32_t DirectoryEntry(const std::string& rel);
  // Reads a regular file's hash (and content, if small enough to keep).
  void Hash(int dir_fd, const char* name, EntryState* state, std::optional<std::string>* content);
  // Keeps content as path's before-image, within the caps (past them, the
  // path has none).
  void Keep(const std::string& path, const std::string& content);

  void Forget(const std::string& path);

  std::string root_;
  // The safe file layer over root_: every look at a path goes through it,
  // so a directory a command swapped for a symlink is never looked
  // through (nothing outside the workspace is hashed, kept or watched).
  std::optional<WorkspaceFiles> files_;
  // What is at rel itself, no symlink followed on the way; false if nothing.
  bool StatNoFollow(const std::string& rel, struct stat* st) const;
  std::unique_ptr<GitIgnore> ignore_;
  ChangeTrackerOptions o_;
  std::atomic<bool> stop_{false};
  std::function<void()> progress_;
  // While a new directory's tree is read: the ignored directory it is
  // under ("" when it is not, or not known), for every entry in it.
  std::string ignored_hint_;
  uint64_t directories_read_ = 0;
  EntryTable table_;
  // What few entries have besides stat's word: a regular file's hash once
  // known, a symlink's target once read.
  std::unordered_map<uint32_t, std::string> sha256_, link_target_;
  int inotify_fd_ = -1;
  std::unordered_map<int, std::string> watched_;         // watch descriptor -> directory (relative; "" the root)
  std::unordered_map<std::string, std::string> images_;  // path -> content as last seen
  int64_t images_bytes_ = 0;
  uint64_t scans_ = 0;
  std::set<std::string> pending_;   // reported, not yet looked at
  bool overflowed_ = false;         // the events since the last look are incomplete
  std::string unwatched_;           // unwatched()
  bool cut_short_ = false;          // the last full look stopped at max_entries: the table is not the tree
  std::vector<size_t> from_index_;  // changes of this look whose before git's index may hold
  std::set<uint32_t> unscanned_;    // directories a write made, not read yet
  static constexpr size_t kMaxReported = 100000;
  bool watch_refused_ = false;      // a watch was refused: no more tries
  std::set<std::string> reported_;  // since the last TakeReported
  bool reported_all_ = true;        // a full look since the last TakeReported
};

}  // namespace odin
