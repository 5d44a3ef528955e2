#pragma once
// Workspace: the directory tree an Odin session works on, and where Odin keeps
// its state.
//
// The workspace is the git top level of the starting directory (the nearest
// ancestor holding .git), else the starting directory itself. State (the
// ledger, the workers' log, commands' overlays, what was kept aside) lives
// in <workspace>/.odin/ when that is Odin's own: a directory Odin made,
// 0700, of this user, holding Odin's marker (kStateMarkerFile: the
// directory's own inode and birth time, which a copy of it cannot carry).
// A .odin/ that is anything else, one a repository ships (tracked by git,
// or in a tarball: its marker names another directory), one of another
// user, a symlink, a file, is never used: the state goes to the user's state directory
// instead (DESIGN.md §9), and FindWorkspace says why in state_elsewhere.

#include <string>

#include "base/status.h"

namespace odin {

struct Workspace {
  std::string root;         // absolute, symlinks resolved
  std::string cwd;          // absolute starting directory, inside root
  std::string state_dir;    // root/.odin, or the user's: see state_elsewhere
  std::string ledger_path;  // state_dir/odin.db
  std::string config_path;  // root/odinconfig.json
  // Why root/.odin is not Odin's state, when it is not ("" when it is, or
  // will be once made): one line for the user, said by PrepareStateDir.
  std::string state_elsewhere;
  // An isolated session's (workspace/isolated_views.h): the view's id, and
  // the workspace it was copied from, whose state_dir and ledger it keeps;
  // root is then the view's tree. Both "" otherwise.
  std::string view;
  std::string view_of;
};

// The file in .odin that says Odin made it for this workspace.
inline constexpr char kStateMarkerFile[] = ".odin-state";

// Finds the workspace of dir (empty: the current directory), and where its
// state lives. Returns NotFound naming dir if it does not exist or is not a
// directory. Creates nothing.
StatusOr<Workspace> FindWorkspace(const std::string& dir);

// Why ws is too broad to be taken as a workspace without being named (the
// root directory, the user's home directory): "" when it is not. Claude
// Code and Codex ask before working there; headless sessions refuse unless
// -C names it.
std::string TooBroadForAWorkspace(const Workspace& ws);
// The one refusal every entry point gives (-p, the interactive session when
// it cannot ask, odin mcp serve, the daemon): one line without the
// program's prefix, "" when ws may be worked in (named is true when -C
// named it).
std::string TooBroadRefusal(const Workspace& ws, bool named);

// Creates state_dir if needed (0700, with Odin's marker and a .gitignore of
// "*"), and checks it again (a directory of ours, no symlink in it). Says
// state_elsewhere once on stderr. Returns PermissionDenied (or the OS
// error) naming the directory if it cannot be created or written.
Status PrepareStateDir(const Workspace& ws);

// Where the state of a workspace whose .odin is not Odin's goes:
// <user state>/workspaces/<name>-<hash of root>; "" when the user has no
// state directory.
std::string StateDirElsewhere(const std::string& root);

}  // namespace odin
