#pragma once
// Protected paths: what in the workspace steers Odin or git, or runs code
// behind the agent's back. The one source of truth for "is this path
// protected?", asked by the file tools' gate, the sandbox's mounts and the
// check after every command that could write.
//
//   - git: everything in a .git, at any depth, to the file tools; to
//     commands, what configures or redirects git (config, commondir, hooks,
//     info, objects/info/alternates, config.worktree, worktrees/*/gitdir and
//     the same in submodules' git directories) and .git itself (a .git that
//     becomes a file, a symlink or another directory). What git needs for
//     ordinary work (objects, refs, index, logs, HEAD) stays writable to
//     commands in edit mode.
//   - A directory laid out like a git directory (HEAD beside objects/ and
//     refs/, or HEAD beside commondir) is a repository of its own to git
//     and to a git-aware shell prompt: the file tools cannot make one, and
//     one a command makes is moved away.
//   - Odin's state (.odin), its settings (odinconfig.json, .mcp.json), Claude
//     Code's (.claude: settings with hooks, commands, agents, skills), the
//     instructions (ODIN.md, AGENTS.md, CLAUDE.md and CLAUDE.local.md in any
//     directory) and shell rc files at the root.
//
// The file tools' writes to them are refused (ProtectedWriteReason). For
// commands, the sandbox mounts the ones that exist read-only and makes .git
// a mount point (ProtectedMounts); what a command still changes is put back
// after it (SnapshotProtected, RestoreProtected), never by deleting or
// overwriting what was not captured first.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace odin {

class WorkspaceFiles;

// The protected names at the workspace root, relative (.git's control files
// come from GitControlPaths).
const std::vector<std::string>& ProtectedRelativePaths();

// Whether path (absolute, inside workspace) is protected from the file
// tools: inside any .git, .odin, a root protected file or directory, or an
// instructions file (ODIN.md, AGENTS.md, CLAUDE.md, CLAUDE.local.md) in any
// directory.
bool IsProtectedPath(const std::string& path, const std::string& workspace);

// Why a file tool may not write path (absolute, inside workspace): "" if it
// may. Covers IsProtectedPath and a write that would lay a directory out
// like a git directory.
std::string ProtectedWriteReason(const std::string& path, const std::string& workspace);

// Whether the directory dir holds what makes git take it for a git
// directory: HEAD, and objects/ and refs/ or a commondir file.
bool LooksLikeGitDirectory(const std::string& dir);

// The files and directories inside a git directory that configure git or
// send it elsewhere, relative to it, as far as they exist: config,
// commondir, config.worktree, hooks, info, objects/info/alternates, and the
// same in worktrees/* (with their gitdir) and in submodules' git
// directories under modules/.
std::vector<std::string> GitControlPaths(const std::string& git_dir);
// Whether rel_in_git, a path below a git directory ("config",
// "hooks/pre-commit", "worktrees/w/gitdir", "objects/info/alternates"), is
// one of git's control files: what configures git or sends it elsewhere.
// The one list both the protected-path index (GitControlPaths) and the
// command-change check (what never lands from an overlay) read.
bool IsGitControlPath(std::string_view rel_in_git);

// What the sandbox of a writable worker mounts over the workspace: .git
// bound onto itself (writable: a mount point cannot be moved or replaced),
// then the protected files and git control paths that exist, read-only.
struct ProtectedMount {
  std::string path;  // absolute
  bool writable;
};
std::vector<ProtectedMount> ProtectedMounts(const std::string& workspace);

// ProtectedIndex: where in the tree the protected things below the root
// are: nested .git entries, directories laid out like git directories, and
// instruction files in subdirectories. Kept current cheaply: a refresh
// stats each directory and reads again only those whose entries changed
// (mtime, ctime, inode), or that changed too recently to judge by time.
//
// Thread-safety: none.
class ProtectedIndex {
 public:
  explicit ProtectedIndex(std::string root, size_t max_dirs = 200000) : root_(std::move(root)), max_dirs_(max_dirs) {}
  // Brings the index up to date (the first call reads the whole tree).
  void Refresh();
  // Brings it up to date from what changed, as the change tracker heard it
  // from the kernel: the paths (relative) created, deleted, renamed or
  // changed since the last refresh. Only their parents and themselves are
  // read again (a new directory is read whole); what is gone is forgotten
  // with everything below it. Nothing else is looked at, so this costs what
  // changed, not the size of the tree. The first refresh, and one of an
  // incomplete index, is a full one.
  void RefreshPaths(const std::set<std::string>& changed);
  // Relative paths: nested ".git" entries (files, directories, symlinks);
  // git-like directories; instruction files below the root.
  const std::set<std::string>& nested_git() const { return nested_git_; }
  const std::set<std::string>& git_like() const { return git_like_; }
  const std::set<std::string>& instructions() const { return instructions_; }
  // False when the tree has more directories than max_dirs: what lies past
  // them is not watched.
  bool complete() const { return complete_; }

