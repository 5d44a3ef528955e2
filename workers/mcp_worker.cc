#include "workers/mcp_worker.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/json_input.h"
#include "base/subprocess.h"
#include "odin/v1/worker.pb.h"
#include "mcp/mcp_client.h"
#include "tools/output_capture.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "workers/mcp_transport.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

constexpr size_t kDescriptionBytes = 2048;
constexpr size_t kStructuredBytes = 64 * 1024;
constexpr size_t kPromptBytes = 256 * 1024;
constexpr size_t kSchemaBytes = 16 * 1024;  // an elicitation's form
// A server may send progress as often as it likes; the coordinator hears of
// it at most this often (and always of the last step).
constexpr Duration kProgressEvery = milliseconds(100);

// What the server lists (McpListTools' output_json, and an McpListing's),
// bounded a little past what the registry keeps (mcp/mcp_registry.cc), so it
// still sees what it skips: a listing is a few MiB at most, whatever the
// server sent.
json ListingJson(const std::string& server, const McpClient& c) {
  constexpr size_t kItems = 200, kResources = 1100, kTemplates = 110, kUri = 4097, kName = 256, kMime = 128;
  constexpr size_t kSchema = 32 * 1024;
  json tools = json::array(), resources = json::array(), templates = json::array();
  for (const McpTool& t : c.tools()) {
    if (tools.size() >= kItems) break;
    json one = {{"name", t.name.substr(0, kName)},
                {"description", t.description.substr(0, kDescriptionBytes)},
                {"read_only", t.read_only},
                {"destructive", t.destructive}};
    if (t.input_schema_json.size() > kSchema) {
      one["input_schema_too_large"] = true;
    } else {
      json schema = ParseJson(t.input_schema_json);
      one["input_schema"] = schema.is_object() ? schema : json{{"type", "object"}};
    }
    tools.push_back(std::move(one));
  }
  for (const McpResource& r : c.resources()) {
    if (resources.size() >= kResources) break;
    json one = {{"uri", r.uri.substr(0, kUri)},
                {"name", r.name.substr(0, kName)},
                {"description", r.description.substr(0, kDescriptionBytes)},
                {"mime_type", r.mime_type.substr(0, kMime)}};
    if (r.size >= 0) one["size"] = r.size;
    resources.push_back(std::move(one));
  }
  for (const McpResourceTemplate& t : c.resource_templates()) {
    if (templates.size() >= kTemplates) break;
    templates.push_back({{"uri_template", t.uri_template.substr(0, kUri)},
                         {"name", t.name.substr(0, kName)},
                         {"description", t.description.substr(0, kDescriptionBytes)},
                         {"mime_type", t.mime_type.substr(0, kMime)}});
  }
  json prompts = json::array();
  for (const McpPrompt& p : c.prompts()) {
    if (prompts.size() >= kItems) break;
    json arguments = json::array();
    for (const McpPromptArgument& a : p.arguments) {
      if (arguments.size() >= 33) break;
      arguments.push_back(
          {{"name", a.name.substr(0, 65)}, {"description", a.description.substr(0, 512)}, {"required", a.required}});
    }
    prompts.push_back({{"name", p.name.substr(0, kName)},
                       {"description", p.description.substr(0, kDescriptionBytes)},
                       {"arguments", arguments}});
  }
  return {{"server", server},
          {"server_info", c.server_name()},
          {"protocol_version", c.protocol_version()},
          {"tools", tools},
          {"offers_resources", c.offers_resources()},
          {"resources", resources},
          {"resource_templates", templates},
          {"prompts", prompts}};
}

