// odin acp: Odin as an Agent Client Protocol agent on stdio (one JSON-RPC
// message per line), for editors: Zed, JetBrains IDEs, Neovim, Emacs
// (docs/acp.md). Each ACP session is a HostedSession (session/), the same
// agent `odin -p` and the daemon run: the gates, the sandbox, validation
// and the ledger of its workspace. What the editor hears is made from the
// session's events (cli/acp_updates.h); its approvals become
// session/request_permission, answered by the editor's user.
//
// Odin never runs a command in the client's terminal, and never reads or
// writes files through the client around its gates: its workers do the
// work, and the editor sees the result (docs/acp.md says what it uses of
// the client's file system, and why).
//
// Threads: this one reads stdin and answers; each session has its own loop
// (HostedSession's) and an event reader here, which sends its updates.
// stdout is written by StdoutLines' thread, so a client that stops reading
// stalls nothing: past its bound the sessions are cancelled and odin acp
// ends.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <deque>
#include <future>
#include <cerrno>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "base/version.h"
#include "cli/acp_updates.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "cli/stdio_lines.h"
#include "ledger/ledger.h"
#include "planner/conversation_log.h"
#include "session/hosted_session.h"
#include "tools/tool_catalog.h"
#include "workspace/protected_paths.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr int kAcpProtocolVersion = 1;
constexpr size_t kMaxQueuedOutput = 64u << 20;
constexpr size_t kMaxLineBytes = 64u << 20;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Text(const json& o, const char* key) {
  auto it = o.is_object() ? o.find(key) : o.end();
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// One ACP session: an agent session of Odin's and the thread that turns its
// events into what the editor hears.
struct AcpSession {
  std::string id;
  std::string root;
  Mode mode = Mode::kEdit;  // of the next prompt
  std::unique_ptr<HostedSession> hosted;
  std::thread reader;
  std::atomic<bool> stop{false};
  // The hook's own (the session's thread): the file each running call names.
  std::map<std::string, std::string> call_files;
};

// The requests of ours a session's thread waits on, by id: the stdin
// thread hands their answers over at once (StdinLines' route).
class Awaited {
 public:
  // Null at once when the client is gone.
  std::future<json> Expect(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    std::promise<json>& p = waiting_[id];
    std::future<json> f = p.get_future();
    if (closed_) {
      p.set_value(json());
      waiting_.erase(id);
    }
    return f;
  }
  // The client is gone: whoever waits stops now.
  void CloseAll() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    for (auto& [id, p] : waiting_) p.set_value(json());
    waiting_.clear();
  }
  void Forget(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.erase(id);
  }
  // True if line answers a request someone waits on (and hands it over).
  bool Deliver(const std::string& line) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_.empty()) return false;
    }
    StatusOr<json> m = ParseJsonOrError(line, "message");
    if (!m.ok() || !m->is_object() || m->contains("method") || !m->contains("id") || !(*m)["id"].is_number_integer()) {
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiting_.find((*m)["id"].get<int64_t>());
    if (it == waiting_.end()) return false;
    it->second.set_value(std::move(*m));
    waiting_.erase(it);
    return true;
  }

 private:
  std::mutex mu_;
  std::map<int64_t, std::promise<json>> waiting_;
  bool closed_ = false;
};

class AcpServer {
 public:
  AcpServer(AgentSessionFlags base, Mode mode, StdoutLines* out) : base_(std::move(base)), mode_(mode), out_(out) {}

  ~AcpServer() { StopAll(); }

  Awaited& awaited() { return awaited_; }

  void HandleLine(const std::string& line) {
    StatusOr<json> parsed = ParseJsonOrError(line, "message");
    if (!parsed.ok() || !parsed->is_object()) {
      std::string why = parsed.ok() ? "not a JSON-RPC message object" : parsed.status().message();
      return Error(nullptr, parsed.ok() ? -32600 : -32700, why);
    }
    json m = std::move(*parsed);
    std::string method = Text(m, "method");
    bool has_id = m.contains("id") && (m["id"].is_number_integer() || m["id"].is_string());
    if (method.empty()) {
      if (has_id) return Answered(m);  // the client's answer to a permission request
      return;
    }
    json params = m.contains("params") && m["params"].is_object() ? m["params"] : json::object();
    if (!has_id) return Notified(method, params);
    const json id = m["id"];
    if (method == "initialize") return Initialize(id, params);
    if (method == "authenticate") return Reply(id, json::object());
    if (method == "session/new") return NewSession(id, params, false);
    if (method == "session/load") return NewSession(id, params, true);
    if (method == "session/prompt") return Prompt(id, params);
    if (method == "session/set_mode") return SetMode(id, params);
    Error(id, -32601, "method not found: " + method);
  }

