#include "cli/oauth_redirect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/ids.h"
#include "mcp/mcp_oauth.h"

namespace odin {
namespace {

constexpr size_t kMaxHead = 8192;
constexpr int kMaxStrayRequests = 20;

void Answer(int fd, int status, const std::string& text) {
  const char* reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
  std::string page = "<!doctype html><title>Odin</title><p>" + text + "</p>\n";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " + std::to_string(page.size()) +
                    "\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n" + page;
  (void)!send(fd, out.data(), out.size(), MSG_NOSIGNAL);
}

// The request line's target ("/callback?..."), "" when the head is not a
// GET or has not come whole by until (a connection that sends slowly holds
// the listener 5 s at most).
std::string TargetOf(int fd, SteadyTime until) {
  std::string head;
  char buf[1024];
  while (head.size() < kMaxHead && head.find("\r\n\r\n") == std::string::npos) {
    int64_t ms = ToMillis(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (ms <= 0 || poll(&p, 1, static_cast<int>(ms)) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  size_t eol = head.find("\r\n");
  if (eol == std::string::npos || head.rfind("GET ", 0) != 0) return "";
  std::string line = head.substr(4, eol - 4);
  size_t space = line.find(' ');
  if (space == std::string::npos || line.compare(space, 6, " HTTP/") != 0) return "";
  return line.substr(0, space);
}

}  // namespace

StatusOr<OAuthRedirectListener> OAuthRedirectListener::Open(int port) {
  OAuthRedirectListener l;
  l.fd_.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!l.fd_.valid()) return PosixError("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return PosixError("cannot listen on 127.0.0.1:" + std::to_string(port), errno);
  }
  if (listen(l.fd_.get(), 8) != 0) return PosixError("listen", errno);
  socklen_t len = sizeof addr;
  getsockname(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  l.port_ = ntohs(addr.sin_port);
  return l;
}

StatusOr<std::string> OAuthRedirectListener::Wait(const std::string& state, SteadyTime deadline) {
  int stray = 0;
  while (stray < kMaxStrayRequests) {
    int64_t ms = ToMillis(deadline - std::chrono::steady_clock::now());
    if (ms <= 0) break;
    pollfd p{fd_.get(), POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1000)));
    if (ready < 0 && errno != EINTR) return PosixError("poll", errno);
    if (ready <= 0) continue;
    UniqueFd conn(accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) continue;
    SteadyTime until = std::min(deadline, std::chrono::steady_clock::now() + seconds(5));
    OAuthCallback cb = ParseOAuthCallback(TargetOf(conn.get(), until), "/callback");
    if (!cb.path_matches) {
      Answer(conn.get(), 404, "Not found.");
      ++stray;
      continue;
    }
    if (!SecretsEqual(cb.state, state)) {
      Answer(conn.get(), 400, "This is not the login Odin waits for (its state does not match).");
      ++stray;
      continue;
    }
    if (!cb.error.empty()) {
      Answer(conn.get(), 400, "The login was refused. You may close this tab.");
      return Status::PermissionDenied("the authorization server refused: " + cb.error +
                                      (cb.error_description.empty() ? "" : " (" + cb.error_description + ")"));
    }
    if (cb.code.empty()) {
      Answer(conn.get(), 400, "The redirect carries no code.");
      ++stray;
      continue;
    }
    Answer(conn.get(), 200, "Odin is logged in. You may close this tab.");
    return cb.code;
  }
  if (stray >= kMaxStrayRequests) {
    return Status::PermissionDenied("the login", "20 requests came that were not the authorization server's redirect");
  }
  return Status::DeadlineExceeded("the login", "no redirect from the authorization server came in time");
}

}  // namespace odin
