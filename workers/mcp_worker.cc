#include "workers/mcp_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "tools/mcp_client.h"
#include "tools/output_capture.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "base/version.h"
#include "llm/http_client.h"
#include "llm/sse_parser.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

constexpr size_t kStderrTailBytes = 2048;
constexpr size_t kDescriptionBytes = 2048;
constexpr size_t kStructuredBytes = 64 * 1024;
// A server may send progress as often as it likes; the coordinator hears of
// it at most this often (and always of the last step).
constexpr Duration kProgressEvery = milliseconds(100);

struct ServerSpec {
  std::string name;
  bool writable = false;          // held stopped between calls (below)
  std::vector<std::string> argv;  // stdio
  std::vector<std::string> env;
  std::string url;                   // streamable HTTP
  std::vector<std::string> headers;  // "Name: value"
};

StatusOr<ServerSpec> SpecFromEnvironment() {
  const char* text = getenv(kMcpServerEnv);
  if (text == nullptr) return Status::InvalidArgument(std::string(kMcpServerEnv) + " is not set");
  json j = json::parse(text, nullptr, false);
  bool http = j.is_object() && j.contains("url") && j["url"].is_string() && !j["url"].get<std::string>().empty();
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      (!http && (!j.contains("command") || !j["command"].is_string()))) {
    return Status::InvalidArgument(std::string(kMcpServerEnv) + " is not a server's description");
  }
  ServerSpec s;
  s.name = j["name"];
  s.writable = j.value("writable", false);
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

// One run of a server and its MCP session: a process on stdio, or a
// session with a streamable HTTP endpoint.
class ServerRun {
 public:
  ServerRun(const std::string& name, McpClient::Callbacks callbacks)
      : client_("odin", ODIN_VERSION, std::move(callbacks)), name_(name) {}
  virtual ~ServerRun() = default;

  McpClient& client() { return client_; }
  bool dead() const { return !death_.empty(); }
  // Why it is gone.
  virtual std::string death() const { return death_; }
  // first: where its fds start in the turn's vector.
  virtual void AddWatchFds(std::vector<PollFd>* fds) = 0;
  virtual SteadyTime NextTimer() const { return SteadyTime::max(); }
  virtual void OnPolled(const std::vector<PollFd>& fds) {}
  // Moves messages both ways; notices an exit or a broken session.
  virtual void Service() = 0;
  // The call was cancelled: whatever still carries its answer may go.
  virtual void Abandon(uint64_t call) {}
  // Stops a local server's processes between calls, and lets them go on.
  virtual void Pause() {}
  virtual void Resume() {}

 protected:
  McpClient client_;
  std::string name_;
  std::string death_;
};

class StdioRun final : public ServerRun {
 public:
  using ServerRun::ServerRun;
  ~StdioRun() override { Kill(); }

  void Pause() override {
    if (pid_ > 0 && !dead()) kill(-pid_, SIGSTOP);
  }
  void Resume() override {
    if (pid_ > 0) kill(-pid_, SIGCONT);
  }

