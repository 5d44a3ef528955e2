#include "tools/lsp_client.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr size_t kMaxMessageBytes = 64u << 20;  // a server that sends more is broken

bool Unreserved(unsigned char c) { return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A number field of an object, or 0 (servers are not to be trusted with types).
uint32_t Number(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return 0;
  return static_cast<uint32_t>(std::min<int64_t>(it->get<int64_t>(), UINT32_MAX - 1));
}

const json& Member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string CodeText(const json& code) {
  if (code.is_string()) return code.get<std::string>();
  if (code.is_number_integer()) return std::to_string(code.get<int64_t>());
  return "";
}

// write(2) to a pipe whose reader is gone raises SIGPIPE, which kills a
// process that has not ignored it. Blocked for the call, and a SIGPIPE it
// raised is taken off the pending set, so the caller just sees EPIPE.
ssize_t WriteNoSigpipe(int fd, const std::string& data) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t n = write(fd, data.data(), data.size());
  int saved = errno;
  if (n < 0 && errno == EPIPE && !was_pending) {
    timespec zero{};
    while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

// Adds a tsserver diagnostics response (the result of executeCommand
// "typescript.tsserverRequest": {success, body: [{start: {line, offset},
// text, code, category}]}) to answer.
void AddTsserverDiagnostics(const json& result, PulledDiagnostics* answer) {
  if (!Member(result, "success").is_boolean() || !result["success"].get<bool>()) {
    const json& message = Member(result, "message");
    answer->error = true;
    answer->message = message.is_string() ? message.get<std::string>() : "tsserver did not succeed";
    return;
  }
  const json& body = Member(result, "body");
  for (const json& item : body.is_array() ? body : json::array()) {
    if (!item.is_object()) continue;
    LspDiagnostic diag;
    const json& start = Member(item, "start");
    diag.line = std::max<uint32_t>(Number(start, "line"), 1);
    diag.column = std::max<uint32_t>(Number(start, "offset"), 1);
    const json& category = Member(item, "category");
    std::string c = category.is_string() ? category.get<std::string>() : "error";
    diag.severity = c == "warning" ? 2 : c == "suggestion" ? 4 : c == "message" ? 3 : 1;
    if (item.contains("code")) diag.code = CodeText(item["code"]);
    if (Member(item, "text").is_string()) diag.message = item["text"];
    diag.source = "typescript";
    answer->items.push_back(std::move(diag));
  }
}

}  // namespace

std::string PathToUri(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  for (unsigned char c : path) {
    if (Unreserved(c)) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

std::string UriToPath(const std::string& uri) {
  const std::string prefix = "file://";
  if (uri.compare(0, prefix.size(), prefix) != 0) return "";
  std::string path;
  for (size_t i = prefix.size(); i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size() && HexValue(uri[i + 1]) >= 0 && HexValue(uri[i + 2]) >= 0) {
      path += static_cast<char>(HexValue(uri[i + 1]) * 16 + HexValue(uri[i + 2]));
      i += 2;
    } else {
      path += uri[i];
    }
  }
  return path;
}

StatusOr<std::unique_ptr<LspServer>> LspServer::Start(const LspServerOptions& o, Clock* clock) {
  if (o.command.empty()) return Status::InvalidArgument("language server: no command");
  ASSIGN_OR_RETURN(Pipe in, MakePipe(O_CLOEXEC));
  ASSIGN_OR_RETURN(Pipe out, MakePipe(O_CLOEXEC));
  SpawnOptions spawn;
  spawn.argv = o.command;
  spawn.env = o.env;
  spawn.cwd = o.root;
  spawn.stdin_fd = in.read_end.get();
  spawn.stdout_fd = out.write_end.get();
  spawn.stderr_fd = o.stderr_fd;
  spawn.parent_death_signal = SIGKILL;
  StatusOr<pid_t> pid = Spawn(spawn);
  in.read_end.reset();
  out.write_end.reset();
  if (!pid.ok()) return pid.status();
  std::unique_ptr<LspServer> s(new LspServer(clock));
  s->root_ = o.root;
  s->pid_ = *pid;
  s->pidfd_ = OpenPidFd(*pid);
  s->to_server_ = in.write_end.release();
  s->from_server_ = out.read_end.release();
  fcntl(s->to_server_, F_SETFL, fcntl(s->to_server_, F_GETFL) | O_NONBLOCK);
  fcntl(s->from_server_, F_SETFL, fcntl(s->from_server_, F_GETFL) | O_NONBLOCK);
  s->started_at_ = clock->Now();

  std::string name = o.root.substr(o.root.find_last_of('/') + 1);
  json params = {
      {"processId", getpid()},
      {"clientInfo", {{"name", "odin"}}},
      {"rootUri", PathToUri(o.root)},
      {"rootPath", o.root},
      {"workspaceFolders", json::array({{{"uri", PathToUri(o.root)}, {"name", name}}})},
      {"capabilities",
       {{"textDocument",
         {{"synchronization", {{"didSave", false}, {"dynamicRegistration", false}}},
          {"publishDiagnostics", {{"versionSupport", true}, {"relatedInformation", false}}},
          {"references", {{"dynamicRegistration", false}}}}},
        {"workspace", {{"configuration", true}, {"workspaceFolders", true}}},
        {"window", {{"workDoneProgress", false}}}}},
  };
  s->initialize_id_ = s->next_id_++;
  s->Send(json({{"jsonrpc", "2.0"}, {"id", s->initialize_id_}, {"method", "initialize"}, {"params", params}}).dump());
  return s;
}

LspServer::~LspServer() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status;
    WaitPid(pid_, &status, 0);
  }
  for (int fd : {pidfd_, to_server_, from_server_}) {
    if (fd >= 0) close(fd);
  }
}

