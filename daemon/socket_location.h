#pragma once
// Where the daemon's unix socket lives: outside the workspace, in a directory
// only its user can enter, so that no sandbox sees it (DESIGN.md §1, §6).
//
//   $XDG_RUNTIME_DIR/odin/             if XDG_RUNTIME_DIR is usable (absolute,
//                                      a directory of ours, 0700 as the XDG
//                                      spec requires)
//   $XDG_STATE_HOME/odin/run/          else (default ~/.local/state/odin/run/)
//   $TMPDIR/odin-UID/ (default /tmp) if those paths are too long for a socket
//
// named by a hash of the workspace root (a unix socket's path holds at most
// 107 bytes). .odin/daemon.json says where it is; clients read it from there.

#include <string>

#include "base/status.h"

namespace odin {

// The longest path a unix socket can have (sockaddr_un.sun_path, less its NUL).
constexpr size_t kMaxUnixSocketPath = 107;

// Returns the socket path for the workspace at root (absolute), creating its
// directory (0700) if needed. A directory that is not ours, is a symlink or
// is open to others is not used (ours and too open: made 0700).
// FailedPrecondition naming the places tried if none can be used.
StatusOr<std::string> DaemonSocketPath(const std::string& workspace_root);

}  // namespace odin
