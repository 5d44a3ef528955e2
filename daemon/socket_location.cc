#include "daemon/socket_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/file_util.h"
#include "base/sha256.h"

namespace odin {
namespace {

std::string AbsoluteEnv(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] == '/' ? v : "";
}

// OK iff dir is a directory of ours, not a symlink, closed to others. With
// close_up, a directory of ours that is open to others is closed first.
Status CheckPrivate(const std::string& dir, bool close_up) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return PosixError(dir, errno);
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition(dir, "not a directory (or a symlink)");
  if (st.st_uid != geteuid()) return Status::FailedPrecondition(dir, "belongs to uid " + std::to_string(st.st_uid));
  if ((st.st_mode & 077) != 0) {
    if (!close_up) return Status::FailedPrecondition(dir, "is open to other users");
    if (chmod(dir.c_str(), 0700) != 0) return PosixError(dir, errno);
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::string> DaemonSocketPath(const std::string& workspace_root) {
  const std::string name = Sha256Hex(workspace_root).substr(0, 16) + ".sock";
  std::vector<std::string> dirs;
  std::string runtime = AbsoluteEnv("XDG_RUNTIME_DIR");
  // Only a runtime directory as the spec describes it: never one to create.
  if (!runtime.empty() && CheckPrivate(runtime, /*close_up=*/false).ok()) dirs.push_back(JoinPath(runtime, "odin"));
  if (std::string state = OdinStateDir(); !state.empty()) dirs.push_back(JoinPath(state, "run"));
  std::string tmp = AbsoluteEnv("TMPDIR");
  dirs.push_back(JoinPath(tmp.empty() ? "/tmp" : tmp, "odin-" + std::to_string(geteuid())));

  std::string tried;
  for (const std::string& dir : dirs) {
    std::string path = JoinPath(dir, name);
    Status s = path.size() > kMaxUnixSocketPath ? Status::FailedPrecondition(dir, "too long for a unix socket's path")
                                                : MakeDirs(dir, 0700);
    if (s.ok()) s = CheckPrivate(dir, /*close_up=*/true);
    if (s.ok()) return path;
    tried += (tried.empty() ? "" : "; ") + s.message();
  }
  return Status::FailedPrecondition("no private directory for the daemon's socket", tried);
}

}  // namespace odin
