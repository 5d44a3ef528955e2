#include "web/proxy_request.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "base/base64.h"

namespace odin {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return tolower(static_cast<unsigned char>(x)) == tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "host:port", "[v6]:port" or, with default_port, "host".
Status SplitHostPort(std::string_view authority, int default_port, ProxyRequest* out) {
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("proxy request", "an IPv6 address without ]");
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return Status::InvalidArgument("proxy request", "characters after ]");
    if (!rest.empty()) port = rest.substr(1);
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Status::InvalidArgument("proxy request", "an IPv6 address must be in brackets");
    }
  } else if (default_port == 0) {
    return Status::InvalidArgument("proxy request", "CONNECT needs host:port");
  }
  if (host.empty()) return Status::InvalidArgument("proxy request", "no host");
  if (host.find('@') != std::string_view::npos)
    return Status::InvalidArgument("proxy request", "a user name in the URL");
  out->host = std::string(host);
  if (port.empty()) {
    if (default_port == 0) return Status::InvalidArgument("proxy request", "CONNECT needs host:port");
    out->port = default_port;
    return Status::OK();
  }
  if (port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char ch) { return isdigit(static_cast<unsigned char>(ch)); })) {
    return Status::InvalidArgument("proxy request", "the port is not a number from 1 to 65535");
  }
  out->port = std::stoi(std::string(port));
  if (out->port < 1 || out->port > 65535) {
    return Status::InvalidArgument("proxy request", "the port is not a number from 1 to 65535");
  }
  return Status::OK();
}

// The user in "Basic base64(user:password)" ("" for anything else).
std::string BasicUser(std::string_view value) {
  value = Trim(value);
  if (value.size() < 6 || !IEquals(value.substr(0, 6), "basic ")) return "";
  std::optional<std::string> plain = Base64Decode(Trim(value.substr(6)));
  if (!plain) return "";
  std::string user = plain->substr(0, plain->find(':'));
  bool fine = user.size() <= 64 && std::all_of(user.begin(), user.end(), [](char ch) {
                return isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
              });
  return fine ? user : "";
}

}  // namespace

size_t ProxyHeadEnd(std::string_view data) {
  size_t at = data.find("\r\n\r\n");
  return at == std::string_view::npos ? at : at + 4;
}

StatusOr<ProxyRequest> ParseProxyRequest(std::string_view head) {
  auto bad = [](const std::string& why) { return Status::InvalidArgument("proxy request", why); };
  if (head.size() > kMaxProxyHeadBytes) return bad("the head is over 32 KiB");
  if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n")
    return bad("the head does not end in a blank line");
  for (char ch : head) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && ch != '\r' && ch != '\n' && ch != '\t') || c == 0x7f) return bad("a control character");
  }
  std::vector<std::string_view> lines;
  for (size_t at = 0; at + 2 < head.size();) {
    size_t end = head.find("\r\n", at);
    lines.push_back(head.substr(at, end - at));
    // A bare CR or LF ends a line for some servers and not for others.
    if (lines.back().find_first_of("\r\n") != std::string_view::npos) return bad("a bare CR or LF in a line");
    at = end + 2;
  }
  if (lines.empty()) return bad("no request line");
  std::string_view line = lines[0];
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad("the request line is not METHOD TARGET VERSION");
  }
  std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return bad("only HTTP/1.0 and 1.1");
  if (method.empty() || !std::all_of(method.begin(), method.end(), [](char ch) { return isupper(ch) != 0; })) {
    return bad("the method is not a word in capitals");
  }
  ProxyRequest r;
  std::string path;
  if (method == "CONNECT") {
    r.tunnel = true;
    RETURN_IF_ERROR(SplitHostPort(target, 0, &r));
  } else {
    if (target.size() < 7 || !IEquals(target.substr(0, 7), "http://")) {
      return bad("a plain request names an absolute http:// URL (https goes through CONNECT)");
    }
    std::string_view rest = target.substr(7);
    size_t slash = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, slash);
    RETURN_IF_ERROR(SplitHostPort(authority, 80, &r));
    path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (path[0] == '#') path = "/";
    if (path[0] == '?') path = "/" + path;
    path = path.substr(0, path.find('#'));
  }
  std::string forwarded = r.tunnel ? "" : std::string(method) + " " + path + " " + std::string(version) + "\r\n";
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view h = lines[i];
    if (!h.empty() && (h[0] == ' ' || h[0] == '\t')) return bad("a folded header line");
    size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad("a header line without a name");
    std::string_view name = h.substr(0, colon);
    if (IEquals(name, "Proxy-Authorization")) {
      r.client = BasicUser(h.substr(colon + 1));
      continue;
    }
    if (IEquals(name, "Proxy-Connection") || IEquals(name, "Connection") || IEquals(name, "Keep-Alive")) continue;
    // The server is told the host the rules judged, never another.
    if (IEquals(name, "Host")) continue;
    if (!r.tunnel) forwarded += std::string(h) + "\r\n";
  }
  if (!r.tunnel) {
    std::string host = r.host.find(':') != std::string::npos ? "[" + r.host + "]" : r.host;
    r.forward_head = forwarded + "Host: " + host + (r.port == 80 ? "" : ":" + std::to_string(r.port)) +
                     "\r\nConnection: close\r\n\r\n";
  }
  return r;
}

}  // namespace odin