class Worker : public WorkerLogic {
 public:
  Worker(const WorkerOptions& o, Clock* clock, StatusOr<McpServerDescription> spec)
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
    if (server_) server_->End(seconds(1));
    server_.reset();
    KillAllDescendants();  // what the server left running (we are their subreaper)
  }

 private:
  struct Job {
    v1::ToolRequest req;
    bool list = false;                  // McpListTools
    std::optional<std::string> read;    // ReadMcpResource: the resource's URI
    std::optional<std::string> prompt;  // McpGetPrompt: the prompt's name
    std::string prompt_arguments;       // and its arguments, a JSON object
    std::optional<uint64_t> call_id;    // tools/call sent
    SteadyTime started{};
    SteadyTime last_progress{};  // progress relayed at most every kProgressEvery
  };
  void Start(const v1::ToolRequest& req);
  // The server refused our token: the coordinator is asked for another.
  void AskForToken();
  // Starts the server if there is none; false (and the jobs failed) if it
  // cannot.
  bool EnsureServer();
  // Sends each job's request once the server is ready (a listing ends).
  void Advance();
  void Advance(Job& j);
  void Finish(const std::string& id, v1::ToolStatus status, const Status& why,
              int exit_reason = v1::EXIT_REASON_NORMAL);
  void FinishAll(v1::ToolStatus status, const Status& why, int exit_reason = v1::EXIT_REASON_NORMAL);
  // id is a copy: the job it names, and its strings, go here.
  void FinishText(std::string id, const std::string& text, v1::ToolResult result);
  // The job whose server request is call, if one is.
  Job* JobOfCall(uint64_t call) {
    for (auto& [id, j] : jobs_) {
      if (j.call_id == call) return &j;
    }
    return nullptr;
  }
  // The job a server's question is taken to be for: the oldest sent to the
  // server (MCP does not say which request a question is for on stdio).
  Job* OldestCall() {
    Job* oldest = nullptr;
    for (auto& [id, j] : jobs_) {
      if (j.call_id && (oldest == nullptr || *j.call_id < *oldest->call_id)) oldest = &j;
    }
    return oldest;
  }
  void OnServerDeath();
  // Tells the coordinator, unasked, what the server lists now.
  void SendListing() {
    v1::Envelope env;
    env.mutable_mcp_listing()->set_output_json(Dump(ListingJson(spec_->name, server_->client())));
    channel_->Queue(std::move(env));
  }

  const WorkerOptions& o_;
  Clock* clock_;
  StatusOr<McpServerDescription> spec_;
  WorkerChannel* channel_ = nullptr;
  std::unique_ptr<McpServerRun> server_;
  int deaths_ = 0;
  std::string given_up_;  // why the server is not started again
  // The calls it holds, by execution id: several at once where the
  // coordinator sends several (a server that only reads), one for a
  // writable server.
  std::map<std::string, Job> jobs_;
  struct Question {
    std::string request_id;    // the server's
    std::string execution_id;  // the call it was asked for
  };
  std::map<std::string, Question> questions_;  // by the coordinator's question id
  uint64_t asked_ = 0;
  std::string token_question_;  // the question for a token, while one is out
  std::string token_job_;       // the call it was asked for
  bool listed_ = false;         // a server of this worker's has listed once
};

void Worker::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest: Start(env.tool_request()); break;
    case v1::Envelope::kMcpAnswer: {
      if (!token_question_.empty() && env.mcp_answer().question_id() == token_question_) {
        // The coordinator's token after the server refused ours.
        token_question_.clear();
        if (server_ && !server_->dead()) server_->SetAuthorization(env.mcp_answer().authorization());
        Service();
        break;
      }
      // The user's answer (or the coordinator's decline) to its server's
      // question, if it still waits.
      auto it = questions_.find(env.mcp_answer().question_id());
      if (it == questions_.end() || !server_ || server_->dead()) break;
      const v1::McpAnswer& a = env.mcp_answer();
      std::string action = a.action() == "accept" || a.action() == "decline" ? a.action() : "cancel";
      json result = {{"action", action}};
      json content = ParseJson(a.content_json());
      if (action == "accept" && content.is_object()) result["content"] = content;
      server_->client().AnswerRequest(it->second.request_id, Dump(result));
      questions_.erase(it);
      Service();  // (a death it finds ends the calls in flight)
      break;
    }
    case v1::Envelope::kCancel: {
      auto job = jobs_.find(env.cancel().execution_id());
      if (job == jobs_.end()) break;
      Job& j = job->second;
      bool timeout = env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT;
      if (j.call_id && server_ && !server_->dead()) {
        server_->client().Cancel(*j.call_id, timeout ? "timed out" : "cancelled");
        server_->Abandon(*j.call_id);
      }
      std::string what = j.list ? "starting MCP server " + spec_->name : j.req.tool();
      Finish(job->first, timeout ? v1::TOOL_STATUS_TIMED_OUT : v1::TOOL_STATUS_CANCELLED,
             timeout ? Status::DeadlineExceeded(what, "out of time") : Status::Cancelled(what + " cancelled"),
             timeout ? v1::EXIT_REASON_TIMEOUT : v1::EXIT_REASON_KILLED);
      Service();  // the cancellation goes out; a death it finds ends the other calls
      break;
    }
    default: break;
  }
}