  // Cancels every session's work (the client stopped reading).
  void CancelAll() {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    for (auto& [id, s] : sessions_) s->hosted->Cancel();
  }

  void StopAll() {
    std::map<std::string, std::unique_ptr<AcpSession>> sessions;
    {
      std::lock_guard<std::mutex> lock(sessions_mu_);
      sessions.swap(sessions_);
    }
    for (auto& [id, s] : sessions) {
      s->hosted->Cancel();
      s->stop = true;
      if (s->reader.joinable()) s->reader.join();
      s->hosted.reset();  // stops its workers
    }
  }

 private:
  struct Asked {
    std::string session_id;
    std::string execution_id;
  };

  void Send(const json& message) { out_->Write(Dump(message)); }
  void Reply(const json& id, const json& result) { Send({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}); }
  void Error(const json& id, int code, const std::string& message) {
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }
  void Update(const std::string& session_id, const json& update) {
    Send({{"jsonrpc", "2.0"},
          {"method", "session/update"},
          {"params", {{"sessionId", session_id}, {"update", update}}}});
  }
  int64_t NextRequestId() {
    std::lock_guard<std::mutex> lock(mu_);
    return ++next_request_;
  }

  AcpSession* Find(const std::string& id) {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second.get();
  }

  void Initialize(const json& id, const json& params) {
    const json* caps = params.contains("clientCapabilities") ? &params["clientCapabilities"] : nullptr;
    if (caps != nullptr && caps->is_object() && caps->contains("fs") && (*caps)["fs"].is_object()) {
      const json& fs = (*caps)["fs"];
      client_reads_ = fs.contains("readTextFile") && fs["readTextFile"] == true;
      client_writes_ = fs.contains("writeTextFile") && fs["writeTextFile"] == true;
    }
    int asked = params.contains("protocolVersion") && params["protocolVersion"].is_number_integer()
                    ? params["protocolVersion"].get<int>()
                    : kAcpProtocolVersion;
    Reply(id, {{"protocolVersion", std::max(0, std::min(asked, kAcpProtocolVersion))},
               {"agentCapabilities",
                {{"loadSession", true},
                 {"promptCapabilities", {{"image", false}, {"audio", false}, {"embeddedContext", true}}},
                 {"mcpCapabilities", {{"http", false}, {"sse", false}}}}},
               {"agentInfo", {{"name", "odin"}, {"title", "Odin"}, {"version", ODIN_VERSION}}},
               {"authMethods", json::array()}});
  }

  void NewSession(const json& id, const json& params, bool load) {
    std::string cwd = Text(params, "cwd");
    if (cwd.empty() || cwd[0] != '/') return Error(id, -32602, "cwd must be an absolute path");
    StatusOr<Workspace> ws = FindWorkspace(cwd);
    if (!ws.ok()) return Error(id, -32602, ws.status().message());
    if (std::string refused = TooBroadRefusal(*ws, /*named=*/false); !refused.empty()) {
      return Error(id, -32602, refused);
    }
    std::string resume = load ? Text(params, "sessionId") : "";
    if (load && resume.empty()) return Error(id, -32602, "sessionId is missing");
    if (load && Find(resume) != nullptr) return Error(id, -32602, "session '" + resume + "' is open already");
    if (params.contains("mcpServers") && params["mcpServers"].is_array() && !params["mcpServers"].empty()) {
      std::cerr << "odin acp: the editor's MCP servers are not started: Odin's come from odinconfig.json and "
                   ".mcp.json (odin mcp list)\n";
    }
    AgentSessionFlags flags = base_;
    flags.runtime.dir = ws->root;
    flags.runtime.session_kind = "acp";
    flags.runtime.mode = "edit";  // the workers; each message's mode gates its calls
    flags.runtime.start_mcp = true;
    flags.resume = resume;
    auto s = std::make_unique<AcpSession>();
    AcpSession* raw = s.get();
    raw->root = ws->root;
    raw->mode = mode_;
    StatusOr<std::unique_ptr<HostedSession>> started = HostedSession::Start(
        flags, Mode::kEdit, "prompt", [this, raw](const v1::SessionEvent& e) { BeforeEvent(raw, e); });
    if (!started.ok()) return Error(id, load ? -32002 : -32603, started.status().message());
    raw->hosted = std::move(*started);
    raw->id = raw->hosted->id();
    if (load) Replay(*raw, ws->ledger_path);
    raw->reader = std::thread([this, raw] { ReadEvents(raw); });
    {
      std::lock_guard<std::mutex> lock(sessions_mu_);
      sessions_[raw->id] = std::move(s);
    }
    json result = {{"modes", ParseJson(AcpModes(raw->mode))}};
    if (!load) result["sessionId"] = raw->id;
    Reply(id, result);
  }

