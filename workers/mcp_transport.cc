#include "workers/mcp_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <strings.h>

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "base/version.h"
#include "llm/http_client.h"
#include "llm/sse_parser.h"
#include "mcp/mcp_oauth.h"
#include "tools/lsp_client.h"  // PathToUri
#include "tools/text_file.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr size_t kStderrTailBytes = 2048;

class StdioRun final : public McpServerRun {
 public:
  StdioRun(const std::string& name, McpClient::Callbacks callbacks) : McpServerRun(name, std::move(callbacks)) {}
  ~StdioRun() override { Kill(); }

  void Pause() override {
    if (pid_ > 0 && !dead()) kill(-pid_, SIGSTOP);
  }
  void Resume() override {
    if (pid_ > 0) kill(-pid_, SIGCONT);
  }

  Status Start(const McpServerDescription& spec, const std::string& cwd) {
    ASSIGN_OR_RETURN(Pipe in, MakePipe(O_CLOEXEC));
    ASSIGN_OR_RETURN(Pipe out, MakePipe(O_CLOEXEC));
    ASSIGN_OR_RETURN(Pipe err, MakePipe(O_CLOEXEC));
    SpawnOptions o;
    o.argv = spec.argv;
    o.env = spec.env;
    o.cwd = cwd;
    o.stdin_fd = in.read_end.get();
    o.stdout_fd = out.write_end.get();
    o.stderr_fd = err.write_end.get();
    o.parent_death_signal = SIGKILL;
    StatusOr<pid_t> pid = Spawn(o);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    pidfd_ = UniqueFd(OpenPidFd(pid_));
    to_ = std::move(in.write_end);
    from_ = std::move(out.read_end);
    err_ = std::move(err.read_end);
    for (int fd : {to_.get(), from_.get(), err_.get()}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    client_.Start();
    outbox_ = client_.TakeOutput();
    return Status::OK();
  }

  // Its exit status and the last line of its stderr.
  std::string death() const override {
    std::string tail = stderr_tail_;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    return ToDisplayText(death_ + (tail.empty() ? "" : "; its stderr ends: " + tail.substr(tail.rfind('\n') + 1)));
  }

  void AddWatchFds(std::vector<PollFd>* fds) override {
    if (dead()) return;
    fds->push_back({from_.get(), true, false});
    if (err_.valid()) fds->push_back({err_.get(), true, false});
    if (!outbox_.empty()) fds->push_back({to_.get(), false, true});
    if (pidfd_.valid()) fds->push_back({pidfd_.get(), true, false});
  }

  void Service() override {
    if (dead()) return;
    outbox_ += client_.TakeOutput();
    while (!outbox_.empty()) {
      ssize_t n = write(to_.get(), outbox_.data(), outbox_.size());
      if (n > 0) {
        outbox_.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      return Die("its input closed");
    }
    char buf[64 * 1024];
    for (;;) {
      ssize_t n = read(err_.get(), buf, sizeof buf);
      if (n > 0) {
        KeepStderr(std::string_view(buf, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) err_.reset();
      break;
    }
    for (;;) {
      ssize_t n = read(from_.get(), buf, sizeof buf);
      if (n > 0) {
        client_.Feed(std::string_view(buf, static_cast<size_t>(n)));
        if (client_.failed()) return Die("it broke the protocol");
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      return Die("it closed its output");
    }
    outbox_ += client_.TakeOutput();
    int status = 0;
    if (pid_ > 0 && WaitPid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      Die(DescribeWaitStatus(status));
    }
  }

 private:
  void KeepStderr(std::string_view data) {
    stderr_tail_.append(data);
    if (stderr_tail_.size() > kStderrTailBytes) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
  }
  void Kill() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);  // a stopped process dies of it too (no SIGCONT: it would run first)
      kill(pid_, SIGKILL);
      int status = 0;
      WaitPid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  void Die(const std::string& why) {
    if (dead()) return;
    std::string how = why;
    // Gone or going: a moment to be reaped, so the reason is its own status.
    for (int i = 0; pid_ > 0 && i < 50; ++i) {
      int status = 0;
      if (WaitPid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        how = DescribeWaitStatus(status);
        break;
      }
      usleep(2000);
    }
    Kill();
    char buf[4096];
    ssize_t n;
    while (err_.valid() && (n = read(err_.get(), buf, sizeof buf)) > 0) KeepStderr({buf, static_cast<size_t>(n)});
    death_ = "MCP server " + name_ + " " + how;
    outbox_.clear();
  }

  pid_t pid_ = -1;
  UniqueFd pidfd_, to_, from_, err_;
  std::string outbox_;
  std::string stderr_tail_;
};

// Streamable HTTP: each message a POST to the endpoint; the answer is JSON
// or an SSE stream of messages (progress, then the response). The session
// id the server gives at initialize goes with every later request.
class HttpRun final : public McpServerRun {
 public:
  HttpRun(const McpServerDescription& spec, McpClient::Callbacks callbacks)
      : McpServerRun(spec.name, std::move(callbacks)), spec_(spec), authorization_(spec.authorization) {
    // An entry with an Authorization header of its own is never given a
    // token: a 401 is then the server's last word.
    for (const std::string& h : spec_.headers) {
      if (h.size() >= 14 && strncasecmp(h.c_str(), "authorization:", 14) == 0) own_authorization_ = true;
    }
  }

  void Start() {
    client_.Start();
    Post();
  }
  void AddWatchFds(std::vector<PollFd>* fds) override {
    first_ = fds->size();
    count_ = http_.AddWatchFds(fds);
  }
  SteadyTime NextTimer() const override {
    SteadyTime t = http_.NextTimer().value_or(SteadyTime::max());
    return WantsStream() ? std::min(t, stream_retry_at_) : t;
  }
  void OnPolled(const std::vector<PollFd>& fds) override {
    if (first_ + count_ <= fds.size()) http_.Process(fds, first_, count_);
    count_ = 0;
  }
  void Service() override {
    if (dead()) return;
    if (count_ == 0) http_.Process({}, 0, 0);  // timers
    Post();
    if (WantsStream() && Now() >= stream_retry_at_) OpenServerStream();
  }
  // The session's end: the server's stream closed and the session deleted
  // (DELETE with its id; a server may answer 405, which is as good), waiting
  // at most `wait` for the answer.
  void End(Duration wait) override {
    if (stream_) http_.Cancel(*stream_);
    stream_.reset();
    stream_retry_at_ = SteadyTime::max();
    if (session_.empty() || dead()) return;
    HttpRequest req = Request("DELETE");
    req.total_timeout = wait;
    bool done = false;
    HttpClient::Callbacks cb;
    cb.on_done = [&done](const Status&, int) { done = true; };
    http_.Start(std::move(req), std::move(cb));
    http_.RunUntil([&done] { return done; }, Now() + wait);
    session_.clear();
  }
  bool WantsAuthorization() const override { return !dead() && !refused_.empty(); }
  const std::string& authorization() const override { return authorization_; }
  void SetAuthorization(const std::string& header) override {
    if (dead() || header == authorization_) {
      // The same token again: if it was refused, there is no other.
      if (!refused_.empty()) DieForLogin();
      return;
    }
    authorization_ = header;
    // The server's stream, refused for want of a token, is opened again.
    if (stream_wants_token_) {
      stream_wants_token_ = false;
      stream_retry_at_ = Now();
    }
    if (refused_.empty()) return;
    if (header.empty()) return DieForLogin();
    // The refused messages go again, first and in their order; each only
    // once (a server that refuses the new token too needs a login).
    for (auto it = refused_.rbegin(); it != refused_.rend(); ++it) {
      resent_.insert(it->second);
      queue_.push_front(it->second);
    }
    refused_.clear();
    Post();
  }
  void Abandon(uint64_t call) override {
    // A refused request of the call is not sent again.
    std::erase_if(refused_, [call](const std::pair<uint64_t, std::string>& r) { return r.first == call; });
    auto it = call_transfers_.find(call);
    if (it == call_transfers_.end()) return;
    http_.Cancel(it->second);
    call_transfers_.erase(it);
  }

 private:
  struct Stream {
    std::string content_type;
    std::string www_authenticate;
    std::string body;
    std::unique_ptr<SseParser> sse;
  };
  // What the user must do, as the one line every front end shows
  // ("odin: MCP server NAME failed: needs authorization: ...").
  void DieForLogin(const std::string& what = "authorization") {
    if (dead()) return;
    death_ = "needs " + what + ": run `odin mcp login " + name_ + "`";
    needs_login_ = true;
  }

  // Sends what the client queued, in order. A notification or an answer
  // (202 Accepted, no body) is sent alone: what follows waits for its
  // response, so the server sees notifications/initialized before
  // tools/list. Requests go at once; their answers may stream for long.
  void Post() {
    std::string out = client_.TakeOutput();
    for (size_t nl; (nl = out.find('\n')) != std::string::npos; out.erase(0, nl + 1)) {
      queue_.push_back(out.substr(0, nl));
    }
    // While a token is asked for, nothing more goes (it would be refused).
    while (!dead() && !queue_.empty() && in_flight_notifications_ == 0 && refused_.empty()) {
      std::string message = std::move(queue_.front());
      queue_.pop_front();
      json m = ParseJson(message);
      bool request = m.is_object() && m.contains("id") && m.contains("method");
      if (!request) ++in_flight_notifications_;
      uint64_t id = request && m["id"].is_number_unsigned() ? m["id"].get<uint64_t>() : 0;
      uint64_t call = m.is_object() && m.value("method", json()) == "tools/call" ? id : 0;
      HttpRequest req = Request("POST");
      req.body = message;  // copied: a refused message is sent again
      req.headers.push_back("Content-Type: application/json");
      req.headers.push_back("Accept: application/json, text/event-stream");
      auto stream = std::make_shared<Stream>();
      HttpClient::Callbacks cb;
      cb.on_head = [this, stream, request](const HttpResponseHead& head) {
        if (!request) --in_flight_notifications_;
        auto id = head.headers.find("mcp-session-id");
        if (id != head.headers.end() && session_.empty()) session_ = id->second;
        auto type = head.headers.find("content-type");
        stream->content_type = type == head.headers.end() ? "" : type->second;
        auto challenge = head.headers.find("www-authenticate");
        if (challenge != head.headers.end()) stream->www_authenticate = challenge->second.substr(0, 8192);
        if (head.status >= 400) return;
        if (stream->content_type.rfind("text/event-stream", 0) == 0) {
          stream->sse = std::make_unique<SseParser>([this](const SseEvent& e) {
            if (!e.data.empty()) Handle(e.data);
          });
        }
      };
      cb.on_body = [this, stream](std::string_view data) {
        if (stream->sse) {
          stream->sse->Feed(data);
          if (stream->sse->overflowed()) Die("sent an event longer than 64 MiB");
        } else if (stream->body.size() < McpClient::kMaxLineBytes) {
          stream->body.append(data);
        }
      };
      cb.on_done = [this, stream, call, id, message](const Status& s, int http_status) {
        if (call != 0) call_transfers_.erase(call);
        if (!s.ok()) return Die("cannot be reached: " + s.message());
        bool resent = resent_.erase(message) != 0;
        // Not processed: it waits for a token (the worker asks the
        // coordinator), unless the entry brings its own authorization; a
        // message refused again with a new token needs a login.
        if (http_status == 401 && !own_authorization_ && ParseWwwAuthenticate(stream->www_authenticate).bearer) {
          if (resent) return DieForLogin();
          refused_.emplace_back(id, message);
          return;
        }
        if (http_status == 403 && ParseWwwAuthenticate(stream->www_authenticate).error == "insufficient_scope") {
          return DieForLogin("more scope");
        }
        // 404 with a session: the server ended it; the worker starts afresh.
        if (http_status == 404 && !session_.empty()) return Die("ended the session (HTTP 404)");
        if (http_status >= 400) {
          // A server (or a proxy) may echo the request: never the token.
          std::string body = stream->body.substr(0, 300);
          std::string token = authorization_.substr(authorization_.find(' ') + 1);
          for (size_t at; token.size() >= 8 && (at = body.find(token)) != std::string::npos;) {
            body.replace(at, token.size(), "[REDACTED]");
          }
          return Die("answered HTTP " + std::to_string(http_status) + (body.empty() ? "" : ": " + body));
        }
        if (!stream->sse && !stream->body.empty() && stream->content_type.rfind("application/json", 0) == 0) {
          Handle(stream->body);
        }
      };
      HttpClient::Id transfer = http_.Start(std::move(req), std::move(cb));
      if (call != 0) call_transfers_[call] = transfer;
    }
  }
  // A request to the endpoint with the session's headers.
  HttpRequest Request(const std::string& method) const {
    HttpRequest req;
    req.method = method;
    req.url = spec_.url;
    req.headers = spec_.headers;
    if (!authorization_.empty() && !own_authorization_) req.headers.push_back("Authorization: " + authorization_);
    if (!session_.empty()) req.headers.push_back("Mcp-Session-Id: " + session_);
    if (!client_.protocol_version().empty()) {
      req.headers.push_back("MCP-Protocol-Version: " + client_.protocol_version());
    }
    req.total_timeout = seconds(24 * 3600);  // a call's deadline is the coordinator's
    return req;
  }

  // The server's own stream (GET): what it sends unrelated to a request of
  // ours (roots/list, list_changed) comes only on it. Opened once initialize
  // is answered; a 405 or any other refusal means the server offers none,
  // and it is not asked again. A stream that ends is opened again, resuming
  // after its last event (Last-Event-ID), 1 s later, doubling to 30 s.
  void OpenServerStream() {
    stream_retry_at_ = SteadyTime::max();
    HttpRequest req = Request("GET");
    req.headers.push_back("Accept: text/event-stream");
    if (!last_event_id_.empty()) req.headers.push_back("Last-Event-ID: " + last_event_id_);
    auto sse = std::make_shared<std::unique_ptr<SseParser>>();
    SteadyTime opened = Now();
    HttpClient::Callbacks cb;
    cb.on_head = [this, sse](const HttpResponseHead& head) {
      auto type = head.headers.find("content-type");
      if (head.status != 200 || type == head.headers.end() || type->second.rfind("text/event-stream", 0) != 0) return;
      *sse = std::make_unique<SseParser>([this](const SseEvent& e) {
        if (!e.id.empty()) last_event_id_ = e.id.substr(0, 1024);
        if (!e.data.empty()) Handle(e.data);
      });
    };
    cb.on_body = [this, sse](std::string_view data) {
      if (!*sse) return;
      (*sse)->Feed(data);
      if ((*sse)->overflowed()) Die("sent an event longer than 64 MiB on its stream");
    };
    cb.on_done = [this, sse, opened](const Status& s, int http_status) {
      stream_.reset();
      // Refused for want of a token: opened again once there is a new one.
      if (s.ok() && http_status == 401 && !own_authorization_) {
        stream_wants_token_ = true;
        return;
      }
      if (s.ok() && http_status != 200) return;  // 405: none offered; any other refusal the same
      if (Now() - opened > seconds(30)) stream_backoff_ = seconds(1);
      stream_retry_at_ = Now() + stream_backoff_;
      stream_backoff_ = std::min<Duration>(stream_backoff_ * 2, seconds(30));
    };
    stream_ = http_.Start(std::move(req), std::move(cb));
  }
  bool WantsStream() const { return !dead() && !stream_ && !client_.protocol_version().empty(); }
  static SteadyTime Now() { return std::chrono::steady_clock::now(); }

  void Handle(const std::string& message) {
    client_.HandleMessage(message);
    if (client_.failed()) Die("it broke the protocol");
  }
  void Die(const std::string& why) {
    if (dead()) return;
    death_ = ToDisplayText("MCP server " + name_ + " (" + spec_.url + ") " + why);
  }

  McpServerDescription spec_;
  HttpClient http_;
  std::string authorization_;       // the token's header value, "" for none
  bool own_authorization_ = false;  // the entry's headers hold one
  // Messages a 401 refused (with their request id, 0 for none), waiting for
  // a token; those sent again with a new one.
  std::vector<std::pair<uint64_t, std::string>> refused_;
  std::set<std::string> resent_;
  bool stream_wants_token_ = false;  // the server's stream was refused with a 401
  std::string session_;
  size_t first_ = 0, count_ = 0;
  std::deque<std::string> queue_;  // messages not sent yet
  int in_flight_notifications_ = 0;
  std::map<uint64_t, HttpClient::Id> call_transfers_;  // a tool call's POST
  std::optional<HttpClient::Id> stream_;               // the server's stream (GET), while open
  SteadyTime stream_retry_at_{};                       // when to open it (again): at once, later, or never (max)
  Duration stream_backoff_ = seconds(1);
  std::string last_event_id_;
};

}  // namespace

StatusOr<McpServerDescription> McpServerFromEnvironment() {
  const char* text = getenv(kMcpServerEnv);
  if (text == nullptr) return Status::InvalidArgument(std::string(kMcpServerEnv) + " is not set");
  json j = ParseJson(text);
  bool http = j.is_object() && j.contains("url") && j["url"].is_string() && !j["url"].get<std::string>().empty();
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      (!http && (!j.contains("command") || !j["command"].is_string()))) {
    return Status::InvalidArgument(std::string(kMcpServerEnv) + " is not a server's description");
  }
  McpServerDescription s;
  s.name = j["name"];
  s.writable = j.value("writable", false);
  s.roots = j.value("roots", true);
  if (http) {
    s.url = j["url"];
    const json headers = j.value("headers", json::object());
    for (const auto& [k, v] : headers.items()) {
      if (v.is_string()) s.headers.push_back(k + ": " + v.get<std::string>());
    }
    return s;
  }
  s.argv.push_back(j["command"]);
  const json args = j.value("args", json::array());
  for (const json& a : args) {
    if (a.is_string()) s.argv.push_back(a);
  }
  // Our environment (without the description), then the entry's own.
  for (const std::string& e : CurrentEnvironment()) {
    if (e.rfind(std::string(kMcpServerEnv) + "=", 0) != 0) s.env.push_back(e);
  }
  const json env = j.value("env", json::object());
  for (const auto& [k, v] : env.items()) {
    if (v.is_string()) s.env.push_back(k + "=" + v.get<std::string>());
  }
  return s;
}

McpServerRun::McpServerRun(const std::string& name, McpClient::Callbacks callbacks)
    : client_("odin", ODIN_VERSION, std::move(callbacks)), name_(name) {}

StatusOr<std::unique_ptr<McpServerRun>> McpServerRun::Start(const McpServerDescription& server,
                                                            const std::string& workspace,
                                                            McpClient::Callbacks callbacks) {
  std::vector<McpRoot> roots;
  if (server.roots) roots.push_back({PathToUri(workspace), workspace.substr(workspace.rfind('/') + 1)});
  if (!server.url.empty()) {
    auto http = std::make_unique<HttpRun>(server, std::move(callbacks));
    http->client().OfferRoots(std::move(roots));
    http->Start();
    return std::unique_ptr<McpServerRun>(std::move(http));
  }
  auto stdio = std::make_unique<StdioRun>(server.name, std::move(callbacks));
  stdio->client().OfferRoots(std::move(roots));
  RETURN_IF_ERROR(stdio->Start(server, workspace));
  return std::unique_ptr<McpServerRun>(std::move(stdio));
}

}  // namespace odin
