#pragma once
// WorkspaceFiles: the safe file layer. Every access the host side (odin,
// odin-rpc: cli, daemon, session, planner, coordinator, ledger, index) makes
// to a file under the workspace or under Odin's state directory goes through
// one of these, rooted there. The host side often runs as root, and anything
// below the root may have been put there by a hostile repository or by a
// command racing us, so (DESIGN.md §2, STYLE.md 19):
//
//   - A path is relative to the root (an absolute one must lie below it) and
//     is resolved from the root's fd, never as text: openat2 with
//     RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS where the kernel has it, one
//     component at a time with O_NOFOLLOW where it does not. ".." never
//     leads above the root.
//   - Reads follow a symlink only when it is relative and resolves beneath
//     the root; what they reach must be a regular file, checked on the
//     opened fd before a byte is read, and is read bounded (devices, FIFOs,
//     sockets and files larger than asked for are refused).
//   - Writes, deletes, renames, chmods, symlinks and mkdirs follow no
//     symlink at all. Each opens its parent directory (no symlink on the
//     way) at the moment of use and acts on the last name relative to that
//     fd, so a component swapped for a symlink, a FIFO or a device between
//     any earlier check and the use changes nothing outside the root.
//   - A file is never written in place: a write goes to a new file beside
//     it and is renamed over it. A chmod of a file with more than one link
//     is refused (it would change every name of it).
//   - Nothing the layer writes, makes or chmods is setuid or setgid,
//     whatever mode it is asked for: a mode a command gave a file (and the
//     ledger recorded) is never root's to give back. Run as root on a
//     workspace another user owns (Ownership::kParents), what it makes
//     belongs to the owner of the directory it is made in, as what it
//     replaces keeps its owner.
//
// The layer's own refusals are PermissionDenied, naming the path (relative)
// and why; errors of the system are PosixError's. Nothing here follows a
// path the caller did not hand in.
//
// Thread-safety: the object is immutable after Open; calls may run on any
// thread.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// What is at a path itself (a symlink is a symlink, never its target).
struct FileEntry {
  enum class Type { kAbsent, kFile, kDirectory, kSymlink, kOther };
  Type type = Type::kAbsent;
  mode_t mode = 0;  // st_mode, type bits included
  uint64_t size = 0;
  uint64_t dev = 0, ino = 0, nlink = 0;
  uid_t uid = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool exists() const { return type != Type::kAbsent; }
  bool is_file() const { return type == Type::kFile; }
  bool is_dir() const { return type == Type::kDirectory; }
  bool is_link() const { return type == Type::kSymlink; }
};

// Whether something is at rel below root (not following it): the layer's
// Look, for a caller with no WorkspaceFiles at hand.
bool ExistsBelow(const std::string& root, std::string_view rel);

class WorkspaceFiles {
 public:
  // Who owns what the layer makes when it runs as root: root (kOurs: Odin's
  // own state), or the owner of the directory it is made in (kParents: a
  // workspace, where a file put back or undone must not become root's).
  enum class Ownership { kOurs, kParents };
  // root must be absolute and a directory; it may itself be reached through
  // symlinks (the user named it). Holds its fd for the object's life.
  static StatusOr<WorkspaceFiles> Open(const std::string& root, Ownership ownership = Ownership::kOurs);

  WorkspaceFiles(WorkspaceFiles&&) = default;
  WorkspaceFiles& operator=(WorkspaceFiles&&) = default;

  const std::string& root() const { return root_; }
  int root_fd() const { return root_fd_.get(); }

  // rel (relative, or absolute below root) as the layer reads it: relative,
  // "" for the root itself, "." and empty components dropped. ".." is
  // refused (InvalidArgument), and so is an absolute path not below root.
  StatusOr<std::string> Relative(std::string_view path) const;
  // root + "/" + rel (rel relative, or absolute: returned as it is).
  std::string Absolute(std::string_view rel) const;

  // ---- Reads -------------------------------------------------------------

  // What is at rel, not following it; kAbsent when nothing is, or when a
  // directory on its way is a symlink (by the rule writes go by, nothing
  // is there).
  FileEntry Look(std::string_view rel) const;
  // What is at name in the directory dir_fd (an OpenDirectory fd), not
  // following it: a walk's look, one fstatat however deep.
  static FileEntry LookAt(int dir_fd, const std::string& name);
  // Whether a read follows symlinks: relative ones that stay beneath the
  // root (instructions: CLAUDE.md -> AGENTS.md), or none at all (what the
  // entry itself holds: a snapshot, a before-image).
  enum class Links { kFollowInside, kNone };
  // The contents of the regular file at rel, of at most max_bytes. Refuses
  // (PermissionDenied) an absolute or escaping symlink (or, with
  // Links::kNone, any symlink) and anything but a regular file, and
  // (InvalidArgument, "larger than N bytes") a larger file, before reading.
  StatusOr<std::string> ReadFile(std::string_view rel, uint64_t max_bytes, Links links = Links::kFollowInside) const;
  // The same file handed to take a piece at a time, for files too large to
  // hold (hashing); max_bytes still bounds it.
  Status ReadInPieces(std::string_view rel, uint64_t max_bytes, const std::function<void(std::string_view)>& take,
                      Links links = Links::kFollowInside) const;
  // The target of the symlink at rel (not followed).
  StatusOr<std::string> ReadLink(std::string_view rel) const;
  // The names in the directory at rel ("." and ".." left out), which must
  // be a directory with no symlink on its way.
  StatusOr<std::vector<std::string>> List(std::string_view rel) const;
  // The same, with whether each is a directory (a symlink never is), from
  // the directory's own entries where the file system says (no stat).
  struct Entry {
    std::string name;
    bool is_dir = false;
    bool is_link = false;
  };
  StatusOr<std::vector<Entry>> ListEntries(std::string_view rel) const;
  // An fd of the directory at rel (O_RDONLY | O_DIRECTORY), no symlink on
  // its way: for walks that go on with openat(..., O_NOFOLLOW).
  StatusOr<UniqueFd> OpenDirectory(std::string_view rel) const;

