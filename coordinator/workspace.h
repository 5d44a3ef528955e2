#pragma once
// Workspace: the directory tree an Odin session works on, and where Odin keeps
// its state in it.
//
// The workspace is the git top level of the starting directory (the nearest
// ancestor holding .git), else the starting directory itself. State lives in
// <workspace>/.odin/: the ledger (odin.db) and the workers' log.

#include <string>

#include "base/status.h"

namespace odin {

struct Workspace {
  std::string root;         // absolute, symlinks resolved
  std::string cwd;          // absolute starting directory, inside root
  std::string state_dir;    // root/.odin
  std::string ledger_path;  // state_dir/odin.db
  std::string config_path;  // root/odinconfig.json
};

// Finds the workspace of dir (empty: the current directory). Returns NotFound
// naming dir if it does not exist or is not a directory.
StatusOr<Workspace> FindWorkspace(const std::string& dir);

// Creates state_dir if needed. Returns PermissionDenied (or the OS error)
// naming the directory if it cannot be created or written.
Status PrepareStateDir(const Workspace& ws);

}  // namespace odin
