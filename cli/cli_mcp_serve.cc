// odin mcp serve: Odin as an MCP server over stdio (one JSON-RPC message per
// line), for Claude Code, Codex or any MCP client. It offers Odin's tools
// (Read, LS, Glob, Grep, WriteFile, EditTool, MultiEditTool, ExecuteCommand,
// lsp_check, memory_query) and runs every call through the coordinator as an
// agent's call: the gates (mode, read-before-edit, blocked state, command
// rules, approvals), the sandbox, validation and the ledger of the served
// workspace. A call that needs the user's approval is asked of the client
// (elicitation/create, a form with one choice: once, for the session, or
// deny) when the client declares elicitation and --approval is ask (the
// default); otherwise --approval (or deny) answers it. A call's answer is the record the agent's own model
// would read (status, output, the validation verdict), and a call that
// failed, was refused or left a file with errors is an isError result.
//
// stdout carries only the protocol, written by a thread of its own
// (cli/stdio_lines.h): a client that stops reading stalls nothing, and past
// 64 MiB waiting the calls are cancelled and the server ends. Notices go to
// stderr. The session ends when stdin does. The JSON-RPC edges (ids,
// batches per revision) are answered as docs/hooks-and-mcp.md's table says.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "workspace/workspace.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/version.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "cli/stdio_lines.h"
#include "session/runtime.h"
#include "odin/v1/worker.pb.h"
#include "planner/tool_calls.h"
#include "planner/tool_specs.h"
#include "mcp/mcp_client.h"
#include "tools/tool_result.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// o[key] if it is a string, else "": a client's types are not trusted.
std::string Text(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// What every tool's structuredContent is: the ground-truth record
// (planner/tool_calls.h's GroundTruthRecord).
const json& RecordSchema() {
  static const json schema = {
      {"type", "object"},
      {"properties",
       {{"execution_id", {{"type", "string"}}},
        {"tool", {{"type", "string"}}},
        {"status",
         {{"type", "string"}, {"enum", {"ok", "error", "rejected", "timed_out", "crashed", "cancelled", "unknown"}}}},
        {"authority", {{"type", "string"}}},
        {"summary", {{"type", "string"}}},
        {"exit_code", {{"type", "integer"}}},
        {"output", {{"type", "string"}}},
        {"diff", {{"type", "string"}}},
        {"validation", {{"type", "object"}}},
        {"validations", {{"type", "array"}}},
        {"changes", {{"type", "array"}}}}},
      {"required", {"execution_id", "tool", "status", "authority", "summary"}}};
  return schema;
}

// Whether a request id is one MCP takes: a string or an integer.
bool ValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

// What may wait for a client that reads slowly before the session is
// cancelled.
constexpr size_t kMaxQueuedOutput = 64u << 20;

const std::set<std::string>& ServedTools() {
  static const std::set<std::string> tools = {"Read",      "LS",          "Glob",          "Grep",
                                              "WriteFile", "EditTool",    "MultiEditTool", "ExecuteCommand",
                                              "lsp_check", "memory_query"};
  return tools;
}

class Server {
 public:
  // ask: approvals are asked of a client that can be asked (else denied).
  Server(Runtime* rt, Mode mode, bool ask, StdoutLines* out)
      : rt_(rt), coord_(rt->coordinator()), mode_(mode), ask_(ask), workspace_(rt->workspace().root), out_(out) {}

  // Handles one line from the client.
  void HandleLine(const std::string& line) {
    // Size and depth are judged on the text, before anything is copied,
    // dumped or compared (security review 3, finding 8: 300,000 levels of
    // arguments crashed the server).
    StatusOr<json> parsed = ParseJsonOrError(line, "message");
    if (!parsed.ok()) return Error(nullptr, -32700, "parse error: " + parsed.status().message());
    if (parsed->is_array()) return HandleBatch(std::move(*parsed));
    if (!parsed->is_object()) return Error(nullptr, -32600, "invalid request: not a JSON-RPC message object");
    HandleMessage(std::move(*parsed));
  }

  bool idle() const { return running_.empty(); }
  void CancelAll() {
    // Copied first: a call may end inside Cancel, and its end erases its entry.
    std::vector<std::string> executions;
    for (const auto& [key, execution] : running_) executions.push_back(execution);
    for (const std::string& execution : executions) coord_.Cancel(execution);
  }

 private:
  // A batch (2025-03-26 only): its answers, sent as one array once every
  // request of it is answered.
  struct Batch {
    size_t waiting = 0;
    json answers = json::array();
  };

  void HandleBatch(json batch) {
    if (version_ != "2025-03-26") {
      return Error(nullptr, -32600,
                   version_.empty() ? "invalid request: a batch before initialize"
                                    : "invalid request: batches are not part of MCP " + version_);
    }
    if (batch.empty()) return Error(nullptr, -32600, "invalid request: an empty batch");
    int number = ++batches_made_;
    Batch& b = batches_[number];
    // What gets an answer is counted before any is handled (one may be
    // answered at once), by the rule HandleMessage answers by.
    for (const json& m : batch) {
      if (GetsAnAnswer(m)) ++b.waiting;
    }
    if (b.waiting == 0) {
      batches_.erase(number);
      for (json& m : batch) HandleMessage(std::move(m));
      return;
    }
    for (json& m : batch) {
      current_batch_ = number;
      if (!m.is_object()) {
        Error(nullptr, -32600, "invalid request: not a JSON-RPC message object");
      } else if (m.contains("id") && Text(m, "method") == "initialize") {
        Error(ValidId(m["id"]) || m["id"].is_number() ? m["id"] : json(), -32600,
              "invalid request: initialize may not be batched");
      } else {
        HandleMessage(std::move(m));
      }
    }
    current_batch_ = 0;
  }

  // Whether a message gets an answer: a request (a method and an id) does,
  // and so does anything malformed; a notification (a method, no id) and a
  // response (an id, no method) do not. HandleMessage answers by this.
  static bool GetsAnAnswer(const json& m) {
    if (!m.is_object()) return true;
    bool has_method = m.contains("method"), has_id = m.contains("id");
    if (has_method && !m["method"].is_string()) return true;
    if (!has_method) return !has_id;
    return has_id;
  }

  void HandleMessage(json m) {
    if (m.contains("method") && !m["method"].is_string()) {
      return Error(m.contains("id") && (ValidId(m["id"]) || m["id"].is_number()) ? m["id"] : json(), -32600,
                   "invalid request: the method must be a string");
    }
    if (!m.contains("method") && !m.contains("id")) {
      return Error(nullptr, -32600, "invalid request: neither a request nor a response");
    }
    std::string method = Text(m, "method");
    json params = m.contains("params") && m["params"].is_object() ? m["params"] : json::object();
    if (!method.empty() && m.contains("id") && !ValidId(m["id"])) {
      // A number that is not an integer is still an id to answer under.
      json id = m["id"].is_number() ? m["id"] : json();
      return Error(id, -32600, "invalid request: an id must be a string or an integer");
    }
    bool request = m.contains("id");
    if (request && !m.contains("method")) return Answered(m);
    if (!request) {
      if (method == "notifications/cancelled" && params.contains("requestId")) {
        // The call stops; its request gets no answer (the client gave up on it).
        std::string key = Dump(params["requestId"]);
        auto it = running_.find(key);
        if (it != running_.end()) {
          std::string execution = it->second;
          cancelled_.insert(key);
          coord_.Cancel(execution);
        }
      }
      return;  // notifications/initialized, answers to nothing we asked
    }
    const json id = m["id"];
    if (running_.count(Dump(id)) != 0) {
      return Error(id, -32600, "invalid request: request " + Dump(id) + " is in flight already");
    }
    if (method == "initialize") {
      // The revision holds for the session: the client has the tools as
      // that one lists them.
      if (!version_.empty()) return Error(id, -32600, "invalid request: the session is initialized already");
      std::string asked = Text(params, "protocolVersion");
      std::string version = kMcpProtocolVersions[0];
      for (const char* v : kMcpProtocolVersions) {
        if (asked == v) version = v;
      }
      version_ = version;
      // A client that takes a form (elicitation: {} or {"form": {}}) is asked
      // for approvals; only from now on, so never before it could answer.
      const json caps = params.value("capabilities", json::object());
      const json elicitation = caps.is_object() ? caps.value("elicitation", json()) : json();
      if (ask_ && elicitation.is_object() && (elicitation.empty() || elicitation.contains("form"))) {
        coord_.on_approval_request = [this](const ApprovalRequest& r) { AskClient(r); };
      }
      return Reply(id, {{"protocolVersion", version},
                        {"capabilities", {{"tools", {{"listChanged", false}}}}},
                        {"serverInfo", {{"name", "odin"}, {"version", ODIN_VERSION}}},
                        {"instructions",
                         std::string("Odin's verified tools on ") + rt_->workspace().root + " in " + ModeName(mode_) +
                             " mode: Read a file before you edit it; each write is validated and the result says "
                             "so; every call is recorded in Odin's ledger."}});
    }
    if (method == "ping") return Reply(id, json::object());
    if (method == "tools/list") return Reply(id, {{"tools", Tools()}});
    if (method == "tools/call") return Call(id, params);
    Error(id, -32601, "method not found: " + method);
  }

  // An approval asked of the client (elicitation/create).
  void AskClient(const ApprovalRequest& r) {
    std::string id = "odin-approval-" + std::to_string(++asked_);
    asked_for_[Dump(id)] = r.execution_id;
    asking_[r.execution_id] = id;
    std::string message = "Odin asks to run " + r.command + " (" + r.reason + ")";
    json schema = {{"type", "object"},
                   {"properties",
                    {{"decision",
                      {{"type", "string"},
                       {"title", "Allow it?"},
                       {"enum", {"once", "session", "deny"}},
                       {"enumNames", {"Allow once", "Allow for this session", "Deny"}}}}}},
                   {"required", {"decision"}}};
    Send({{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "elicitation/create"},
          {"params", {{"message", message}, {"requestedSchema", schema}}}});
  }

  // An answer to a request of ours: an approval's (anything but an
  // accepted "once" or "session" denies); any other is dropped.
  void Answered(const json& m) {
    auto it = asked_for_.find(Dump(m["id"]));
    if (it == asked_for_.end()) return;
    std::string execution = it->second;
    asked_for_.erase(it);
    asking_.erase(execution);
    ApprovalAnswer answer = ApprovalAnswer::kDeny;
    const json result = m.value("result", json());
    if (result.is_object() && Text(result, "action") == "accept" && result.contains("content") &&
        result["content"].is_object()) {
      std::string decision = Text(result["content"], "decision");
      if (decision == "once") answer = ApprovalAnswer::kOnce;
      if (decision == "session") answer = ApprovalAnswer::kSession;
    }
    coord_.AnswerApproval(execution, answer);
  }

  // A call that ended while its approval was asked: the client's form is
  // withdrawn.
  void Withdraw(const std::string& execution) {
    auto it = asking_.find(execution);
    if (it == asking_.end()) return;
    asked_for_.erase(Dump(it->second));
    Send({{"jsonrpc", "2.0"},
          {"method", "notifications/cancelled"},
          {"params", {{"requestId", it->second}, {"reason", "the call ended"}}}});
    asking_.erase(it);
  }

  json Tools() const {
    json out = json::array();
    bool read_only_mode = mode_ != Mode::kEdit;
    for (const ToolSpec& spec : ToolSpecsForMode(mode_, /*subagent=*/true)) {
      if (ServedTools().count(spec.name) == 0) continue;
      const ToolInfo* info = FindTool(spec.name);
      bool reads = info != nullptr && info->tool_class == ToolClass::kRead;
      // In ask and plan the sandbox keeps commands from changing the
      // workspace: they read, as the mode says.
      bool read_only = reads || read_only_mode;
      // A write replaces what was there, and a command may remove files:
      // anything that is not read-only may destroy.
      json tool = {{"name", spec.name},
                   {"description", spec.description},
                   {"inputSchema", ParseJson(spec.input_schema_json)},
                   {"annotations",
                    {{"readOnlyHint", read_only},
                     {"destructiveHint", !read_only},
                     {"idempotentHint", reads},
                     {"openWorldHint", false}}}};
      if (StructuredResults()) tool["outputSchema"] = RecordSchema();
      out.push_back(tool);
    }
    return out;
  }

  void Call(const json& id, const json& params) {
    std::string name = Text(params, "name");
    json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (ServedTools().count(name) == 0) return Error(id, -32602, "unknown tool: " + name);
    ToolCall call;
    call.execution_id = NewId("ex");
    call.tool = name;
    call.arguments_json = Dump(args);
    call.agent_id = "mcp";
    call.mode = CallModeOf(mode_);
    call.stream_limit_bytes = rt_->config().artifact_cap_bytes;
    call.output_head_bytes = rt_->config().output_head_bytes;
    call.output_tail_bytes = rt_->config().output_tail_bytes;
    call.timeout = ToolTimeout(rt_->config().tool_timeouts, call.tool, call.arguments_json);
    std::string key = Dump(id);
    CallHandlers handlers;
    std::string execution = call.execution_id;
    // The client asked for progress: a command's output, counted as it
    // comes, at most every quarter second.
    const json* meta = params.contains("_meta") && params["_meta"].is_object() ? &params["_meta"] : nullptr;
    if (meta != nullptr && meta->contains("progressToken") && ValidId((*meta)["progressToken"])) {
      auto progress = std::make_shared<std::pair<uint64_t, SteadyTime>>(0, SteadyTime{});
      handlers.on_progress = [this, token = (*meta)["progressToken"], progress](const v1::ToolProgress& p) {
        if (!p.has_output()) return;
        progress->first += p.output().data().size();
        SteadyTime now = RealClock::Get()->Now();
        if (now - progress->second < milliseconds(250)) return;
        progress->second = now;
        Send({{"jsonrpc", "2.0"},
              {"method", "notifications/progress"},
              {"params",
               {{"progressToken", token},
                {"progress", progress->first},
                {"message", std::to_string(progress->first) + " bytes of output"}}}});
      };
    }
    // Its batch, if any, is the one it came in (never found by its id: a
    // later request may reuse that).
    int batch = current_batch_;
    handlers.on_done = [this, id, key, name, execution, batch](const v1::ToolResult& r, const Status&) {
      running_.erase(key);
      Withdraw(execution);
      if (cancelled_.erase(key) != 0) return Unanswered(batch);
      std::string record = GroundTruthRecord(execution, name, r, workspace_);
      bool blocking = r.has_verdict() && (r.verdict().status() == "errors" || r.verdict().status() == "timed_out");
      for (const v1::ValidationVerdict& v : r.command_verdicts()) {
        blocking = blocking || v.status() == "errors" || v.status() == "timed_out";
      }
      json result = {{"content", {{{"type", "text"}, {"text", record}}}},
                     {"isError", r.status() != v1::TOOL_STATUS_OK || blocking}};
      if (StructuredResults()) result["structuredContent"] = ParseJson(record);
      Deliver(batch, {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
    };
    running_[key] = execution;
    coord_.Submit(std::move(call), std::move(handlers));
  }

  // structuredContent and outputSchema are 2025-06-18's.
  bool StructuredResults() const { return version_ == "2025-06-18"; }

  // Answers made now go with the batch being read, if any.
  void Reply(const json& id, const json& result) {
    Deliver(current_batch_, {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
  }
  void Error(const json& id, int code, const std::string& message) {
    Deliver(current_batch_, {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }
  // An answer goes out alone, or with its batch's once they are all in.
  void Deliver(int batch, json message) {
    auto b = batches_.find(batch);
    if (b == batches_.end()) return Send(message);
    b->second.answers.push_back(std::move(message));
    if (--b->second.waiting > 0) return;
    Send(b->second.answers);
    batches_.erase(b);
  }
  // A batch's request that gets no answer (the client cancelled it).
  void Unanswered(int batch) {
    auto b = batches_.find(batch);
    if (b == batches_.end() || --b->second.waiting > 0) return;
    if (!b->second.answers.empty()) Send(b->second.answers);
    batches_.erase(b);
  }
  void Send(const json& message) { out_->Write(Dump(message)); }

  Runtime* rt_;
  Coordinator& coord_;
  Mode mode_;
  bool ask_;
  std::string workspace_;
  StdoutLines* out_;
  uint64_t asked_ = 0;
  std::map<std::string, std::string> asked_for_;  // our request id (as JSON) -> the execution it asks for
  std::map<std::string, std::string> asking_;     // execution -> our request id
  std::string version_;                           // the revision initialize agreed on
  std::map<std::string, std::string> running_;    // request id (as JSON) -> execution id
  std::set<std::string> cancelled_;               // request ids the client cancelled
  std::map<int, Batch> batches_;
  int batches_made_ = 0;
  int current_batch_ = 0;  // the batch being read, while it is
};

// Reads requests until stdin ends and every call has ended.
int Serve(Coordinator& coord, Server& server, StdoutLines& out) {
  auto fail = [](const std::string& message) {
    std::cerr << "odin mcp serve: " << message << "\n";
    return kError;
  };

  fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
  std::string in;
  bool open = true;
  bool stalled = false;  // the client stopped reading: what runs is cancelled
  while (open || !server.idle()) {
    // The lines' failure is heard once; after it, its fd would only wake
    // the loop for nothing.
    std::vector<PollFd> fds;
    if (!stalled) fds.push_back({out.wake_fd(), true, false});
    if (open) fds.push_back({STDIN_FILENO, true, false});
    Status polled = coord.Poll(seconds(1), &fds);
    if (!polled.ok()) return fail(polled.message());
    if (!stalled && !out.failed().empty()) {
      stalled = true;
      open = false;
      std::cerr << "odin mcp serve: " << out.failed() << ": its calls are cancelled\n";
      server.CancelAll();
    }
    if (!open || !fds.back().readable) continue;
    char buf[64 * 1024];
    bool ended = false;
    for (;;) {
      ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
      if (n > 0) {
        in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ended = n == 0;
      break;
    }
    for (size_t nl; (nl = in.find('\n')) != std::string::npos;) {
      std::string line = in.substr(0, nl);
      in.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") != std::string::npos) server.HandleLine(line);
    }
    if (in.size() > McpClient::kMaxLineBytes) return fail("a message longer than 64 MiB");
    if (ended) {
      // The client is gone (its last lines read first): what still runs,
      // or waits for its answer, is cancelled.
      open = false;
      server.CancelAll();
    }
  }
  // The bound may have been passed by the last lines read.
  if (!stalled && !out.failed().empty()) return fail(out.failed() + ": its calls were cancelled");
  return stalled ? kError : 0;
}

}  // namespace

int RunMcpServe(const GlobalFlags& g, const std::string& mode_name, const std::string& approval) {
  auto fail = [](const std::string& message) {
    std::cerr << "odin mcp serve: " << message << "\n";
    return kError;
  };
  Mode mode;
  if (!ParseMode(mode_name, &mode)) return fail("unknown mode '" + mode_name + "' (ask, plan or edit)");
  if (approval != "ask" && approval != "deny" && approval != "allow") {
    return fail("approval '" + approval + "' must be ask, deny or allow");
  }
  if (StatusOr<Workspace> ws = FindWorkspace(g.dir); ws.ok()) {
    if (std::string refused = TooBroadRefusal(g, *ws); !refused.empty()) {
      std::cerr << "odin mcp serve: " << refused << "\n";
      return kUsageError;
    }
  }
  RuntimeFlags rf;
  rf.dir = g.dir;
  rf.sandbox = g.sandbox;
  rf.network = g.network;
  rf.session_kind = "mcp";
  rf.mode = mode_name;
  rf.validate = true;
  // ask: the coordinator waits for an answer where a client can give one
  // (Server sets on_approval_request then); with none, it denies.
  rf.approval = approval == "ask" ? "prompt" : approval;
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(rf);
  if (!rt.ok()) return fail(rt.status().message());
  Coordinator& coord = (*rt)->coordinator();
  coord.on_worker_ready = [](const v1::Hello& hello) {
    if (!hello.sandbox().namespaces()) {
      std::cerr << "odin mcp serve: warning: running WITHOUT a sandbox (" << hello.sandbox().description() << ")\n";
    }
  };
  StdoutLines out(STDOUT_FILENO, kMaxQueuedOutput);
  Server server(rt->get(), mode, approval == "ask", &out);
  int code = Serve(coord, server, out);
  // The calls still running end while the server that hears of them is whole.
  rt->reset();
  return code;
}

}  // namespace odin