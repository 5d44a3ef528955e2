#pragma once
// The address policy of WebFetch: which addresses a fetch may connect to.
//
// The rule is judged on the address a connection is about to use, after DNS,
// so that a name resolving (or re-resolving) to a private address is caught
// where every path passes: at connect time (web_fetch.cc calls JudgeConnect
// from libcurl's open-socket callback). Only globally routable unicast
// addresses pass on their own; anything else needs an allow-list entry that
// names both the host the URL used and the port.
//
// Pure functions; thread-safe.

#include <sys/socket.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

// Returns true iff addr (AF_INET or AF_INET6) is a globally routable unicast
// address. Addresses that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
// IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by
// the IPv4 address they carry. Any other family is not routable.
bool IsGloballyRoutable(const sockaddr* addr);

// A private endpoint the operator lets WebFetch reach, e.g. a local docs
// server: "127.0.0.1:8080", "docs.internal:80" or "[::1]:8080".
struct PrivateAllow {
  std::string host;  // a lower-case name, or an IP literal without brackets
  int port = 0;      // 1..65535
};

// Parses "host:port" ("[v6]:port" for IPv6). InvalidArgument, in one line,
// for anything else: no port, a port out of range, an unbracketed IPv6
// address, a wildcard address (0.0.0.0, ::), characters no host name has.
StatusOr<PrivateAllow> ParsePrivateAllow(const std::string& text);

// Whether a connection to addr, made for a URL whose host is url_host (a
// name or an IP literal, brackets optional), may proceed. Returns "" iff it
// may, else one line naming the address and why not, e.g.
// "127.0.0.1:8080 is loopback, not a public address".
//
// A globally routable address may always be reached. Any other needs an
// entry in allow whose port is the connection's port and whose host is
// url_host (case-insensitive; IP literals compared as addresses) and, when
// that host is an IP literal, is the address connected to (IPv4-mapped
// addresses unmapped first). So "127.0.0.1:P" lets http://127.0.0.1:P/ in
// but not http://[::ffff:127.0.0.1]:P/, and a name that resolves to
// 127.0.0.1 only gets in when the name itself is listed.
std::string JudgeConnect(const sockaddr* addr, const std::string& url_host, const std::vector<PrivateAllow>& allow);

// "1.2.3.4:80" or "[::1]:80"; "unknown address" for other families.
std::string AddressText(const sockaddr* addr);

}  // namespace odin