void Worker::Start(const v1::ToolRequest& req) {
  // The pool sends a writable server one call at a time, another at most
  // kMaxCalls; past that, or an id it holds already, is refused.
  constexpr size_t kMaxCalls = 16;
  const std::string& id = req.execution_id();
  if (jobs_.count(id) != 0 || jobs_.size() >= kMaxCalls || (!jobs_.empty() && (!spec_.ok() || spec_->writable))) {
    v1::ToolResult r;
    r.set_execution_id(id);
    FailResult(&r, v1::TOOL_STATUS_ERROR, Status::FailedPrecondition("MCP worker " + o_.worker_id, "is busy"));
    return channel_->QueueResult(std::move(r));
  }
  // A death noticed where nothing handled it ends the calls of that server
  // (their request ids are its) before this one starts another.
  if (server_ && server_->dead()) OnServerDeath();
  Job& j = jobs_[id];
  j.req = req;
  j.started = clock_->Now();
  if (!spec_.ok()) return Finish(id, v1::TOOL_STATUS_ERROR, spec_.status());
  std::string prefix = std::string(kMcpToolPrefix) + spec_->name + "__";
  j.list = req.tool() == kMcpListToolsTool;
  if (req.tool() == kReadMcpResourceTool || req.tool() == kMcpGetPromptTool) {
    // The coordinator routed it here by its server; what is not this
    // server's, or names no resource or prompt, is not run.
    bool read = req.tool() == kReadMcpResourceTool;
    json args = ParseJson(req.arguments_json());
    const char* key = read ? "uri" : "name";
    if (!args.is_object() || args.value("server", json()) != spec_->name || !args.contains(key) ||
        !args[key].is_string()) {
      return Finish(
          id, v1::TOOL_STATUS_ERROR,
          Status::InvalidArgument("the MCP worker of " + spec_->name + " is not asked for one of its server's " +
                                  (read ? "resources" : "prompts")));
    }
    (read ? j.read : j.prompt) = args[key].get<std::string>();
    if (!read) j.prompt_arguments = Dump(args.value("arguments", json::object()));
  } else if (!j.list && (req.tool().rfind(prefix, 0) != 0 || req.tool().size() == prefix.size())) {
    return Finish(id, v1::TOOL_STATUS_ERROR,
                  Status::InvalidArgument("the MCP worker of " + spec_->name + " does not run " + req.tool()));
  }
  // The user's token for an HTTP server, as the coordinator has it now
  // (refreshed, perhaps): for the server's next start, and its requests.
  // A server waiting for a token takes this one only if it is new; else
  // this job asks the coordinator again (AskForToken: the job that asked
  // before may have ended, and its answer with it).
  spec_->authorization = req.mcp_authorization();
  if (server_ && !server_->dead() && token_question_.empty() &&
      (!server_->WantsAuthorization() || req.mcp_authorization() != server_->authorization())) {
    server_->SetAuthorization(req.mcp_authorization());
  }
  if (!EnsureServer()) return;
  server_->Resume();
  Service();
}