void LspServer::Send(const std::string& body) {
  if (dead_) return;
  outbox_ += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  outbox_ += body;
  Service();
}

void LspServer::Notify(const std::string& method, const std::string& params_json) {
  Send(R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params_json + "}");
}

void LspServer::DidOpen(const std::string& path, const std::string& language_id, int64_t version,
                        const std::string& text) {
  json params = {
      {"textDocument", {{"uri", PathToUri(path)}, {"languageId", language_id}, {"version", version}, {"text", text}}}};
  Notify("textDocument/didOpen", params.dump(-1, ' ', false, json::error_handler_t::replace));
}

void LspServer::DidChange(const std::string& path, int64_t version, const std::string& text) {
  json params = {{"textDocument", {{"uri", PathToUri(path)}, {"version", version}}},
                 {"contentChanges", json::array({{{"text", text}}})}};
  Notify("textDocument/didChange", params.dump(-1, ' ', false, json::error_handler_t::replace));
}

void LspServer::DidClose(const std::string& path) {
  Notify("textDocument/didClose", json({{"textDocument", {{"uri", PathToUri(path)}}}}).dump());
  published_.erase(path);
}

int64_t LspServer::AskReferences(const std::string& path, uint32_t line, uint32_t character) {
  int64_t id = next_id_++;
  references_[id];
  json params = {{"textDocument", {{"uri", PathToUri(path)}}},
                 {"position", {{"line", line}, {"character", character}}},
                 {"context", {{"includeDeclaration", false}}}};
  Send(json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "textDocument/references"}, {"params", params}}).dump());
  return id;
}

const LspReferences* LspServer::References(int64_t id) const {
  auto it = references_.find(id);
  return it == references_.end() || !it->second ? nullptr : &*it->second;
}

void LspServer::ForgetReferences(int64_t id) { references_.erase(id); }

int64_t LspServer::PullDiagnostics(const std::string& path) {
  int64_t pull = next_id_;
  Pull& p = pulls_[pull];
  for (const char* command : {"syntacticDiagnosticsSync", "semanticDiagnosticsSync"}) {
    int64_t id = next_id_++;
    pull_requests_[id] = pull;
    ++p.parts_left;
    json params = {{"command", "typescript.tsserverRequest"},
                   {"arguments", json::array({command, {{"file", PathToUri(path)}}})}};
    Send(json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "workspace/executeCommand"}, {"params", params}}).dump());
  }
  return pull;
}

const PulledDiagnostics* LspServer::Pulled(int64_t id) const {
  auto it = pulls_.find(id);
  return it == pulls_.end() || it->second.parts_left > 0 ? nullptr : &it->second.answer;
}

