#include "web/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>

namespace odin {
namespace {

// An IP address in network byte order, with the port of a connection.
struct Ip {
  int family = AF_UNSPEC;       // AF_INET (4 bytes used) or AF_INET6
  std::array<uint8_t, 16> b{};  // the address bytes
  int port = 0;
};

std::optional<Ip> FromSockaddr(const sockaddr* addr) {
  if (addr == nullptr) return std::nullopt;
  Ip ip;
  ip.family = addr->sa_family;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    std::memcpy(ip.b.data(), &in->sin_addr, 4);
    ip.port = ntohs(in->sin_port);
    return ip;
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    std::memcpy(ip.b.data(), &in6->sin6_addr, 16);
    ip.port = ntohs(in6->sin6_port);
    return ip;
  }
  return std::nullopt;
}

// Parses an IP literal ("127.0.0.1", "::1", "[::1]"); nullopt for a name.
std::optional<Ip> ParseLiteral(std::string text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  Ip ip;
  if (inet_pton(AF_INET, text.c_str(), ip.b.data()) == 1) {
    ip.family = AF_INET;
    return ip;
  }
  if (inet_pton(AF_INET6, text.c_str(), ip.b.data()) == 1) {
    ip.family = AF_INET6;
    return ip;
  }
  return std::nullopt;
}

bool IsMapped(const Ip& ip) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return ip.family == AF_INET6 && std::memcmp(ip.b.data(), kPrefix, 12) == 0;
}

// ::ffff:a.b.c.d becomes a.b.c.d; anything else is returned as it is.
Ip Unmap(Ip ip) {
  if (!IsMapped(ip)) return ip;
  ip.family = AF_INET;
  std::memmove(ip.b.data(), ip.b.data() + 12, 4);
  std::fill(ip.b.begin() + 4, ip.b.end(), 0);
  return ip;
}

bool SameAddress(const Ip& a, const Ip& b) {
  size_t n = a.family == AF_INET ? 4 : 16;
  return a.family == b.family && std::memcmp(a.b.data(), b.b.data(), n) == 0;
}

uint32_t V4At(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string V4Text(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff) +
         "." + std::to_string(a & 0xff);
}

// Why an IPv4 address (host byte order) is not public; "" when it is.
std::string V4Problem(uint32_t a) {
  struct Range {
    uint32_t base;
    int bits;
    const char* what;
  };
  // The broadcast address before 240/4, which holds it.
  static constexpr Range kRanges[] = {
      {0xffffffff, 32, "broadcast"},
      {0x00000000, 8, "unspecified (0.0.0.0/8)"},
      {0x0a000000, 8, "private (10.0.0.0/8)"},
      {0x64400000, 10, "shared address space (100.64.0.0/10, carrier-grade NAT)"},
      {0x7f000000, 8, "loopback"},
      {0xa9fe0000, 16, "link-local (169.254.0.0/16, where cloud metadata services answer)"},
      {0xac100000, 12, "private (172.16.0.0/12)"},
      {0xc0000000, 24, "IETF protocol assignments (192.0.0.0/24)"},
      {0xc0000200, 24, "documentation (192.0.2.0/24)"},
      {0xc0586300, 24, "6to4 relay anycast (192.88.99.0/24)"},
      {0xc0a80000, 16, "private (192.168.0.0/16)"},
      {0xc6120000, 15, "benchmarking (198.18.0.0/15)"},
      {0xc6336400, 24, "documentation (198.51.100.0/24)"},
      {0xcb007100, 24, "documentation (203.0.113.0/24)"},
      {0xe0000000, 4, "multicast (224.0.0.0/4)"},
      {0xf0000000, 4, "reserved (240.0.0.0/4)"},
  };
  for (const Range& r : kRanges) {
    uint32_t mask = r.bits == 32 ? 0xffffffff : ~(0xffffffffu >> r.bits);
    if ((a & mask) == r.base) return r.what;
  }
  return "";
}

// Whether the first `bits` (at most 64) bits of the address are `prefix`,
// given as the address's first 64 bits.
bool InPrefix(const Ip& ip, uint64_t prefix, int bits) {
  uint64_t hi = 0;
  for (int i = 0; i < 8; ++i) hi = (hi << 8) | ip.b[i];
  uint64_t mask = ~uint64_t{0} << (64 - bits);  // REQUIRES: 1 <= bits <= 64
  return (hi & mask) == prefix;
}

// Why an address that embeds an IPv4 address is not public, judged by that
// address; "" when it is.
std::string Embedded(const char* kind, uint32_t v4) {
  std::string problem = V4Problem(v4);
  if (problem.empty()) return "";
  return std::string(kind) + " " + V4Text(v4) + ", which is " + problem;
}