bool Worker::EnsureServer() {
  if (server_ && !server_->dead()) return true;
  if (!given_up_.empty()) {
    FinishAll(v1::TOOL_STATUS_CRASHED, Status::Unavailable(given_up_), v1::EXIT_REASON_CRASHED);
    return false;
  }
  McpClient::Callbacks cb;
  cb.on_progress = [this](uint64_t call, double progress, double total, const std::string& message) {
    Job* j = JobOfCall(call);
    if (j == nullptr) return;
    SteadyTime now = clock_->Now();
    bool last = total > 0 && progress >= total;
    if (!last && now - j->last_progress < kProgressEvery) return;
    j->last_progress = now;
    v1::Envelope env;
    v1::ToolProgress* p = env.mutable_tool_progress();
    p->set_execution_id(j->req.execution_id());
    p->mutable_mcp_progress()->set_progress(progress);
    p->mutable_mcp_progress()->set_total(total);
    // A proto string must be UTF-8: a cut may fall inside a character.
    p->mutable_mcp_progress()->set_message(ToDisplayText(message.substr(0, 1024)));
    channel_->Queue(std::move(env));
  };
  cb.on_ready = [this] {
    // A server started again (after a crash, or an HTTP session the server
    // ended) may list other things: the coordinator hears of it as of a
    // change. (The first start's listing is McpListTools' result.)
    if (listed_) SendListing();
    listed_ = true;
  };
  cb.on_elicitation = [this](const std::string& id, const std::string& message, const std::string& schema) {
    // Asked during a call this worker holds (the oldest, if several run);
    // with none, or past the bounds, nobody is asked.
    Job* j = OldestCall();
    if (j == nullptr || schema.size() > kSchemaBytes || questions_.size() >= 4) {
      return server_->client().AnswerRequest(id, R"({"action":"decline"})");
    }
    std::string question = std::to_string(++asked_);
    questions_[question] = {id, j->req.execution_id()};
    v1::Envelope env;
    v1::McpQuestion* q = env.mutable_mcp_question();
    q->set_execution_id(j->req.execution_id());
    q->set_question_id(question);
    q->set_message(ToDisplayText(message.substr(0, 2048)));
    q->set_requested_schema_json(schema);
    channel_->Queue(std::move(env));
  };
  cb.on_listing_changed = [this] { SendListing(); };
  cb.on_result = [this](uint64_t call, const McpCallResult& r) {
    Job* j = JobOfCall(call);
    if (j == nullptr) return;
    v1::ToolResult result;
    std::string text = r.text;
    if (!r.error.empty()) text += (text.empty() ? "" : "\n") + r.error;
    json out = {{"server", spec_->name}, {"is_error", r.is_error}};
    // A prompt's text is the message it makes: whole, in the result.
    if (j->prompt) out["text"] = text.substr(0, kPromptBytes);
    if (!r.structured_json.empty() && r.structured_json.size() <= kStructuredBytes) {
      out["structured_content"] = ParseJson(r.structured_json);
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
    FinishText(j->req.execution_id(), text, std::move(result));
  };
  StatusOr<std::unique_ptr<McpServerRun>> run = McpServerRun::Start(*spec_, o_.workspace, std::move(cb));
  Status started = run.status();
  if (run.ok()) server_ = std::move(*run);
  if (!started.ok()) {
    server_.reset();
    given_up_ = "MCP server " + spec_->name + " cannot start: " + started.message();
    FinishAll(v1::TOOL_STATUS_ERROR, Status::Unavailable(given_up_));
    return false;
  }
  return true;
}

void Worker::Advance() {
  if (!server_ || server_->dead() || !server_->client().ready()) return;
  std::vector<std::string> ids;  // a listing's job ends here, out of the map
  for (const auto& [id, j] : jobs_) ids.push_back(id);
  for (const std::string& id : ids) {
    auto j = jobs_.find(id);
    if (j != jobs_.end()) Advance(j->second);
  }
}

void Worker::Advance(Job& j) {
  if (j.list) {
    const McpClient& c = server_->client();
    std::string names;
    for (const McpTool& t : c.tools()) names += (names.empty() ? "" : ", ") + t.name;
    v1::ToolResult result;
    result.set_status(v1::TOOL_STATUS_OK);
    result.set_exit_reason(v1::EXIT_REASON_NORMAL);
    result.set_output_json(Dump(ListingJson(spec_->name, c)));
    std::string text = "MCP server " + spec_->name + " (protocol " + c.protocol_version() +
                       "): " + std::to_string(c.tools().size()) + " tools" + (names.empty() ? "" : ": " + names);
    if (c.offers_resources()) {
      text += "; " + std::to_string(c.resources().size()) + " resources, " +
              std::to_string(c.resource_templates().size()) + " templates";
    }
    return FinishText(j.req.execution_id(), text + "\n", std::move(result));
  }
  if (!j.call_id && j.prompt) {
    j.call_id = server_->client().GetPrompt(*j.prompt, j.prompt_arguments);
    server_->Service();
  } else if (!j.call_id && j.read) {
    j.call_id = server_->client().ReadResource(*j.read);
    server_->Service();
  } else if (!j.call_id) {
    std::string tool = j.req.tool().substr(std::string(kMcpToolPrefix).size() + spec_->name.size() + 2);
    j.call_id = server_->client().CallTool(tool, j.req.arguments_json());
    server_->Service();
  }
}

void Worker::Service() {
  if (!server_) return;
  server_->Service();
  if (server_->dead()) return OnServerDeath();
  AskForToken();
  Advance();
  if (server_ && server_->dead()) OnServerDeath();
}

void Worker::AskForToken() {
  // Asked during a job (the question is the job's execution's); with none,
  // the refused messages wait for the next job's token.
  if (!server_->WantsAuthorization() || jobs_.empty() || !token_question_.empty()) return;
  token_question_ = "token-" + std::to_string(++asked_);
  token_job_ = jobs_.begin()->first;
  v1::Envelope env;
  v1::McpQuestion* q = env.mutable_mcp_question();
  q->set_execution_id(token_job_);
  q->set_question_id(token_question_);
  q->set_needs_authorization(true);
  channel_->Queue(std::move(env));
}

void Worker::OnServerDeath() {
  std::string why = server_->death();
  bool login = server_->needs_login();
  server_.reset();
  token_question_.clear();
  if (login) {
    // Not a crash: the next call starts it again, with the token the
    // coordinator has then (the user may have logged in meanwhile).
    FinishAll(v1::TOOL_STATUS_ERROR, Status::PermissionDenied(why));
    return;
  }
  ++deaths_;
  spdlog::warn("{}", why);
  if (deaths_ >= 2) given_up_ = why + " (it died twice; not started again)";
  FinishAll(v1::TOOL_STATUS_CRASHED, Status::Unavailable(why), v1::EXIT_REASON_CRASHED);
  // Started again once, at once: the next call finds it ready.
  if (given_up_.empty() && EnsureServer() && spec_->writable) server_->Pause();
}

void Worker::Finish(const std::string& id, v1::ToolStatus status, const Status& why, int exit_reason) {
  v1::ToolResult r;
  std::string text = FailResult(&r, status, why);
  r.set_exit_reason(static_cast<v1::ExitReason>(exit_reason));
  if (spec_.ok()) r.set_output_json(Dump({{"server", spec_->name}, {"is_error", true}}));
  FinishText(id, text, std::move(r));
}

void Worker::FinishAll(v1::ToolStatus status, const Status& why, int exit_reason) {
  std::vector<std::string> ids;
  for (const auto& [id, j] : jobs_) ids.push_back(id);
  for (const std::string& id : ids) Finish(id, status, why, exit_reason);
}

void Worker::FinishText(std::string id, const std::string& text, v1::ToolResult result) {
  auto job = jobs_.find(id);
  if (job == jobs_.end()) return;
  const v1::ToolRequest& req = job->second.req;
  result.set_execution_id(req.execution_id());
  result.set_duration_us(
      static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - job->second.started).count()));
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
  jobs_.erase(job);
  // A token asked for by the call that ended: the coordinator's answer goes
  // to that call, which is gone. Another job asks again (Service).
  if (token_job_ == id) token_question_.clear();
  // Questions of the call that ended are answered for it: nobody will.
  for (auto q = questions_.begin(); q != questions_.end();) {
    if (q->second.execution_id != id) {
      ++q;
      continue;
    }
    if (server_ && !server_->dead()) server_->client().AnswerRequest(q->second.request_id, R"({"action":"cancel"})");
    q = questions_.erase(q);
  }
  channel_->QueueResult(std::move(result));
  channel_->Flush();
  // A writable server may change the workspace only while one of its calls
  // runs (the coordinator tracks and checks each call's changes): between
  // calls its processes are stopped. (What is queued for it, a
  // cancellation, it reads when its next call resumes it.)
  if (spec_.ok() && spec_->writable && server_ && jobs_.empty()) server_->Pause();
}

}  // namespace

int RunMcpWorker(const WorkerOptions& options, Clock* clock) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  StatusOr<McpServerDescription> spec = McpServerFromEnvironment();
  if (!spec.ok()) spdlog::error("{}", spec.status().message());
  Worker worker(options, clock, std::move(spec));
  WorkerHello hello{v1::WORKER_KIND_MCP, {kMcpListToolsTool, kReadMcpResourceTool, kMcpGetPromptTool}};
  return RunWorkerLoop(options, hello, clock, &worker);
}

}  // namespace odin