  // session/load: the conversation so far, as the model last saw it, sent
  // as updates before the answer.
  void Replay(const AcpSession& s, const std::string& ledger_path) {
    StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(ledger_path);
    if (!ledger.ok()) return;
    StatusOr<std::vector<ConversationEntry>> entries = (*ledger)->ListConversation(s.id, "main");
    if (!entries.ok()) return;
    StatusOr<ReplayedConversation> replayed = ReplayConversation(*entries);
    if (!replayed.ok()) return;
    for (const std::string& u : AcpReplayUpdates(replayed->history)) Update(s.id, ParseJson(u));
  }

  void Prompt(const json& id, const json& params) {
    AcpSession* s = Find(Text(params, "sessionId"));
    if (s == nullptr) return Error(id, -32602, "no session '" + Text(params, "sessionId") + "'");
    StatusOr<std::string> text = AcpPromptText(params.contains("prompt") ? params["prompt"] : json());
    if (!text.ok()) return Error(id, -32602, text.status().message());
    StatusOr<std::pair<std::string, uint64_t>> sent = s->hosted->Send(*text, ModeName(s->mode));
    if (!sent.ok()) return Error(id, -32603, sent.status().message());
    std::lock_guard<std::mutex> lock(mu_);
    auto done = finished_.find(sent->first);
    if (done != finished_.end()) {
      Reply(id, done->second);
      finished_.erase(done);
    } else {
      prompts_[sent->first] = id;
    }
  }

  void SetMode(const json& id, const json& params) {
    AcpSession* s = Find(Text(params, "sessionId"));
    if (s == nullptr) return Error(id, -32602, "no session '" + Text(params, "sessionId") + "'");
    Mode mode;
    if (!ParseMode(Text(params, "modeId"), &mode)) {
      return Error(id, -32602, "modeId '" + Text(params, "modeId") + "' must be ask, plan or edit");
    }
    s->mode = mode;
    Reply(id, json::object());
    Update(s->id, {{"sessionUpdate", "current_mode_update"}, {"currentModeId", ModeName(mode)}});
  }

  void Notified(const std::string& method, const json& params) {
    if (method == "session/cancel") {
      if (AcpSession* s = Find(Text(params, "sessionId"))) s->hosted->Cancel();
    }
    // Anything else (initialized, $/cancel_request, extensions) needs nothing.
  }

