#include "web/url_host.h"

#include <arpa/inet.h>

#include <cctype>

namespace odin {

StatusOr<std::string> StrictUrlHost(const std::string& url) {
  auto bad = [&url](const std::string& why) {
    std::string shown = url.size() > 200 ? url.substr(0, 200) + "..." : url;
    for (char& ch : shown) {
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
    }
    return Status::InvalidArgument("WebFetch " + shown, why);
  };
  for (unsigned char ch : url) {
    if (ch <= 0x20 || ch >= 0x7f) return bad("a URL of printable ASCII only (percent-encode the rest)");
    if (ch == '\\') return bad("a backslash in a URL is read differently by different parsers");
  }
  size_t sep = url.find("://");
  if (sep == std::string::npos) return bad("not an absolute http or https URL");
  std::string scheme = url.substr(0, sep);
  for (char& ch : scheme) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  if (scheme != "http" && scheme != "https") return bad("only http and https URLs are fetched");
  size_t start = sep + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (authority.find('@') != std::string::npos) return bad("URLs with a user name or password are not fetched");
  std::string host, port;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("an IPv6 address without its closing ]");
    host = authority.substr(1, close - 1);
    std::string rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return bad("characters after the IPv6 address");
      port = rest.substr(1);
      has_port = true;
    }
    in6_addr a6;
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) return bad("not an IPv6 address between [ and ]");
  } else {
    size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
      has_port = true;
    }
    for (char ch : host) {
      if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '_') {
        return bad("the host has a character no host name has");
      }
    }
  }
  if (host.empty()) return bad("no host");
  // A host whose last label is a number is an IPv4 address to browsers and
  // libcurl, which also read hex, octal and short forms (0x7f.1 is
  // 127.0.0.1): only the plain dotted quad is taken.
  if (host.find(':') == std::string::npos) {
    std::string last = host.substr(host.rfind('.') == std::string::npos ? 0 : host.rfind('.') + 1);
    bool numeric = !last.empty() && (isdigit(static_cast<unsigned char>(last[0])) != 0);
    if (numeric) {
      in_addr a4;
      bool leading_zero = false;
      for (size_t i = 0; i < host.size(); ++i) {
        bool starts = i == 0 || host[i - 1] == '.';
        if (starts && host[i] == '0' && i + 1 < host.size() && host[i + 1] != '.') leading_zero = true;
      }
      if (inet_pton(AF_INET, host.c_str(), &a4) != 1 || leading_zero) {
        return bad("an IPv4 address must be four decimal numbers (a.b.c.d)");
      }
    }
  }
  if (has_port && port.empty()) return bad("an empty port");
  if (has_port) {
    if (port.size() > 5) return bad("the port is out of range");
    for (char ch : port) {
      if (!isdigit(static_cast<unsigned char>(ch))) return bad("the port is not a number");
    }
    int n = std::stoi(port);
    if (n < 1 || n > 65535) return bad("the port is out of range");
  }
  for (char& ch : host) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  return host;
}

}  // namespace odin