 private:
  struct Dir {
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    uint64_t ino = 0;
    int64_t read_at_ns = 0;  // when its entries were read
    std::vector<std::string> subdirs;
    std::vector<std::string> names;  // entries that matter (.git, HEAD, objects, refs, commondir, ODIN.md, AGENTS.md)
    uint64_t seen = 0;
  };
  // Reads the directory rel (name in parent_fd) and walks its
  // subdirectories: all of them in a full refresh; in an incremental one
  // (known_only), only those the index does not know yet, and rel is read
  // again whatever its times say.
  void Visit(int parent_fd, const std::string& rel, const std::string& name, size_t* count, bool incremental = false);
  void Forget(const std::string& rel);  // rel and every directory below it
  void Collect();                       // the sets, from dirs_

  std::string root_;
  size_t max_dirs_;
  std::unordered_map<std::string, Dir> dirs_;
  uint64_t pass_ = 0;
  bool complete_ = true;
  std::set<std::string> nested_git_, git_like_, instructions_;
};

// What the protected paths held before a command: taken just before it
// runs, so that what it changed there can be put back. Files are captured
// whatever their size up to kMaxCapturedBytes each; a larger one is kept
// as its size, times and hash, and is reported rather than restored if it
// changes. Symlinks are captured as their targets.
struct ProtectedSnapshot {
  struct Entry {
    enum Kind { kAbsent, kFile, kDirectory, kSymlink, kOther } kind = kAbsent;
    mode_t mode = 0;
    dev_t dev = 0;
    ino_t ino = 0;
    bool captured = false;  // content (or link target) kept
    std::string content;    // file bytes or symlink target
    std::string sha256;     // of a file's bytes
  };
  std::map<std::string, Entry> entries;  // relative path -> what was there
  // Nested git entries, git-like directories and instruction files below
  // the root, as the index saw them before the command.
  std::set<std::string> nested;
};
constexpr uint64_t kMaxCapturedBytes = 64ull << 20;

// index: the workspace's ProtectedIndex (refreshed here, unless the caller
// has just brought it up to date: refreshed); null skips what lies below
// the root. Reads through ws (the safe file layer): nothing followed.
ProtectedSnapshot SnapshotProtected(const WorkspaceFiles& ws, ProtectedIndex* index = nullptr, bool refreshed = false);

// What RestoreProtected did.
struct RestoreReport {
  std::vector<std::string> restored;       // put back as they were (or removed: made by the command)
  std::vector<std::string> displaced;      // new git directories and instruction files, moved into displaced_dir
  std::vector<std::string> unrestored;     // changed but could not be put back (too large, refused, the move failed)
  std::map<std::string, std::string> why;  // unrestored path -> why (the layer's refusal, say)
  // displaced paths that could not go into displaced_dir (another file
  // system) -> the name they were renamed to where they were
  std::map<std::string, std::string> displaced_beside;
  std::string displaced_dir;  // absolute; where displaced paths went
  bool empty() const { return restored.empty() && displaced.empty() && unrestored.empty(); }
};
// Puts back what changed since `before`: rewrites changed files, removes
// protected files the command created, puts a replaced .git back, moves new
// nested git directories, git-like layouts (the root's too), a new .git
// whose config or hooks could run a program (workspace/git_layouts.h) and
// instruction files into kept's displaced/<id>/. A HEAD may change, to one
// git reads (GitHeadParses). Never deletes or overwrites a path that
// `before` did not capture. Every write goes through ws, the safe file
// layer, so a symlink a command put on the way is refused, not followed
// (security review 3, finding 1). With refreshed, the caller has brought
// index up to date with what the command did, and will again with what
// this does (the change tracker's word: RefreshPaths); else it is
// refreshed here, before and after.
RestoreReport RestoreProtected(const WorkspaceFiles& ws, const ProtectedSnapshot& before,
                               ProtectedIndex* index = nullptr, const WorkspaceFiles* kept = nullptr,
                               const std::string& id = "", bool refreshed = false);

}  // namespace odin
