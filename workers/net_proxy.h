#pragma once
// odin-net-proxy: the only way edit mode's commands reach the network when
// sandbox.network names domains (docs/sandbox.md, "Network for commands").
//
// It runs in a sandbox of its own that keeps the host's network and sees
// nothing writable, never in odin. It serves a listening socket odin made
// inside the commands' network namespace (127.0.0.1:3128 there, nowhere on
// the host), so commands reach it as HTTP_PROXY and HTTPS_PROXY and nothing
// else has a route. Each request (CONNECT, or a plain http:// request) is
// judged by the rules (web/network_rules.h), its name resolved here (or by
// sandbox.network.hosts) and each address judged by WebFetch's address
// rules at connect time (web/address_policy.h). What happened to each
// connection goes to odin on the control socket (odin/v1/net_proxy.proto),
// which records it and answers the questions the policy lets it ask.
//
// One thread per connection (at most kMaxConnections at once); the main
// thread accepts and reads the control socket, and exits the process when
// odin's end closes.

namespace odin {

constexpr int kMaxProxyConnections = 256;

// listen_fd: a listening TCP socket; control_fd: a SOCK_SEQPACKET socket to
// odin. Returns the exit code (0 when odin closed the control socket).
int RunNetProxy(int listen_fd, int control_fd);

}  // namespace odin