void LspServer::ForgetPulled(int64_t id) {
  pulls_.erase(id);
  std::erase_if(pull_requests_, [id](const auto& r) { return r.second == id; });
}

const PublishedDiagnostics* LspServer::Latest(const std::string& path) const {
  auto it = published_.find(path);
  return it == published_.end() ? nullptr : &it->second;
}

void LspServer::AddWatchFds(std::vector<PollFd>* fds) const {
  if (dead_) return;
  fds->push_back({from_server_, true, false});
  if (!outbox_.empty()) fds->push_back({to_server_, false, true});
  if (pidfd_ >= 0) fds->push_back({pidfd_, true, false});
}

void LspServer::Die(const std::string& why) {
  if (dead_) return;
  dead_ = true;
  ready_ = false;
  death_ = why;
  outbox_.clear();
  if (pid_ <= 0) return;
  // Gone or going (its output or input closed): a moment to be reaped, so
  // the reason is its own exit status rather than our kill.
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    if (WaitPid(pid_, &status, WNOHANG) == pid_) {
      death_ = DescribeWaitStatus(status);
      pid_ = -1;
      return;
    }
    usleep(2000);
  }
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  WaitPid(pid_, &status, 0);
  pid_ = -1;
}

bool LspServer::RunUntil(const std::function<bool()>& done, Duration limit) {
  SteadyTime end = clock_->Now() + limit;
  while (!done()) {
    if (dead_ || clock_->Now() >= end) return done();
    std::vector<PollFd> fds;
    AddWatchFds(&fds);
    std::vector<pollfd> p;
    for (const PollFd& f : fds) {
      p.push_back({f.fd, static_cast<short>((f.want_read ? POLLIN : 0) | (f.want_write ? POLLOUT : 0)), 0});
    }
    poll(p.data(), p.size(), 50);
    Service();
  }
  return true;
}