  // ---- Writes ------------------------------------------------------------

  // Replaces (or creates) the file at rel with contents and mode: a new file
  // in the same directory, fsync, rename over rel. A directory at rel is
  // refused; a symlink there is replaced, never followed.
  Status WriteFile(std::string_view rel, std::string_view contents, mode_t mode = 0644) const;
  // Creates rel and the directories above it that are missing, with mode. A
  // symlink or a file on the way is refused; an existing directory is fine.
  Status MakeDirs(std::string_view rel, mode_t mode = 0755) const;
  // Removes the file, symlink or other non-directory at rel. Absent is OK.
  Status Remove(std::string_view rel) const;
  // Removes the empty directory at rel. Absent is OK.
  Status RemoveDirectory(std::string_view rel) const;
  // Removes rel and everything below it, never leaving the tree through a
  // symlink (a symlink is removed, not followed). Absent is OK.
  Status RemoveTree(std::string_view rel) const;
  // Makes rel a symlink to target, replacing a non-directory there (a new
  // link beside it, renamed over it).
  Status Symlink(std::string_view target, std::string_view rel) const;
  // chmod of the file or directory at rel (a symlink is refused, and so is
  // a file with more than one link).
  Status Chmod(std::string_view rel, mode_t mode) const;
  // An fd to append to the regular file at rel (a log, a transcript), made
  // (with mode) if absent: no symlink followed, and a file with more than
  // one link, or that is not regular, is refused (an append is a write in
  // place). Larger than truncate_over bytes, it is emptied first.
  StatusOr<UniqueFd> OpenAppend(std::string_view rel, mode_t mode = 0600, uint64_t truncate_over = UINT64_MAX) const;
  // Renames from to to, both below this root; to's directory must exist.
  // With no_replace, an existing to is AlreadyExists.
  Status Rename(std::string_view from, std::string_view to, bool no_replace = false) const;
  // Moves rel to to_rel below another root (Odin's state: what is kept
  // aside), making to_rel's directories there. Same file system only.
  Status MoveTo(std::string_view rel, const WorkspaceFiles& to, std::string_view to_rel) const;

  // ---- Tests -------------------------------------------------------------

  // Called by every operation after it has opened what it works relative to
  // (the parent directory, or the file) and before it acts: tests swap
  // entries there to prove the act does not depend on the check. op names
  // the operation ("write", "remove", ...), rel its path. Not thread-safe
  // to set; null clears it.
  static void SetRaceHookForTesting(std::function<void(std::string_view op, std::string_view rel)> hook);
  // Resolve one component at a time even where the kernel has openat2.
  static void SetNoOpenat2ForTesting(bool no_openat2);

 private:
  WorkspaceFiles(std::string root, UniqueFd fd, Ownership ownership)
      : root_(std::move(root)), root_fd_(std::move(fd)), ownership_(ownership) {}
  // Gives what fd (made in the directory dir_fd) is to dir_fd's owner, where
  // ownership says so and we are root.
  void GiveToParentsOwner(int dir_fd, int fd) const;

  // The directory holding rel's last component, opened with no symlink on
  // its way, and that component's name. The root's own rel ("") is refused.
  struct Parent {
    UniqueFd fd;
    std::string name;
    std::string rel;  // normalized
  };
  StatusOr<Parent> OpenParent(std::string_view rel, std::string_view op) const;
  // An fd of rel itself (flags | O_NOFOLLOW on the last component), no
  // symlink on the way.
  StatusOr<UniqueFd> OpenNoFollow(const std::string& rel, int flags) const;
  // An O_PATH fd of what rel reaches, following relative symlinks beneath
  // the root.
  StatusOr<UniqueFd> OpenForRead(const std::string& rel) const;
  Status RemoveBelow(int dir_fd, const std::string& name, const std::string& rel, int depth) const;

  std::string root_;
  UniqueFd root_fd_;
  Ownership ownership_ = Ownership::kOurs;
};

}  // namespace odin
