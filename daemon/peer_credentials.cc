#include "daemon/peer_credentials.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"

namespace odin {
namespace {

// The namespace of kind ("user", "pid") that pid lives in, as (device,
// inode); false if it cannot be seen (the process is gone).
bool NamespaceOf(const std::string& pid, const char* kind, dev_t* dev, ino_t* ino) {
  struct stat st;
  if (stat(("/proc/" + pid + "/ns/" + kind).c_str(), &st) != 0) return false;
  *dev = st.st_dev;
  *ino = st.st_ino;
  return true;
}

}  // namespace

StatusOr<PeerCredentials> PeerOf(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return PosixError("SO_PEERCRED", errno);
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

Status CheckPeer(int fd) {
  ASSIGN_OR_RETURN(PeerCredentials peer, PeerOf(fd));
  std::string who = "uid " + std::to_string(peer.uid) + ", pid " + std::to_string(peer.pid);
  auto refuse = [&who](const std::string& why) {
    return Status::PermissionDenied("connection refused",
                                    "this daemon serves only its own user's processes outside any sandbox; the "
                                    "client (" +
                                        who + ") " + why);
  };
  if (peer.uid != geteuid())
    return refuse("is another user (the daemon runs as uid " + std::to_string(geteuid()) + ")");
  if (peer.pid <= 0) return refuse("lives in a pid namespace the daemon cannot see");
  for (const char* kind : {"user", "pid"}) {
    dev_t mine_dev, theirs_dev;
    ino_t mine_ino, theirs_ino;
    if (!NamespaceOf("self", kind, &mine_dev, &mine_ino)) continue;  // no namespaces here to compare
    if (!NamespaceOf(std::to_string(peer.pid), kind, &theirs_dev, &theirs_ino)) {
      return refuse("cannot be looked at in /proc (gone already?)");
    }
    if (mine_dev != theirs_dev || mine_ino != theirs_ino) {
      return refuse(std::string("runs in another ") + kind + " namespace (inside a sandbox or container)");
    }
  }
  // Without namespaces (the Landlock fallback) a sandboxed command shares
  // them all, and Landlock does not govern connecting to a socket: what
  // marks it is the seccomp filter odin-sandbox always installs, and
  // no_new_privs.
  StatusOr<std::string> status = ReadFileToString("/proc/" + std::to_string(peer.pid) + "/status");
  if (!status.ok()) return refuse("cannot be looked at in /proc (gone already?)");
  for (const char* field : {"\nSeccomp:\t", "\nNoNewPrivs:\t"}) {
    size_t at = status->find(field);
    if (at != std::string::npos && (*status)[at + strlen(field)] != '0') {
      return refuse(std::string("runs under ") + (field[1] == 'S' ? "a seccomp filter" : "no_new_privs") +
                    " (a sandboxed command)");
    }
  }
  return Status::OK();
}

}  // namespace odin
