#include "coordinator/workspace.h"

#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"

namespace odin {

StatusOr<Workspace> FindWorkspace(const std::string& dir) {
  std::string start = dir.empty() ? "." : dir;
  StatusOr<std::string> real = RealPath(start);
  if (!real.ok()) return real.status();
  if (!IsDirectory(*real)) return Status::NotFound(start, "not a directory");
  Workspace ws;
  ws.cwd = *real;
  ws.root = *real;
  for (std::string d = *real;; d = DirName(d)) {
    if (PathExists(JoinPath(d, ".git"))) {
      ws.root = d;
      break;
    }
    if (d == "/") break;
  }
  ws.state_dir = JoinPath(ws.root, ".odin");
  ws.ledger_path = JoinPath(ws.state_dir, "odin.db");
  ws.config_path = JoinPath(ws.root, "odinconfig.json");
  return ws;
}

Status PrepareStateDir(const Workspace& ws) {
  // 0700: the ledger holds command output, which is nobody else's business.
  Status s = MakeDirs(ws.state_dir, 0700);
  if (!s.ok()) return s.WithContext("cannot create the state directory");
  if (access(ws.state_dir.c_str(), W_OK) != 0) {
    return PosixError("state directory " + ws.state_dir + " is not writable", errno);
  }
  return Status::OK();
}

}  // namespace odin