  // The client answered a permission request.
  void Answered(const json& m) {
    if (!m["id"].is_number_integer()) return;
    Asked o;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = asked_.find(m["id"].get<int64_t>());
      if (it == asked_.end()) return;
      o = it->second;
      asked_.erase(it);
    }
    std::string answer = "deny";  // an error, a cancelled outcome, anything else
    if (m.contains("result") && m["result"].is_object() && m["result"].contains("outcome")) {
      const json& outcome = m["result"]["outcome"];
      if (Text(outcome, "outcome") == "selected") answer = AcpApprovalAnswer(Text(outcome, "optionId"));
    }
    if (AcpSession* s = Find(o.session_id)) s->hosted->Approve(o.execution_id, answer);
  }

  // The reader of one session's events (its own thread).
  void ReadEvents(AcpSession* s) {
    AcpUpdates updates(s->root);
    uint64_t seq = 0;
    while (!s->stop) {
      bool ended = false;
      std::vector<v1::SessionEvent> events = s->hosted->EventsAfter(seq, milliseconds(300), &ended);
      for (const v1::SessionEvent& e : events) {
        seq = e.seq();
        for (const std::string& u : updates.Of(e)) Update(s->id, ParseJson(u));
        if (e.has_approval_requested()) AskPermission(*s, e.approval_requested());
        if (e.has_message_finished()) Finished(e.message_id(), e.message_finished());
      }
      if (ended) return;
    }
  }

  void AskPermission(const AcpSession& s, const v1::ApprovalRequested& a) {
    int64_t request = NextRequestId();
    {
      std::lock_guard<std::mutex> lock(mu_);
      asked_[request] = {s.id, a.execution_id()};
    }
    Send({{"jsonrpc", "2.0"},
          {"id", request},
          {"method", "session/request_permission"},
          {"params", ParseJson(AcpPermissionParams(s.id, a))}});
  }

  void Finished(const std::string& message_id, const v1::MessageFinished& f) {
    json result = {{"stopReason", AcpStopReason(f.status())}};
    json outcome = ParseJson(f.result_json());
    json odin = {{"status", f.status()}, {"exitCode", f.exit_code()}};
    if (outcome.is_object() && outcome.contains("usage") && outcome["usage"].is_object()) {
      const json& u = outcome["usage"];
      int64_t in = u.value("input_tokens", int64_t{0}), out = u.value("output_tokens", int64_t{0});
      result["usage"] = {{"inputTokens", in}, {"outputTokens", out}, {"totalTokens", in + out}};
      if (outcome.contains("changed_files")) odin["changedFiles"] = outcome["changed_files"];
    }
    result["_meta"] = {{"odin", odin}};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prompts_.find(message_id);
    if (it == prompts_.end()) {
      finished_[message_id] = result;  // Prompt has not registered it yet
      return;
    }
    Reply(it->second, result);
    prompts_.erase(it);
  }

  // On the session's thread, before anyone hears of e, while the session
  // waits: the client's file system, where it offers it, after the
  // coordinator's work is done.
  void BeforeEvent(AcpSession* s, const v1::SessionEvent& e) {
    if (e.has_tool_call_started()) {
      json args = ParseJson(e.tool_call_started().arguments_json());
      std::string file = args.is_object() ? Text(args, "file_path") : "";
      if (!file.empty()) s->call_files[e.tool_call_started().execution_id()] = file;
      return;
    }
    if (!e.has_tool_call_finished()) return;
    const v1::ToolCallFinished& f = e.tool_call_finished();
    auto named = s->call_files.find(f.execution_id());
    std::string file = named == s->call_files.end() ? "" : named->second;
    if (named != s->call_files.end()) s->call_files.erase(named);
    if (f.status() != "ok") return;
    ToolHandler handler = HandlerOf(f.tool());
    if (!f.changed_paths().empty()) file = f.changed_paths(0);
    std::string rel = RelativeInside(s->root, file);
    if (rel.empty() || IsProtectedPath(s->root + "/" + rel, s->root)) return;
    if (client_writes_ && (handler == ToolHandler::kFileWrite || handler == ToolHandler::kEditSymbol)) {
      WriteThrough(*s, rel, f.sha256_after());
    } else if (client_reads_ && handler == ToolHandler::kFileRead) {
      CompareBuffer(*s, rel);
    }
  }

  // path relative to root if it is inside it, else "".
  static std::string RelativeInside(const std::string& root, const std::string& path) {
    if (path.empty()) return "";
    std::string abs = std::filesystem::path(path[0] == '/' ? path : root + "/" + path).lexically_normal().string();
    if (abs.rfind(root + "/", 0) != 0 || abs.back() == '/') return "";
    return abs.substr(root.size() + 1);
  }

  // Asks the client, and waits for its answer up to a deadline; null when
  // none came (or an error did).
  json AskClient(const std::string& method, const json& params, std::chrono::seconds deadline) {
    int64_t request = NextRequestId();
    std::future<json> answer = awaited_.Expect(request);
    Send({{"jsonrpc", "2.0"}, {"id", request}, {"method", method}, {"params", params}});
    if (answer.wait_for(deadline) != std::future_status::ready) {
      awaited_.Forget(request);
      return json();
    }
    json m = answer.get();
    return m.is_object() && m.contains("result") ? m["result"] : json();
  }

  // A file the coordinator wrote, validated and recorded, handed to the
  // editor as that content, so its buffer and undo history have it; then
  // checked on disk. Only when the file is still what was validated.
  void WriteThrough(const AcpSession& s, const std::string& rel, const std::string& sha256) {
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(s.root);
    if (!files.ok() || sha256.empty()) return;
    // No link on the way: the editor writes where the path leads.
    StatusOr<std::string> content = files->ReadFile(rel, kMaxEditorFileBytes, WorkspaceFiles::Links::kNone);
    if (!content.ok() || Sha256Hex(*content) != sha256 || !IsValidUtf8(*content)) return;
    json answer =
        AskClient("fs/write_text_file", {{"sessionId", s.id}, {"path", s.root + "/" + rel}, {"content", *content}},
                  std::chrono::seconds(10));
    StatusOr<std::string> after = files->ReadFile(rel, kMaxEditorFileBytes);
    if (answer.is_null() || !after.ok() || Sha256Hex(*after) != sha256) {
      // What the editor did is a change of the user's: the coordinator
      // records it as an external mutation at the next call's boundary.
      Update(s.id, {{"sessionUpdate", "agent_message_chunk"},
                    {"content",
                     {{"type", "text"},
                      {"text", "\n[odin] the editor's write of " + rel +
                                   " left it other than what Odin validated; Odin records it as a change of "
                                   "yours\n"}}}});
    }
  }

  // A file the model read, compared with the editor's buffer of it: unsaved
  // changes there are something the model must know it did not see.
  void CompareBuffer(AcpSession& s, const std::string& rel) {
    // The file on disk first, with no link on the way: the editor is asked
    // only of what Odin itself may read there.
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(s.root);
    if (!files.ok()) return;
    StatusOr<std::string> disk = files->ReadFile(rel, kMaxEditorFileBytes, WorkspaceFiles::Links::kNone);
    if (!disk.ok()) return;
    json answer =
        AskClient("fs/read_text_file", {{"sessionId", s.id}, {"path", s.root + "/" + rel}}, std::chrono::seconds(5));
    if (!answer.is_object() || !answer.contains("content") || !answer["content"].is_string()) return;
    if (*disk == answer["content"].get<std::string>()) return;
    s.hosted->AddNote("The user's editor holds unsaved changes to " + rel +
                      " that are not on disk: what Read returned is the file as saved. If those changes matter, "
                      "ask the user to save the file.");
  }

  static constexpr uint64_t kMaxEditorFileBytes = 10u << 20;

  AgentSessionFlags base_;
  Mode mode_;  // a new session's first
  StdoutLines* out_;
  Awaited awaited_;
  std::atomic<bool> client_reads_{false};   // the client offers fs/read_text_file
  std::atomic<bool> client_writes_{false};  // ... and fs/write_text_file

  std::mutex sessions_mu_;
  std::map<std::string, std::unique_ptr<AcpSession>> sessions_;

  std::mutex mu_;                         // guards what follows
  std::map<std::string, json> prompts_;   // message id -> the session/prompt request's id
  std::map<std::string, json> finished_;  // message id -> its answer, before Prompt registered it
  std::map<int64_t, Asked> asked_;        // our permission requests' ids -> what they ask about
  int64_t next_request_ = 0;
};

}  // namespace

