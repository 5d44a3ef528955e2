#include "workers/net_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "odin/v1/net_proxy.pb.h"
#include "web/address_policy.h"
#include "web/idn.h"
#include "web/network_rules.h"
#include "web/proxy_request.h"

namespace odin {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kHeadTimeoutMs = 30'000;
constexpr int kConnectTimeoutMs = 10'000;
constexpr int kIdleTimeoutMs = 30 * 60'000;
constexpr auto kQuestionTimeout = std::chrono::minutes(5);
constexpr size_t kMaxControlMessage = 64 * 1024;
// One worker's commands may hold this many connections at once: a command
// that pins connections leaves the others some.
constexpr int kMaxPerClient = 64;

struct Policy {
  NetworkRules rules;
  std::vector<PrivateAllow> allow_private;
  std::map<std::string, std::string> hosts;  // normalised name -> address
  bool ask = false;
};

class Proxy {
 public:
  Proxy(int listen_fd, int control_fd) : listen_fd_(listen_fd), control_fd_(control_fd) {}
  int Run();

 private:
  bool ReadPolicy();
  void Serve(UniqueFd client, uint64_t id);
  void Send(const v1::ProxyMessage& m);
  void Opened(uint64_t id, const std::string& client, const std::string& host, int port, bool allowed,
              const std::string& rule, const std::string& why, const std::string& address = "");
  // odin's answer for a host no rule names (false: refused or no answer).
  bool Ask(uint64_t id, const std::string& client, const std::string& host, int port);
  void ReadControl();
  // A connected socket to host:port, or "" and *why.
  UniqueFd Connect(const std::string& host, int port, std::string* why, std::string* address);

