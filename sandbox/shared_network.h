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
// process go: the open descriptor keeps the namespace. A socket made in a
// namespace stays in it: the proxy's listener, made there by the holder,
// is served by odin-net-proxy from the host's network. Each writable tool
// worker's and background command's odin-sandbox gets the descriptor
// (--join-net FD) and joins it before it starts bubblewrap (JoinNetwork),
// which then makes no network namespace of its own.

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// Where the commands' network proxy listens inside the namespace, when
// sandbox.network names domains (workers/net_proxy.h).
constexpr int kCommandsProxyPort = 3128;

// odin-sandbox --hold-net's body: makes the namespace, says "ready" on
// stdout and waits for its stdin to close. With proxy_port, it also makes
// a TCP socket listening on 127.0.0.1:proxy_port inside the namespace and
// sends it with "ready" (stdout is then a Unix socket). Returns the exit
// code.
int HoldNetwork(int proxy_port = 0);

struct SharedNetwork {
  UniqueFd netns;
  UniqueFd proxy_listener;  // valid iff asked for
};

// Runs `sandbox_binary --hold-net` and returns a descriptor of its network
// namespace (close-on-exec) and, with proxy_port, the listening socket
// there, within a few seconds or an error naming why.
StatusOr<SharedNetwork> MakeSharedNetwork(const std::string& sandbox_binary, int proxy_port = 0);

// Joins the network namespace fd names (and first the user namespace that
// owns it, unless that is this process's own). Single-threaded callers only.
Status JoinNetwork(int fd);

}  // namespace odin