int RunAcp(const GlobalFlags& g, const AgentFlags& f) {
  auto fail = [](const std::string& message) {
    std::cerr << "odin acp: " << message << "\n";
    return kError;
  };
  Mode mode;
  if (!ParseMode(f.mode, &mode)) return fail("unknown mode '" + f.mode + "' (ask, plan or edit)");
  AgentSessionFlags base = SessionFlags(g, f, "acp", "edit", "prompt");
  StdoutLines out(STDOUT_FILENO, kMaxQueuedOutput);
  int code = 0;
  {
    AcpServer server(base, mode, &out);
    StdinLines in(STDIN_FILENO, kMaxLineBytes,
                  [&server](const std::string& line) { return server.awaited().Deliver(line); });
    for (;;) {
      pollfd fds[2] = {{in.wake_fd(), POLLIN, 0}, {out.wake_fd(), POLLIN, 0}};
      if (poll(fds, 2, 1000) < 0 && errno != EINTR) {
        code = fail(std::string("poll: ") + strerror(errno));
        break;
      }
      if (std::string why = out.failed(); !why.empty()) {
        server.awaited().CloseAll();
        server.CancelAll();
        code = fail(why + ": its sessions are cancelled");
        break;
      }
      std::string ended;
      for (const std::string& line : in.Take(&ended)) server.HandleLine(line);
      if (!ended.empty()) server.awaited().CloseAll();
      if (ended == "eof") break;  // the client is gone: what runs is cancelled
      if (!ended.empty()) {
        code = fail(ended);
        break;
      }
    }
    server.StopAll();
    if (std::string why = out.failed(); code == 0 && !why.empty()) code = fail(why + ": its sessions were cancelled");
  }
  return code;
}

}  // namespace odin
