// odin acp: Odin as an Agent Client Protocol agent on stdio (one JSON-RPC
// message per line), for editors: Zed, JetBrains IDEs, Neovim, Emacs
// (docs/acp.md). Each ACP session is a HostedSession (session/), the same
// agent `odin -p` and the daemon run: the gates, the sandbox, validation
// and the ledger of its workspace. What the editor hears is made from the
// session's events (cli/acp_updates.h); its approvals become
// session/request_permission, answered by the editor's user.
//
// Odin never runs a command in the client's terminal, and never has the
// client write a file: the editor would resolve the path later, outside any
// sandbox, where a link put there meanwhile leads anywhere (review of
// 008df18, finding 1). Its workers do the work; the editor sees the files
// change on disk. fs/read_text_file is asked only to tell the model of an
// editor's unsaved changes (docs/acp.md).
//
// Threads: StdinLines' reads stdin, handing the editor's answers to
// fs/read_text_file straight to their callbacks; this one handles the rest
// of what arrives; each session has its own loop (HostedSession's) and an
// event reader here, which sends its updates. stdout is written by
// StdoutLines' thread, so a client that stops reading stalls nothing: past
// its bound the sessions are cancelled and odin acp ends.

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
  // Shared with the callbacks of its requests to the editor, which may run
  // on the stdin thread after it stopped (they hold it weakly).
  std::shared_ptr<HostedSession> hosted;
  std::thread reader;
  std::atomic<bool> stop{false};
  // The reader thread's own: the file each running Read names.
  std::map<std::string, std::string> call_files;
};

