#pragma once
// What a client asks of the commands' network proxy (workers/net_proxy.cc):
// the head of one HTTP request, read strictly. Either a tunnel
// ("CONNECT host:port HTTP/1.1", for HTTPS and anything else over TCP) or a
// plain HTTP request in absolute form ("GET http://host:port/path
// HTTP/1.1"), which the proxy forwards in origin form.
//
// Pure functions; thread-safe.

#include <string>
#include <string_view>

#include "base/status.h"

namespace odin {

// The most a request's head may hold, line and headers.
constexpr size_t kMaxProxyHeadBytes = 32 * 1024;

struct ProxyRequest {
  bool tunnel = false;  // CONNECT
  std::string host;     // as the client wrote it (the rules normalise it); an IPv6 address without brackets
  int port = 0;
  // The name in Proxy-Authorization's Basic credentials ("" without): the
  // proxy's URL names the worker whose command asks (HTTP_PROXY's user).
  std::string client;
  // A plain request: the head to send the server (origin form, the proxy's
  // own headers dropped, "Connection: close"). Empty for a tunnel.
  std::string forward_head;
};

// Where the head ends in data: the offset just past "\r\n\r\n", or npos.
size_t ProxyHeadEnd(std::string_view data);

// Parses a head (up to and including the blank line). InvalidArgument, in
// one line, for anything else: another version than HTTP/1.0 or 1.1, a
// URL that is not absolute http (https goes through CONNECT), a CONNECT
// target without a port, control characters, a line folded, a port out of
// 1..65535.
StatusOr<ProxyRequest> ParseProxyRequest(std::string_view head);

}  // namespace odin