// Why an IPv6 address is not public; "" when it is.
std::string V6Problem(const Ip& ip) {
  const uint8_t* b = ip.b.data();
  bool first12_zero = std::all_of(b, b + 12, [](uint8_t c) { return c == 0; });
  if (first12_zero && V4At(b + 12) == 0) return "unspecified";
  if (first12_zero && V4At(b + 12) == 1) return "loopback";
  if (IsMapped(ip)) return Embedded("IPv4-mapped", V4At(b + 12));
  if (first12_zero) return Embedded("IPv4-compatible", V4At(b + 12));
  // 64:ff9b::/96, the NAT64 well-known prefix: the gateway connects to the
  // IPv4 address in the last 32 bits.
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kNat64, 12) == 0) return Embedded("NAT64", V4At(b + 12));
  if (InPrefix(ip, 0x0064ff9b00010000, 48)) return "NAT64 local-use (64:ff9b:1::/48)";
  if (InPrefix(ip, 0x0100000000000000, 64)) return "discard-only (100::/64)";
  if (InPrefix(ip, 0x2001000000000000, 32)) return "Teredo (2001::/32)";
  if (InPrefix(ip, 0x2001000200000000, 48)) return "benchmarking (2001:2::/48)";
  if (InPrefix(ip, 0x2001001000000000, 28)) return "ORCHID (2001:10::/28)";
  if (InPrefix(ip, 0x2001002000000000, 28)) return "ORCHIDv2 (2001:20::/28)";
  if (InPrefix(ip, 0x20010db800000000, 32)) return "documentation (2001:db8::/32)";
  if (InPrefix(ip, 0x3fff000000000000, 20)) return "documentation (3fff::/20)";
  // 2002::/16, 6to4: bits 16..47 are the IPv4 address of the site's relay.
  if (InPrefix(ip, 0x2002000000000000, 16)) return Embedded("6to4 for", V4At(b + 2));
  if (InPrefix(ip, 0xfc00000000000000, 7)) return "unique-local (fc00::/7)";
  if (InPrefix(ip, 0xfe80000000000000, 10)) return "link-local (fe80::/10)";
  if (InPrefix(ip, 0xfec0000000000000, 10)) return "site-local (fec0::/10)";
  if (InPrefix(ip, 0xff00000000000000, 8)) return "multicast (ff00::/8)";
  if (!InPrefix(ip, 0x2000000000000000, 3)) return "outside global unicast (2000::/3)";
  return "";
}

// Why the address is not public; "" when it is.
std::string Problem(const sockaddr* addr) {
  std::optional<Ip> ip = FromSockaddr(addr);
  if (!ip) return "of an unknown address family";
  if (ip->family == AF_INET) return V4Problem(V4At(ip->b.data()));
  return V6Problem(*ip);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string StripBrackets(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

// Whether an allow-list host and the URL's host are the same: the same
// address when both are IP literals, else the same name ignoring case.
bool SameHost(const std::string& entry, const std::string& url_host) {
  std::optional<Ip> a = ParseLiteral(entry);
  std::optional<Ip> b = ParseLiteral(url_host);
  if (a && b) return SameAddress(*a, *b);
  if (a || b) return false;
  return Lower(entry) == Lower(StripBrackets(url_host));
}

bool IsHostNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

}  // namespace

bool IsGloballyRoutable(const sockaddr* addr) { return Problem(addr).empty(); }

StatusOr<PrivateAllow> ParsePrivateAllow(const std::string& text) {
  const std::string context = "private endpoint \"" + text + "\"";
  auto bad = [&](const std::string& why) { return Status::InvalidArgument(context, why); };
  PrivateAllow allow;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) return bad("no ']' after the IPv6 address");
    allow.host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("expected [address]:port, e.g. [::1]:8080");
    port = text.substr(close + 2);
    std::optional<Ip> ip = ParseLiteral(allow.host);
    if (!ip || ip->family != AF_INET6) return bad("\"" + allow.host + "\" is not an IPv6 address");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) return bad("expected host:port, e.g. 127.0.0.1:8080");
    allow.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (allow.host.find(':') != std::string::npos) return bad("an IPv6 address needs brackets, e.g. [::1]:8080");
    if (allow.host.empty()) return bad("no host before the port");
    if (!std::all_of(allow.host.begin(), allow.host.end(), IsHostNameChar)) {
      return bad("\"" + allow.host + "\" is not a host name or IPv4 address");
    }
  }
  allow.host = Lower(allow.host);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("\"" + port + "\" is not a port number");
  }
  allow.port = std::stoi(port);
  if (allow.port < 1 || allow.port > 65535) return bad("port " + port + " is out of range (1-65535)");
  // A wildcard names every local address, not one endpoint.
  if (std::optional<Ip> ip = ParseLiteral(allow.host)) {
    const uint8_t* b = ip->b.data();
    if (std::all_of(b, b + (ip->family == AF_INET ? 4 : 16), [](uint8_t c) { return c == 0; })) {
      return bad(allow.host + " is the wildcard address, not an endpoint");
    }
  }
  return allow;
}

std::string JudgeConnect(const sockaddr* addr, const std::string& url_host, const std::vector<PrivateAllow>& allow) {
  std::string problem = Problem(addr);
  if (problem.empty()) return "";
  std::optional<Ip> connected = FromSockaddr(addr);
  if (connected) {
    for (const PrivateAllow& entry : allow) {
      if (entry.port != connected->port || !SameHost(entry.host, url_host)) continue;
      std::optional<Ip> literal = ParseLiteral(entry.host);
      if (!literal || SameAddress(Unmap(*literal), Unmap(*connected))) return "";
    }
  }
  return AddressText(addr) + " is " + problem + ", not a public address";
}

std::string AddressText(const sockaddr* addr) {
  std::optional<Ip> ip = FromSockaddr(addr);
  if (!ip) return "unknown address";
  char text[INET6_ADDRSTRLEN] = {0};
  inet_ntop(ip->family, ip->b.data(), text, sizeof text);
  std::string port = std::to_string(ip->port);
  if (ip->family == AF_INET6) return "[" + std::string(text) + "]:" + port;
  return std::string(text) + ":" + port;
}

}  // namespace odin