  int listen_fd_;
  int control_fd_;
  Policy policy_;
  std::mutex send_mu_;
  std::mutex mu_;
  std::condition_variable answered_;
  std::map<uint64_t, std::optional<bool>> questions_;  // guarded by mu_
  std::map<std::string, int> per_client_;              // guarded by mu_
  std::set<std::string> clients_;                      // guarded by mu_: the session's command workers'
  std::condition_variable clients_changed_;
  std::atomic<int> active_{0};
};

// Writes all of data, waiting at most timeout_ms for each piece.
bool SendAll(int fd, const char* data, size_t size, int timeout_ms = kIdleTimeoutMs) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

void Reply(int fd, int code, const char* reason, const std::string& why) {
  std::string body = "odin: " + why + "\n";
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + reason +
                     "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  std::string all = head + body;
  SendAll(fd, all.data(), all.size(), 2000);
}

bool Proxy::ReadPolicy() {
  pollfd p{control_fd_, POLLIN, 0};
  if (poll(&p, 1, 10'000) <= 0) return false;
  std::string buf(kMaxControlMessage, '\0');
  ssize_t n = recv(control_fd_, buf.data(), buf.size(), 0);
  v1::ProxyMessage m;
  if (n <= 0 || !m.ParseFromArray(buf.data(), static_cast<int>(n)) || !m.has_policy()) return false;
  const v1::ProxyPolicy& pp = m.policy();
  StatusOr<NetworkRules> rules =
      ParseNetworkRules({pp.allow().begin(), pp.allow().end()}, {pp.deny().begin(), pp.deny().end()});
  if (!rules.ok()) {
    fprintf(stderr, "odin-net-proxy: %s\n", rules.status().ToString().c_str());
    return false;
  }
  policy_.rules = std::move(*rules);
  for (const std::string& entry : pp.allow_private()) {
    StatusOr<PrivateAllow> a = ParsePrivateAllow(entry);
    if (a.ok()) policy_.allow_private.push_back(*a);
  }
  for (const auto& [name, address] : pp.hosts()) {
    StatusOr<std::string> n = NormalizeHostName(name);
    if (n.ok()) policy_.hosts[*n] = address;
  }
  policy_.ask = pp.ask();
  return true;
}

void Proxy::Send(const v1::ProxyMessage& m) {
  std::string bytes = m.SerializeAsString();
  std::lock_guard<std::mutex> lock(send_mu_);
  // A lost record is odin's loss only: it is gone or not reading.
  (void)!send(control_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

void Proxy::Opened(uint64_t id, const std::string& client, const std::string& host, int port, bool allowed,
                   const std::string& rule, const std::string& why, const std::string& address) {
  v1::ProxyMessage m;
  v1::ProxyOpened* o = m.mutable_opened();
  o->set_connection(id);
  o->set_client(client);
  o->set_host(host.size() > 300 ? host.substr(0, 300) : host);
  o->set_port(static_cast<uint32_t>(port));
  o->set_allowed(allowed);
  o->set_rule(rule);
  o->set_why(why);
  o->set_address(address);
  Send(m);
}

bool Proxy::Ask(uint64_t id, const std::string& client, const std::string& host, int port) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    questions_[id];
  }
  v1::ProxyMessage m;
  v1::ProxyQuestion* q = m.mutable_question();
  q->set_connection(id);
  q->set_client(client);
  q->set_host(host);
  q->set_port(static_cast<uint32_t>(port));
  Send(m);
  std::unique_lock<std::mutex> lock(mu_);
  answered_.wait_for(lock, kQuestionTimeout, [&] { return questions_[id].has_value(); });
  bool allow = questions_[id].value_or(false);
  questions_.erase(id);
  return allow;
}

void Proxy::ReadControl() {
  std::string buf(kMaxControlMessage, '\0');
  for (;;) {
    ssize_t n = recv(control_fd_, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) _exit(0);  // odin is gone: so are we, connections and all
    v1::ProxyMessage m;
    if (!m.ParseFromArray(buf.data(), static_cast<int>(n))) continue;
    if (m.has_clients()) {
      std::lock_guard<std::mutex> lock(mu_);
      clients_ = {m.clients().client().begin(), m.clients().client().end()};
      clients_changed_.notify_all();
      continue;
    }
    if (!m.has_decision()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = questions_.find(m.decision().connection());
    if (it != questions_.end()) it->second = m.decision().allow();
    answered_.notify_all();
  }
}

UniqueFd Proxy::Connect(const std::string& host, int port, std::string* why, std::string* address) {
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  auto mapped = policy_.hosts.find(host);
  if (mapped != policy_.hosts.end()) hints.ai_flags |= AI_NUMERICHOST;
  int rc = getaddrinfo(mapped != policy_.hosts.end() ? mapped->second.c_str() : host.c_str(), port_text.c_str(), &hints,
                       &found);
  if (rc != 0) {
    *why = host + ": " + gai_strerror(rc);
    return UniqueFd();
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    // The address rules on the address itself, at connect time: a name
    // that resolves to a private address is refused here.
    std::string refused = JudgeConnect(a->ai_addr, host, policy_.allow_private);
    if (!refused.empty()) {
      *why = refused;
      continue;
    }
    UniqueFd s(socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s.valid()) {
      *why = std::string("socket: ") + strerror(errno);
      continue;
    }
    if (connect(s.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      *why = AddressText(a->ai_addr) + ": " + strerror(errno);
      continue;
    }
    pollfd p{s.get(), POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (poll(&p, 1, kConnectTimeoutMs) <= 0) {
      *why = AddressText(a->ai_addr) + ": no answer in 10 s";
      continue;
    }
    if (getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      *why = AddressText(a->ai_addr) + ": " + strerror(err);
      continue;
    }
    *address = AddressText(a->ai_addr);
    return s;
  }
  return UniqueFd();
}

// Copies both ways until both ends are done; counts the bytes.
void Relay(int client, int server, uint64_t* up, uint64_t* down) {
  bool client_open = true, server_open = true;
  char buf[64 * 1024];
  while (client_open || server_open) {
    pollfd p[2] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0},
                   {server, static_cast<short>(server_open ? POLLIN : 0), 0}};
    int n = poll(p, 2, kIdleTimeoutMs);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (int i = 0; i < 2; ++i) {
      if (p[i].revents == 0) continue;
      int from = i == 0 ? client : server, to = i == 0 ? server : client;
      ssize_t r = recv(from, buf, sizeof buf, 0);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0) {
        (i == 0 ? client_open : server_open) = false;
        shutdown(to, SHUT_WR);
        if (r < 0) return;
        continue;
      }
      if (!SendAll(to, buf, static_cast<size_t>(r))) return;
      *(i == 0 ? up : down) += static_cast<uint64_t>(r);
    }
  }
}

void Proxy::Serve(UniqueFd client, uint64_t id) {
  // The head, bounded in size and time.
  std::string head;
  size_t end = std::string::npos;
  auto deadline = steady_clock::now() + milliseconds(kHeadTimeoutMs);
  char buf[4096];
  while ((end = ProxyHeadEnd(head)) == std::string::npos) {
    if (head.size() > kMaxProxyHeadBytes)
      return Reply(client.get(), 431, "Request Header Fields Too Large", "a head over 32 KiB");
    auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    pollfd p{client.get(), POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return;
    ssize_t n = recv(client.get(), buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  StatusOr<ProxyRequest> req = ParseProxyRequest(std::string_view(head).substr(0, end));
  if (!req.ok()) return Reply(client.get(), 400, "Bad Request", req.status().message());
  // Whose command asks, from the proxy URL odin gave its worker: a request
  // that does not say is no command's, and is refused.
  if (req->client.empty()) {
    return Reply(client.get(), 407, "Proxy Authentication Required",
                 "use the proxy as HTTP_PROXY names it (its user name says whose command asks)");
  }
  {
    // Only the session's command workers' names (a worker that just
    // started may be told of a moment after its command asks).
    std::unique_lock<std::mutex> lock(mu_);
    if (!clients_changed_.wait_for(lock, std::chrono::seconds(1), [&] { return clients_.count(req->client) != 0; })) {
      lock.unlock();
      return Reply(client.get(), 407, "Proxy Authentication Required",
                   "the proxy's user names none of this session's command workers");
    }
    if (per_client_[req->client] >= kMaxPerClient) {
      return Reply(client.get(), 503, "Service Unavailable", "over 64 connections of one worker's commands at once");
    }
    ++per_client_[req->client];
  }
  struct Release {
    Proxy* p;
    std::string client;
    ~Release() {
      std::lock_guard<std::mutex> lock(p->mu_);
      if (--p->per_client_[client] == 0) p->per_client_.erase(client);
    }
  } release{this, req->client};
  StatusOr<std::string> ascii = IdnToAscii(req->host);
  std::string host = ascii.ok() ? *ascii : req->host;
  NetworkVerdict v = JudgeHost(policy_.rules, host, req->port);
  StatusOr<std::string> name = NormalizeHostName(host);
  if (name.ok()) host = *name;
  if (v.kind == NetworkVerdict::kUnknown && policy_.ask) {
    if (Ask(id, req->client, host, req->port)) {
      v.kind = NetworkVerdict::kAllowed;
      v.rule = "asked";
    } else {
      v.kind = NetworkVerdict::kDenied;
      v.why += ", and was not approved";
    }
  }
  if (v.kind != NetworkVerdict::kAllowed) {
    Opened(id, req->client, host, req->port, false, v.rule, v.why);
    return Reply(client.get(), 403, "Forbidden", v.why);
  }
  // Told before the connect (which may take seconds): odin attributes it
  // to the command that runs now.
  Opened(id, req->client, host, req->port, true, v.rule, "");
  std::string why, address;
  UniqueFd server = Connect(host, req->port, &why, &address);
  v1::ProxyMessage m;
  m.mutable_closed()->set_connection(id);
  if (!server.valid()) {
    m.mutable_closed()->set_failed(why);
    Send(m);
    return Reply(client.get(), 502, "Bad Gateway", why);
  }
  uint64_t up = 0, down = 0;
  std::string rest = head.substr(end);
  bool sent = req->tunnel ? SendAll(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n", 39)
                          : SendAll(server.get(), req->forward_head.data(), req->forward_head.size());
  if (!req->tunnel) up += req->forward_head.size();
  if (sent && !rest.empty()) {
    sent = SendAll(server.get(), rest.data(), rest.size());
    up += rest.size();
  }
  if (sent) Relay(client.get(), server.get(), &up, &down);
  m.mutable_closed()->set_bytes_up(up);
  m.mutable_closed()->set_bytes_down(down);
  Send(m);
}

int Proxy::Run() {
  if (!ReadPolicy()) {
    fprintf(stderr, "odin-net-proxy: no policy from odin\n");
    return 2;
  }
  uint64_t next_id = 1;
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {control_fd_, POLLIN, 0}};
    int n = poll(p, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) _exit(1);  // connections' threads use this object: they go too
    if (p[1].revents != 0) ReadControl();
    if (p[0].revents == 0) continue;
    // Non-blocking: every wait on a client has a deadline (SendAll's poll).
    UniqueFd c(accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!c.valid()) continue;
    if (active_.load() >= kMaxProxyConnections) {
      Reply(c.get(), 503, "Service Unavailable", "too many connections through the proxy at once");
      continue;
    }
    ++active_;
    uint64_t id = next_id++;
    auto owned = std::make_shared<UniqueFd>(std::move(c));
    try {
      std::thread([this, owned, id] {
        Serve(std::move(*owned), id);
        --active_;
      }).detach();
    } catch (const std::system_error&) {
      // No thread to be had (the sandbox's process limit): this one is
      // turned away, the proxy goes on.
      --active_;
      Reply(owned->get(), 503, "Service Unavailable", "the proxy has no thread for another connection");
    }
  }
}

}  // namespace

int RunNetProxy(int listen_fd, int control_fd) {
  // Written to by connections odin's commands may drop at any time.
  signal(SIGPIPE, SIG_IGN);
  Proxy proxy(listen_fd, control_fd);
  return proxy.Run();
}

}  // namespace odin
