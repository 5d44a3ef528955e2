#include "coordinator/workspace.h"

#include <dirent.h>
#include <sys/stat.h>
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
  // A repository can ship a .odin of its own: a symlink would send the
  // ledger and the workers' log wherever it points, and a symlink inside
  // would make odin append to a file of the user's choosing (~/.bashrc).
  struct stat st;
  if (lstat(ws.state_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    return Status::FailedPrecondition(ws.state_dir,
                                      std::string(S_ISLNK(st.st_mode) ? "is a symlink" : "is not a directory") +
                                          ": Odin keeps its state only in a directory of its own "
                                          "(remove it, or run odin elsewhere)");
  }
  // 0700: the ledger holds command output, which is nobody else's business.
  Status s = MakeDirs(ws.state_dir, 0700);
  if (!s.ok()) return s.WithContext("cannot create the state directory");
  if (access(ws.state_dir.c_str(), W_OK) != 0) {
    return PosixError("state directory " + ws.state_dir + " is not writable", errno);
  }
  if (DIR* d = opendir(ws.state_dir.c_str())) {
    std::string bad;
    while (dirent* e = readdir(d)) {
      struct stat est;
      std::string path = ws.state_dir + "/" + e->d_name;
      if (lstat(path.c_str(), &est) == 0 && S_ISLNK(est.st_mode)) bad = e->d_name;
    }
    closedir(d);
    if (!bad.empty()) {
      return Status::FailedPrecondition(ws.state_dir + "/" + bad,
                                        "is a symlink: Odin writes its state only to files of its own (remove it)");
    }
  }
  return Status::OK();
}

}  // namespace odin