void LspServer::Service() {
  if (dead_) return;
  while (!outbox_.empty()) {
    ssize_t n = WriteNoSigpipe(to_server_, outbox_);
    if (n > 0) {
      outbox_.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return Die(std::string("its input closed: ") + strerror(errno));
  }
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = read(from_server_, buf, sizeof buf);
    if (n > 0) {
      inbox_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    return Die("it closed its output");  // EOF
  }
  // Frames: headers, a blank line, then Content-Length bytes of JSON.
  for (;;) {
    size_t end = inbox_.find("\r\n\r\n");
    if (end == std::string::npos) break;
    size_t length = std::string::npos;
    size_t pos = 0;
    while (pos < end) {
      size_t eol = inbox_.find("\r\n", pos);
      if (eol == std::string::npos || eol > end) eol = end;
      std::string header = inbox_.substr(pos, eol - pos);
      const std::string key = "content-length:";
      if (header.size() > key.size() && strncasecmp(header.c_str(), key.c_str(), key.size()) == 0) {
        length = strtoull(header.c_str() + key.size(), nullptr, 10);
      }
      pos = eol + 2;
    }
    if (length == std::string::npos || length > kMaxMessageBytes) return Die("it broke the protocol (bad header)");
    if (inbox_.size() < end + 4 + length) break;
    std::string body = inbox_.substr(end + 4, length);
    inbox_.erase(0, end + 4 + length);
    HandleMessage(body);
    if (dead_) return;
  }
  if (pidfd_ >= 0 && pid_ > 0) {
    int status = 0;
    if (WaitPid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      Die(DescribeWaitStatus(status));
    }
  }
}

void LspServer::HandleMessage(const std::string& body) {
  json m = ParseJson(body);
  if (!m.is_object()) return;
  bool has_id = m.contains("id") && !m["id"].is_null();
  if (m.contains("method") && m["method"].is_string()) {
    std::string method = m["method"].get<std::string>();
    if (method == "textDocument/publishDiagnostics") {
      const json& p = Member(m, "params");
      if (!Member(p, "uri").is_string()) return;
      std::string path = UriToPath(p["uri"].get<std::string>());
      if (path.empty()) return;
      PublishedDiagnostics d;
      if (p.contains("version") && p["version"].is_number_integer()) d.version = p["version"].get<int64_t>();
      const json& items = Member(p, "diagnostics");
      for (const json& item : items.is_array() ? items : json::array()) {
        if (!item.is_object()) continue;
        LspDiagnostic diag;
        const json& start = Member(Member(item, "range"), "start");
        diag.line = Number(start, "line") + 1;
        diag.column = Number(start, "character") + 1;
        diag.severity = Number(item, "severity");
        if (diag.severity < 1 || diag.severity > 4) diag.severity = 1;
        if (item.contains("code")) diag.code = CodeText(item["code"]);
        if (item.contains("message") && item["message"].is_string()) diag.message = item["message"];
        if (item.contains("source") && item["source"].is_string()) diag.source = item["source"];
        d.items.push_back(std::move(diag));
      }
      d.seq = ++publish_seq_;
      d.at = clock_->Now();
      published_[path] = std::move(d);
      return;
    }
    if (!has_id) return;  // another notification: logs, progress
    json result = nullptr;
    if (method == "workspace/configuration") {
      const json& items = Member(Member(m, "params"), "items");
      size_t n = items.is_array() ? items.size() : 0;
      result = json::array();
      for (size_t i = 0; i < n; ++i) result.push_back(nullptr);
    } else if (method == "workspace/workspaceFolders") {
      std::string name = root_.substr(root_.find_last_of('/') + 1);
      result = json::array({{{"uri", PathToUri(root_)}, {"name", name}}});
    } else if (method != "window/workDoneProgress/create" && method != "client/registerCapability" &&
               method != "client/unregisterCapability" && method != "window/showMessageRequest") {
      Send(json({{"jsonrpc", "2.0"},
                 {"id", m["id"]},
                 {"error", {{"code", -32601}, {"message", "not supported by odin: " + method}}}})
               .dump());
      return;
    }
    Send(json({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", result}}).dump());
    return;
  }
  // A response to one of our requests: initialize, a pull, or references.
  if (!has_id || !m["id"].is_number_integer()) return;
  int64_t id = m["id"].get<int64_t>();
  if (id == initialize_id_) {
    if (m.contains("error")) {
      const json& message = Member(m["error"], "message");
      return Die("initialize failed: " + (message.is_string() ? message.get<std::string>() : std::string("?")));
    }
    const json& provider = Member(Member(Member(m, "result"), "capabilities"), "referencesProvider");
    finds_references_ = provider.is_object() || (provider.is_boolean() && provider.get<bool>());
    const json& commands =
        Member(Member(Member(Member(m, "result"), "capabilities"), "executeCommandProvider"), "commands");
    for (const json& c : commands.is_array() ? commands : json::array()) {
      if (c == "typescript.tsserverRequest") runs_tsserver_requests_ = true;
    }
    ready_ = true;
    Notify("initialized", "{}");
    return;
  }
  if (auto part = pull_requests_.find(id); part != pull_requests_.end()) {
    Pull& p = pulls_[part->second];
    pull_requests_.erase(part);
    if (m.contains("error")) {
      const json& message = Member(m["error"], "message");
      p.answer.error = true;
      p.answer.message = message.is_string() ? message.get<std::string>() : std::string("an error without a message");
    } else {
      AddTsserverDiagnostics(Member(m, "result"), &p.answer);
    }
    --p.parts_left;
    return;
  }
  auto asked = references_.find(id);
  if (asked == references_.end() || asked->second) return;  // not asked, or forgotten
  LspReferences& answer = asked->second.emplace();
  if (m.contains("error")) {
    const json& message = Member(m["error"], "message");
    answer.error = true;
    answer.message = message.is_string() ? message.get<std::string>() : std::string("an error without a message");
    return;
  }
  const json& result = Member(m, "result");
  for (const json& loc : result.is_array() ? result : json::array()) {
    const json& uri = Member(loc, "uri");
    if (!uri.is_string()) continue;
    std::string path = UriToPath(uri.get<std::string>());
    if (path.empty()) continue;
    const json& start = Member(Member(loc, "range"), "start");
    answer.locations.push_back({path, Number(start, "line") + 1, Number(start, "character") + 1});
  }
}

}  // namespace odin
