#pragma once
// Who is at the other end of a unix socket, and whether the daemon serves it.
//
// The socket's directory is the user's own (socket_location.h), but a mode
// stops no one who is root, and root inside a sandbox can be root outside it
// too. So the daemon also asks the kernel who connected (SO_PEERCRED): it
// serves a process only if it runs as the daemon's own user and in the
// daemon's own user and pid namespaces. A sandboxed command always runs in a
// pid namespace of its own (and a user namespace, where the sandbox has one),
// whatever uid it maps to.

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace odin {

struct PeerCredentials {
  pid_t pid = 0;  // as this process's pid namespace sees it; 0 if it cannot
  uid_t uid = 0;
  gid_t gid = 0;
};

// The credentials of the process that connected on fd (a unix socket).
StatusOr<PeerCredentials> PeerOf(int fd);

// OK iff the daemon serves the process that connected on fd: same uid as this
// process and same user and pid namespaces. Otherwise PermissionDenied saying
// who it is and why it is refused.
Status CheckPeer(int fd);

}  // namespace odin