// The requests of ours that wait for the client's answer, by id: the
// stdin thread hands each answer to its callback at once (StdinLines'
// route), or null when the client is gone.
class Awaited {
 public:
  using Callback = std::function<void(const json& answer)>;
  void Expect(int64_t id, Callback done) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!closed_) {
        waiting_[id] = std::move(done);
        return;
      }
    }
    done(json());
  }
  // The client is gone: whoever waits hears so now.
  void CloseAll() {
    std::map<int64_t, Callback> waiting;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      waiting.swap(waiting_);
    }
    for (auto& [id, done] : waiting) done(json());
  }
  // True if line answers a request that waits (and hands it over).
  bool Deliver(const std::string& line) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_.empty()) return false;
    }
    StatusOr<json> m = ParseJsonOrError(line, "message");
    if (!m.ok() || !m->is_object() || m->contains("method") || !m->contains("id") || !(*m)["id"].is_number_integer()) {
      return false;
    }
    Callback done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = waiting_.find((*m)["id"].get<int64_t>());
      if (it == waiting_.end()) return false;
      done = std::move(it->second);
      waiting_.erase(it);
    }
    done(*m);
    return true;
  }

 private:
  std::mutex mu_;
  std::map<int64_t, Callback> waiting_;
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
    if (!method.empty() && m.contains("id") && !has_id) {
      // A request under an id no answer can carry: refused, not dropped.
      return Error(m["id"].is_number() ? m["id"] : json(), -32600, "an id must be a string or an integer");
    }
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
    if (load && !InLedger(ws->ledger_path, resume)) {
      // Exact ids only: a prefix (which odin -r takes) could name a session
      // this process has open under its full id.
      return Error(id, -32002, "no session '" + resume + "' in this workspace's ledger (odin sessions lists them)");
    }
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
    StatusOr<std::unique_ptr<HostedSession>> started = HostedSession::Start(flags, Mode::kEdit, "prompt");
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

  static bool InLedger(const std::string& ledger_path, const std::string& session_id) {
    StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(ledger_path);
    return ledger.ok() && (*ledger)->FindSession(session_id).ok();
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
      prompts_[sent->first] = {s->id, id};
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
    std::string why_ended = "its workers could not be kept";
    while (!s->stop) {
      bool ended = false;
      std::vector<v1::SessionEvent> events = s->hosted->EventsAfter(seq, milliseconds(300), &ended);
      for (const v1::SessionEvent& e : events) {
        seq = e.seq();
        for (const std::string& u : updates.Of(e)) Update(s->id, ParseJson(u));
        if (e.has_approval_requested()) AskPermission(*s, e.approval_requested());
        if (e.has_message_finished()) Finished(e.message_id(), e.message_finished());
        if (e.has_session_ended()) why_ended = e.session_ended().reason();
        if (client_reads_) CompareReads(s, e);
      }
      if (ended) return Ended(*s, why_ended);
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
    Reply(it->second.second, result);
    prompts_.erase(it);
  }

  // The session ended on its own: its prompts get an answer all the same.
  void Ended(const AcpSession& s, const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = prompts_.begin(); it != prompts_.end();) {
      if (it->second.first != s.id) {
        ++it;
        continue;
      }
      Error(it->second.second, -32603, "the session ended: " + why);
      it = prompts_.erase(it);
    }
  }

  // A Read that ended well, of a file in the workspace that is no protected
  // path: its file is compared with the editor's buffer of it.
  void CompareReads(AcpSession* s, const v1::SessionEvent& e) {
    if (e.has_tool_call_started() && HandlerOf(e.tool_call_started().tool()) == ToolHandler::kFileRead) {
      json args = ParseJson(e.tool_call_started().arguments_json());
      std::string file = args.is_object() ? Text(args, "file_path") : "";
      if (!file.empty()) s->call_files[e.tool_call_started().execution_id()] = file;
      return;
    }
    if (!e.has_tool_call_finished()) return;
    auto named = s->call_files.find(e.tool_call_finished().execution_id());
    if (named == s->call_files.end()) return;
    std::string rel = RelativeInside(s->root, named->second);
    s->call_files.erase(named);
    if (e.tool_call_finished().status() != "ok" || rel.empty() || IsProtectedPath(s->root + "/" + rel, s->root)) {
      return;
    }
    CompareBuffer(s, rel);
  }

  // path relative to root if it is inside it, else "".
  static std::string RelativeInside(const std::string& root, const std::string& path) {
    if (path.empty()) return "";
    std::string abs = std::filesystem::path(path[0] == '/' ? path : root + "/" + path).lexically_normal().string();
    if (abs.rfind(root + "/", 0) != 0 || abs.back() == '/') return "";
    return abs.substr(root.size() + 1);
  }

  // What a comparison of texts ignores: a byte order mark and CRLF line
  // ends, which editors normalise in their buffers.
  static std::string Normalized(std::string text) {
    if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
      out += text[i];
    }
    return out;
  }

  // Asks the editor for its buffer of rel, without waiting: the answer is
  // compared on the stdin thread with the file as it was when asked. The
  // editor is asked only of a regular file Odin itself may read there (no
  // link on the way), and its answer counts only if no link took the
  // file's place meanwhile; unsaved changes are something the model must
  // know it did not see (before its next message). The buffer itself never
  // reaches the model.
  void CompareBuffer(AcpSession* s, const std::string& rel) {
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(s->root);
    if (!files.ok()) return;
    StatusOr<std::string> disk = files->ReadFile(rel, kMaxEditorFileBytes, WorkspaceFiles::Links::kNone);
    if (!disk.ok()) return;
    int64_t request = NextRequestId();
    std::weak_ptr<HostedSession> session = s->hosted;
    std::string root = s->root;
    awaited_.Expect(request, [session, root, rel, saved = Normalized(std::move(*disk))](const json& m) {
      if (!m.is_object() || !m.contains("result") || !m["result"].is_object()) return;
      const json& result = m["result"];
      if (!result.contains("content") || !result["content"].is_string()) return;
      StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
      if (!files.ok() || !files->Look(rel).is_file()) return;
      if (saved == Normalized(result["content"].get<std::string>())) return;
      std::shared_ptr<HostedSession> hosted = session.lock();
      if (!hosted) return;
      hosted->AddNote("The user's editor holds unsaved changes to " + rel +
                      " that are not on disk: what Read returned is the file as saved. If those changes matter, "
                      "ask the user to save the file.");
    });
    Send({{"jsonrpc", "2.0"},
          {"id", request},
          {"method", "fs/read_text_file"},
          {"params", {{"sessionId", s->id}, {"path", s->root + "/" + rel}}}});
  }

  static constexpr uint64_t kMaxEditorFileBytes = 10u << 20;

  AgentSessionFlags base_;
  Mode mode_;  // a new session's first
  StdoutLines* out_;
  Awaited awaited_;
  std::atomic<bool> client_reads_{false};  // the client offers fs/read_text_file

  std::mutex sessions_mu_;
  std::map<std::string, std::unique_ptr<AcpSession>> sessions_;

  std::mutex mu_;  // guards what follows
  // message id -> its session and the session/prompt request's id
  std::map<std::string, std::pair<std::string, json>> prompts_;
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