  Status Start(const ServerSpec& spec, const std::string& cwd) {
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
class HttpRun final : public ServerRun {
 public:
  HttpRun(const ServerSpec& spec, McpClient::Callbacks callbacks)
      : ServerRun(spec.name, std::move(callbacks)), spec_(spec) {}

  void Start() {
    client_.Start();
    Post();
  }
  void AddWatchFds(std::vector<PollFd>* fds) override {
    first_ = fds->size();
    count_ = http_.AddWatchFds(fds);
  }
  SteadyTime NextTimer() const override { return http_.NextTimer().value_or(SteadyTime::max()); }
  void OnPolled(const std::vector<PollFd>& fds) override {
    if (first_ + count_ <= fds.size()) http_.Process(fds, first_, count_);
    count_ = 0;
  }
  void Service() override {
    if (dead()) return;
    if (count_ == 0) http_.Process({}, 0, 0);  // timers
    Post();
  }
  void Abandon(uint64_t call) override {
    auto it = call_transfers_.find(call);
    if (it == call_transfers_.end()) return;
    http_.Cancel(it->second);
    call_transfers_.erase(it);
  }

 private:
  struct Stream {
    std::string content_type;
    std::string body;
    std::unique_ptr<SseParser> sse;
  };

  // Sends what the client queued, in order. A notification or an answer
  // (202 Accepted, no body) is sent alone: what follows waits for its
  // response, so the server sees notifications/initialized before
  // tools/list. Requests go at once; their answers may stream for long.
  void Post() {
    std::string out = client_.TakeOutput();
    for (size_t nl; (nl = out.find('\n')) != std::string::npos; out.erase(0, nl + 1)) {
      queue_.push_back(out.substr(0, nl));
    }
    while (!dead() && !queue_.empty() && in_flight_notifications_ == 0) {
      std::string message = std::move(queue_.front());
      queue_.pop_front();
      json m = json::parse(message, nullptr, false);
      bool request = m.is_object() && m.contains("id") && m.contains("method");
      if (!request) ++in_flight_notifications_;
      uint64_t call = request && m.value("method", json()) == "tools/call" && m["id"].is_number_unsigned()
                          ? m["id"].get<uint64_t>()
                          : 0;
      HttpRequest req;
      req.url = spec_.url;
      req.body = message;
      req.headers = spec_.headers;
      req.headers.push_back("Content-Type: application/json");
      req.headers.push_back("Accept: application/json, text/event-stream");
      if (!session_.empty()) req.headers.push_back("Mcp-Session-Id: " + session_);
      if (!client_.protocol_version().empty()) {
        req.headers.push_back("MCP-Protocol-Version: " + client_.protocol_version());
      }
      req.total_timeout = seconds(24 * 3600);  // a call's deadline is the coordinator's
      auto stream = std::make_shared<Stream>();
      HttpClient::Callbacks cb;
      cb.on_head = [this, stream, request](const HttpResponseHead& head) {
        if (!request) --in_flight_notifications_;
        auto id = head.headers.find("mcp-session-id");
        if (id != head.headers.end() && session_.empty()) session_ = id->second;
        auto type = head.headers.find("content-type");
        stream->content_type = type == head.headers.end() ? "" : type->second;
        if (stream->content_type.rfind("text/event-stream", 0) == 0) {
          stream->sse = std::make_unique<SseParser>([this](const SseEvent& e) {
            if (!e.data.empty()) Handle(e.data);
          });
        }
      };
      cb.on_body = [stream](std::string_view data) {
        if (stream->sse) {
          stream->sse->Feed(data);
        } else if (stream->body.size() < McpClient::kMaxLineBytes) {
          stream->body.append(data);
        }
      };
      cb.on_done = [this, stream, call](const Status& s, int http_status) {
        if (call != 0) call_transfers_.erase(call);
        if (!s.ok()) return Die("cannot be reached: " + s.message());
        // 404 with a session: the server ended it; the worker starts afresh.
        if (http_status == 404 && !session_.empty()) return Die("ended the session (HTTP 404)");
        if (http_status >= 400) {
          std::string body = stream->body.substr(0, 300);
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
  void Handle(const std::string& message) {
    client_.HandleMessage(message);
    if (client_.failed()) Die("it broke the protocol");
  }
  void Die(const std::string& why) {
    if (dead()) return;
    death_ = ToDisplayText("MCP server " + name_ + " (" + spec_.url + ") " + why);
  }

  ServerSpec spec_;
  HttpClient http_;
  std::string session_;
  size_t first_ = 0, count_ = 0;
  std::deque<std::string> queue_;  // messages not sent yet
  int in_flight_notifications_ = 0;
  std::map<uint64_t, HttpClient::Id> call_transfers_;  // a tool call's POST
};

class Worker : public WorkerLogic {
 public:
  Worker(const WorkerOptions& o, Clock* clock, StatusOr<ServerSpec> spec)
      : o_(o), clock_(clock), spec_(std::move(spec)) {}

  void Attach(WorkerChannel* channel) override { channel_ = channel; }
  void Handle(const v1::Envelope& env) override;
  void AddWatchFds(std::vector<PollFd>* fds) override {
    if (server_) server_->AddWatchFds(fds);
  }
  SteadyTime NextTimer() const override { return server_ ? server_->NextTimer() : SteadyTime::max(); }
  void OnPolled(const std::vector<PollFd>& fds) override {
    if (server_) server_->OnPolled(fds);
  }
  void Service() override;
  void Stop() override {
    server_.reset();
    KillAllDescendants();  // what the server left running (we are their subreaper)
  }

 private:
  struct Job {
    v1::ToolRequest req;
    bool list = false;                // McpListTools
    std::optional<uint64_t> call_id;  // tools/call sent
    SteadyTime started{};
    SteadyTime last_progress{};  // progress relayed at most every kProgressEvery
  };
  void Start(const v1::ToolRequest& req);
  // Starts the server if there is none; false (and the job failed) if it cannot.
  bool EnsureServer();
  void Advance();
  void Finish(v1::ToolStatus status, const Status& why, int exit_reason = v1::EXIT_REASON_NORMAL);
  void FinishText(const std::string& text, v1::ToolResult result);
  void OnServerDeath();

  const WorkerOptions& o_;
  Clock* clock_;
  StatusOr<ServerSpec> spec_;
  WorkerChannel* channel_ = nullptr;
  std::unique_ptr<ServerRun> server_;
  int deaths_ = 0;
  std::string given_up_;  // why the server is not started again
  std::optional<Job> job_;
};

void Worker::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest: Start(env.tool_request()); break;
    case v1::Envelope::kCancel: {
      if (!job_ || env.cancel().execution_id() != job_->req.execution_id()) break;
      bool timeout = env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT;
      if (job_->call_id && server_ && !server_->dead()) {
        server_->client().Cancel(*job_->call_id, timeout ? "timed out" : "cancelled");
        server_->Abandon(*job_->call_id);
        server_->Service();
      }
      std::string what = job_->list ? "starting MCP server " + spec_->name : job_->req.tool();
      Finish(timeout ? v1::TOOL_STATUS_TIMED_OUT : v1::TOOL_STATUS_CANCELLED,
             timeout ? Status::DeadlineExceeded(what, "out of time") : Status::Cancelled(what + " cancelled"),
             timeout ? v1::EXIT_REASON_TIMEOUT : v1::EXIT_REASON_KILLED);
      break;
    }
    default: break;
  }
}

void Worker::Start(const v1::ToolRequest& req) {
  if (job_) {
    v1::ToolResult r;
    r.set_execution_id(req.execution_id());
    FailResult(&r, v1::TOOL_STATUS_ERROR, Status::FailedPrecondition("MCP worker " + o_.worker_id, "is busy"));
    return channel_->QueueResult(std::move(r));
  }
  job_.emplace();
  job_->req = req;
  job_->started = clock_->Now();
  if (!spec_.ok()) return Finish(v1::TOOL_STATUS_ERROR, spec_.status());
  std::string prefix = std::string(kMcpToolPrefix) + spec_->name + "__";
  job_->list = req.tool() == kMcpListToolsTool;
  if (!job_->list && (req.tool().rfind(prefix, 0) != 0 || req.tool().size() == prefix.size())) {
    return Finish(v1::TOOL_STATUS_ERROR,
                  Status::InvalidArgument("the MCP worker of " + spec_->name + " does not run " + req.tool()));
  }
  if (!EnsureServer()) return;
  server_->Resume();
  Advance();
}

bool Worker::EnsureServer() {
  if (server_ && !server_->dead()) return true;
  if (!given_up_.empty()) {
    Finish(v1::TOOL_STATUS_CRASHED, Status::Unavailable(given_up_), v1::EXIT_REASON_CRASHED);
    return false;
  }
  McpClient::Callbacks cb;
  cb.on_progress = [this](uint64_t call, double progress, double total, const std::string& message) {
    if (!job_ || job_->call_id != call) return;
    SteadyTime now = clock_->Now();
    bool last = total > 0 && progress >= total;
    if (!last && now - job_->last_progress < kProgressEvery) return;
    job_->last_progress = now;
    v1::Envelope env;
    v1::ToolProgress* p = env.mutable_tool_progress();
    p->set_execution_id(job_->req.execution_id());
    p->mutable_mcp_progress()->set_progress(progress);
    p->mutable_mcp_progress()->set_total(total);
    // A proto string must be UTF-8: a cut may fall inside a character.
    p->mutable_mcp_progress()->set_message(ToDisplayText(message.substr(0, 1024)));
    channel_->Queue(std::move(env));
  };
  cb.on_result = [this](uint64_t call, const McpCallResult& r) {
    if (!job_ || job_->call_id != call) return;
    v1::ToolResult result;
    std::string text = r.text;
    if (!r.error.empty()) text += (text.empty() ? "" : "\n") + r.error;
    json out = {{"server", spec_->name}, {"is_error", r.is_error}};
    if (!r.structured_json.empty() && r.structured_json.size() <= kStructuredBytes) {
      out["structured_content"] = json::parse(r.structured_json, nullptr, false);
    }
    result.set_output_json(Dump(out));
    if (r.is_error) {
      result.set_status(v1::TOOL_STATUS_ERROR);
      result.mutable_error()->set_code(v1::CODE_INTERNAL);
      result.mutable_error()->set_message(r.error.empty() ? "the tool reported an error" : r.error);
    } else {
      result.set_status(v1::TOOL_STATUS_OK);
    }
    result.set_exit_reason(v1::EXIT_REASON_NORMAL);
    deaths_ = 0;  // it answered: a later death may be restarted again
    FinishText(text, std::move(result));
  };
  Status started = Status::OK();
  if (!spec_->url.empty()) {
    auto http = std::make_unique<HttpRun>(*spec_, std::move(cb));
    http->Start();
    server_ = std::move(http);
  } else {
    auto stdio = std::make_unique<StdioRun>(spec_->name, std::move(cb));
    started = stdio->Start(*spec_, o_.workspace);
    server_ = std::move(stdio);
  }
  if (!started.ok()) {
    server_.reset();
    given_up_ = "MCP server " + spec_->name + " cannot start: " + started.message();
    Finish(v1::TOOL_STATUS_ERROR, Status::Unavailable(given_up_));
    return false;
  }
  return true;
}

void Worker::Advance() {
  if (!job_ || !server_ || server_->dead() || !server_->client().ready()) return;
  Job& j = *job_;
  if (j.list) {
    const McpClient& c = server_->client();
    json tools = json::array();
    std::string names;
    for (const McpTool& t : c.tools()) {
      json schema = json::parse(t.input_schema_json, nullptr, false);
      tools.push_back({{"name", t.name},
                       {"description", t.description.substr(0, kDescriptionBytes)},
                       {"input_schema", schema.is_object() ? schema : json{{"type", "object"}}},
                       {"read_only", t.read_only},
                       {"destructive", t.destructive}});
      names += (names.empty() ? "" : ", ") + t.name;
    }
    v1::ToolResult result;
    result.set_status(v1::TOOL_STATUS_OK);
    result.set_exit_reason(v1::EXIT_REASON_NORMAL);
    result.set_output_json(Dump({{"server", spec_->name},
                                 {"server_info", c.server_name()},
                                 {"protocol_version", c.protocol_version()},
                                 {"tools", tools}}));
    return FinishText("MCP server " + spec_->name + " (protocol " + c.protocol_version() + "): " +
                          std::to_string(c.tools().size()) + " tools" + (names.empty() ? "" : ": " + names) + "\n",
                      std::move(result));
  }
  if (!j.call_id) {
    std::string tool = j.req.tool().substr(std::string(kMcpToolPrefix).size() + spec_->name.size() + 2);
    j.call_id = server_->client().CallTool(tool, j.req.arguments_json());
    server_->Service();
  }
}

void Worker::Service() {
  if (!server_) return;
  server_->Service();
  if (server_->dead()) return OnServerDeath();
  Advance();
  if (server_ && server_->dead()) OnServerDeath();
}

void Worker::OnServerDeath() {
  std::string why = server_->death();
  server_.reset();
  ++deaths_;
  spdlog::warn("{}", why);
  if (deaths_ >= 2) given_up_ = why + " (it died twice; not started again)";
  if (job_) Finish(v1::TOOL_STATUS_CRASHED, Status::Unavailable(why), v1::EXIT_REASON_CRASHED);
  // Started again once, at once: the next call finds it ready.
  if (given_up_.empty() && EnsureServer() && spec_->writable) server_->Pause();
}

void Worker::Finish(v1::ToolStatus status, const Status& why, int exit_reason) {
  v1::ToolResult r;
  std::string text = FailResult(&r, status, why);
  r.set_exit_reason(static_cast<v1::ExitReason>(exit_reason));
  if (spec_.ok()) r.set_output_json(Dump({{"server", spec_->name}, {"is_error", true}}));
  FinishText(text, std::move(r));
}

void Worker::FinishText(const std::string& text, v1::ToolResult result) {
  if (!job_) return;
  const v1::ToolRequest& req = job_->req;
  result.set_execution_id(req.execution_id());
  result.set_duration_us(
      static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - job_->started).count()));
  // Streamed (up to the request's limit), so the coordinator keeps the whole
  // text as an artifact; head and tail are what the model sees.
  OutputCapture capture(req.output_head_bytes(), req.output_tail_bytes());
  capture.Append(text);
  uint64_t limit = req.stream_limit_bytes();
  for (size_t pos = 0; pos < text.size() && (limit == 0 || pos < limit); pos += 64 * 1024) {
    size_t n = std::min<size_t>(64 * 1024, text.size() - pos);
    if (limit != 0) n = std::min<size_t>(n, limit - pos);
    v1::Envelope env;
    v1::ToolProgress* p = env.mutable_tool_progress();
    p->set_execution_id(req.execution_id());
    p->mutable_output()->set_stream(v1::OUTPUT_STREAM_STDOUT);
    p->mutable_output()->set_data(text.data() + pos, n);
    channel_->Queue(std::move(env));
  }
  result.set_output_head(capture.head());
  result.set_output_tail(capture.tail());
  result.set_output_total_bytes(capture.total());
  job_.reset();
  channel_->QueueResult(std::move(result));
  channel_->Flush();
  // A writable server may change the workspace only while one of its calls
  // runs (the coordinator tracks and checks each call's changes): between
  // calls its processes are stopped. (What is queued for it, a
  // cancellation, it reads when its next call resumes it.)
  if (spec_.ok() && spec_->writable && server_) server_->Pause();
}

}  // namespace

int RunMcpWorker(const WorkerOptions& options, Clock* clock) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  StatusOr<ServerSpec> spec = SpecFromEnvironment();
  if (!spec.ok()) spdlog::error("{}", spec.status().message());
  Worker worker(options, clock, std::move(spec));
  WorkerHello hello{v1::WORKER_KIND_MCP, {kMcpListToolsTool}};
  return RunWorkerLoop(options, hello, clock, &worker);
}

}  // namespace odin
