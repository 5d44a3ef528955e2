#pragma once
// The network namespace edit mode's commands share: only loopback, up, and
// no route anywhere else. A server a background command starts is
// reachable on 127.0.0.1 from the session's later commands, and from
// nowhere outside (not the host, not ask or plan mode's commands, whose
// workers each keep a namespace of their own).
//
// odin-sandbox --hold-net makes it (HoldNetwork: a new network namespace,
// in a user namespace of its own unless it runs as root, lo brought up);
// MakeSharedNetwork, in odin, opens it from that process and lets the
// process go: the open descriptor keeps the namespace. Each writable tool
// worker's and background command's odin-sandbox gets the descriptor
// (--join-net FD) and joins it before it starts bubblewrap (JoinNetwork),
// which then makes no network namespace of its own.

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// odin-sandbox --hold-net's body: makes the namespace, says "ready" on
// stdout and waits for its stdin to close. Returns the exit code.
int HoldNetwork();

// Runs `sandbox_binary --hold-net` and returns a descriptor of its network
// namespace (close-on-exec), within a few seconds or an error naming why.
StatusOr<UniqueFd> MakeSharedNetwork(const std::string& sandbox_binary);

// Joins the network namespace fd names (and first the user namespace that
// owns it, unless that is this process's own). Single-threaded callers only.
Status JoinNetwork(int fd);

}  // namespace odin
