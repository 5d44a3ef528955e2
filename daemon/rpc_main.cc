// odin-rpc: everything of Odin that speaks gRPC, so the plain odin never
// loads it. odin runs it for
//   odin serve [--listen unix:PATH|HOST:PORT] [--token T]   the daemon
//   odin attach [SESSION] [--connect ADDRESS]                an interactive client
//   odin -p PROMPT --connect ADDRESS [...]                   a headless client
// with the same arguments.
//
// Long file: the daemon and its three clients share the address, token and
// TLS resolution and the flags; split, each piece would need the others'.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/logging.h"
#include "base/terminal_text.h"
#include "base/version.h"
#include "planner/agent.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "session/session_events.h"
#include "config/config_loader.h"
#include "workspace/workspace.h"
#include "daemon/service.h"
#include "daemon/socket_location.h"
#include "daemon/standard_services.h"
#include "daemon/unix_listener.h"
#include "workspace/host_files.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

// ---- where the daemon is -----------------------------------------------------

// The daemon's files in the workspace's .odin/ (which no sandbox sees). The
// socket is elsewhere (socket_location.h); daemon.json says where.
struct DaemonFiles {
  std::string lock, info, token;
};

DaemonFiles FilesOf(const Workspace& ws) {
  return {ws.state_dir + "/daemon.lock", ws.state_dir + "/daemon.json", ws.state_dir + "/daemon.token"};
}

// The address clients use: "unix:/abs/path" or "host:port".
bool IsUnix(const std::string& address) { return address.rfind("unix:", 0) == 0; }

// A file of the daemon's in Odin's state directory: through the safe file
// layer (it may be the workspace's .odin).
std::string ReadOr(const std::string& path, const std::string& fallback) {
  StatusOr<WorkspaceFiles> dir = WorkspaceFiles::Open(DirName(path));
  if (!dir.ok()) return fallback;
  StatusOr<std::string> text = dir->ReadFile(path.substr(path.rfind('/') + 1), 1 << 20, WorkspaceFiles::Links::kNone);
  return text.ok() ? *text : fallback;
}

Status WriteState(const std::string& path, const std::string& text) {
  ASSIGN_OR_RETURN(WorkspaceFiles dir, WorkspaceFiles::Open(DirName(path)));
  return dir.WriteFile(path.substr(path.rfind('/') + 1), text, 0600);
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Whether a host:port address stays on this machine's loopback: an address
// that parses as 127.0.0.0/8 or ::1 (a name such as 127.example.com is a
// name, resolved anywhere), or "localhost".
bool IsLoopback(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// The user's serve settings (TLS), from the config the rest of odin reads.
StatusOr<Config::Serve> ServeSettings(const Workspace& ws) {
  ASSIGN_OR_RETURN(LoadedConfig loaded, LoadConfig(ws, EnvironmentMap()));
  return loaded.config.serve;
}

// ---- the daemon ------------------------------------------------------------------

// Blocks SIGINT, SIGTERM and SIGHUP, for a SignalThread; returns the set.
// Call it before the first gRPC object: gRPC's threads inherit the mask, so
// none of them is picked for a signal and ended by its default action
// (which would leave the session's message running in the daemon).
sigset_t BlockSignals() {
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  return sigs;
}

struct ServeFlags {
  std::string listen;
  std::string token;
};

int Serve(const GlobalFlags& g, const AgentFlags& a, const ServeFlags& f) {
  auto fail = [](const std::string& m) {
    std::cerr << "odin serve: " << m << "\n";
    return kError;
  };
  // Signals are taken by a thread of ours (sigwait below), never delivered
  // to another: a thread that did not block SIGTERM could be picked for it,
  // and its default action would end the daemon unclean.
  sigset_t sigs = BlockSignals();
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return fail(ws.status().message());
  // / and ~ are served only when -C names them (as -p and mcp serve).
  if (std::string refused = TooBroadRefusal(*ws, !g.dir.empty()); !refused.empty()) {
    std::cerr << "odin serve: " << refused << "\n";
    return kUsageError;
  }
  if (Status s = PrepareStateDir(*ws); !s.ok()) return fail(s.message());
  DaemonFiles files = FilesOf(*ws);
  // One daemon per workspace: the lock says who.
  StatusOr<WorkspaceFiles> state = WorkspaceFiles::Open(ws->state_dir);
  StatusOr<UniqueFd> lock = state.ok() ? state->OpenAppend("daemon.lock") : StatusOr<UniqueFd>(state.status());
  if (!lock.ok()) return fail(lock.status().WithContext(files.lock).message());
  int lock_fd = lock->release();
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    json info = ParseJson(ReadOr(files.info, "{}"));
    std::string where = info.is_object() ? info.value("listen", "?") : "?";
    int pid = info.is_object() ? info.value("pid", 0) : 0;
    return fail("a daemon already serves " + ws->root + " at " + where + " (pid " + std::to_string(pid) +
                "); odin attach connects to it");
  }
  std::string listen = f.listen;
  if (listen.empty()) {
    StatusOr<std::string> socket = DaemonSocketPath(ws->root);
    if (!socket.ok()) return fail(socket.status().message());
    listen = "unix:" + *socket;
  }
  std::string token = f.token.empty() ? EnvOr("ODIN_TOKEN", "") : f.token;
  // A unix socket is accepted by us, so that each client's credentials are
  // checked before gRPC reads from it (unix_listener.h); a socket left by a
  // daemon that died is replaced (we hold the lock).
  std::unique_ptr<UnixListener> listener;
  if (IsUnix(listen)) {
    StatusOr<std::unique_ptr<UnixListener>> l = UnixListener::Listen(listen.substr(5));
    if (!l.ok()) return fail(l.status().message());
    listener = std::move(*l);
  } else {
    // TCP reaches beyond this user: a token is required.
    if (token.empty()) token = RandomHex(24);
    if (Status s = WriteState(files.token, token + "\n"); !s.ok()) return fail(s.message());
  }
  // Beyond loopback, the token travels over the network: TLS as well.
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  bool credentials_tls = false;
  if (!listener && !IsLoopback(listen)) {
    StatusOr<Config::Serve> tls = ServeSettings(*ws);
    if (!tls.ok()) return fail(tls.status().message());
    if (tls->tls_cert.empty() || tls->tls_key.empty()) {
      return fail(listen +
                  " listens beyond loopback: it needs TLS (set serve.tls_cert and serve.tls_key in your "
                  "odinconfig.json), or listen on 127.0.0.1");
    }
    // The user's own files, named on the command line.
    StatusOr<std::optional<std::string>> cert_file = ReadUserFile(tls->tls_cert, 1 << 20);
    StatusOr<std::optional<std::string>> key_file = ReadUserFile(tls->tls_key, 1 << 20);
    StatusOr<std::string> cert = !cert_file.ok() ? cert_file.status()
                                 : *cert_file    ? StatusOr<std::string>(**cert_file)
                                                 : Status::NotFound(tls->tls_cert, "no such file");
    StatusOr<std::string> key = !key_file.ok() ? key_file.status()
                                : *key_file    ? StatusOr<std::string>(**key_file)
                                               : Status::NotFound(tls->tls_key, "no such file");
    if (!cert.ok()) return fail("serve.tls_cert: " + cert.status().message());
    if (!key.ok()) return fail("serve.tls_key: " + key.status().message());
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    credentials = grpc::SslServerCredentials(ssl);
    credentials_tls = true;
  }

  ServiceOptions o;
  o.session.runtime.dir = g.dir;
  o.session.runtime.sandbox = g.sandbox;
  o.session.runtime.network = g.network;
  o.session.llm = a.llm;
  o.session.max_turns = a.max_turns;
  o.session.max_tool_calls = a.max_tool_calls;
  o.session.max_tokens = a.max_tokens;
  o.session.max_budget_usd = a.max_budget_usd;
  o.session.max_wall_seconds = a.max_wall_seconds;
  o.session.profile = a.profile;
  o.workspace = ws->root;
  o.ledger_path = ws->ledger_path;
  o.listen = listen;
  o.token = IsUnix(listen) ? "" : token;
  CoordinatorServiceImpl service(o);

  grpc::ServerBuilder builder;
  int port = 0;
  if (!listener) builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterService(&service);
  AddStandardServices(&builder, o.token);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (!listener && port == 0)) return fail("cannot listen on " + listen);
  if (!listener && listen.size() > 2 && listen.substr(listen.size() - 2) == ":0") {
    listen = listen.substr(0, listen.size() - 1) + std::to_string(port);
  }
  // The clients the listener refuses are answered by a server of their own.
  RefusingService refused;
  std::unique_ptr<grpc::Server> refusing;
  std::thread accepting;
  if (listener) {
    grpc::ServerBuilder refusing_builder;
    WithoutStandardServices(&refusing_builder);
    refusing_builder.RegisterCallbackGenericService(&refused);
    refusing = refusing_builder.BuildAndStart();
    if (!refusing) return fail("cannot start the server that refuses other users");
    accepting = std::thread([&] { listener->Run(server.get(), refusing.get(), &refused); });
  }
  json info = {{"listen", listen}, {"pid", getpid()}, {"workspace", ws->root}, {"version", ODIN_VERSION}};
  Status written = WriteState(files.info, info.dump() + "\n");
  if (written.ok()) {
    std::cerr << "odin serve: listening on " << listen << " for " << ws->root
              << (IsUnix(listen) ? "" : (credentials_tls ? " (TLS; token in " : " (token in ") + files.token + ")")
              << "\n";
    int sig = 0;
    sigwait(&sigs, &sig);
    std::cerr << "odin serve: " << strsignal(sig) << ", shutting down\n";
  }
  if (listener) {
    listener->Stop();
    accepting.join();
    refusing->Shutdown(std::chrono::system_clock::now());
  }
  // Open streams are cut at once: their sessions end below anyway.
  server->Shutdown(std::chrono::system_clock::now());
  service.CloseSessions();
  if (state.ok()) (void)state->Remove("daemon.json");
  listener.reset();  // removes the socket
  return written.ok() ? 0 : fail(written.message());
}

// ---- clients ---------------------------------------------------------------------

struct ClientFlags {
  std::string connect;
  std::string token;
  std::string session;
  // TLS: beyond loopback always, verified against ca (PEM; "" the system's
  // roots); on loopback only when a CA is given.
  bool tls = false;
  std::string ca;
};

// Where to connect and with which token: the flags, else what the
// workspace's daemon left in .odin/.
Status ResolveClient(const GlobalFlags& g, ClientFlags* c) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (c->connect.empty()) {
    if (!ws.ok()) return ws.status();
    json info = ParseJson(ReadOr(FilesOf(*ws).info, ""));
    if (!info.is_object() || !info.contains("listen")) {
      return Status::NotFound("no daemon serves " + ws->root, "start one with odin serve, or give --connect");
    }
    c->connect = info["listen"];
  }
  if (c->token.empty()) c->token = EnvOr("ODIN_TOKEN", "");
  if (!IsUnix(c->connect)) {
    std::string ca_file = EnvOr("ODIN_TLS_CA", "");
    if (ca_file.empty() && ws.ok()) {
      StatusOr<Config::Serve> settings = ServeSettings(*ws);
      if (settings.ok()) ca_file = settings->tls_ca;
    }
    if (!ca_file.empty()) {
      StatusOr<std::optional<std::string>> ca_text = ReadUserFile(ca_file, 1 << 20);
      StatusOr<std::string> ca = !ca_text.ok() ? ca_text.status()
                                 : *ca_text    ? StatusOr<std::string>(**ca_text)
                                               : Status::NotFound(ca_file, "no such file");
      if (!ca.ok()) return ca.status().WithContext("the daemon's CA (serve.tls_ca or ODIN_TLS_CA)");
      c->ca = *ca;
    }
    c->tls = !ca_file.empty() || !IsLoopback(c->connect);
  }
  if (c->token.empty() && ws.ok() && !IsUnix(c->connect)) {
    std::string t = ReadOr(FilesOf(*ws).token, "");
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    c->token = t;
  }
  return Status::OK();
}

class Client {
 public:
  static std::shared_ptr<grpc::ChannelCredentials> Credentials(const ClientFlags& f) {
    if (!f.tls) return grpc::InsecureChannelCredentials();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = f.ca;
    return grpc::SslCredentials(ssl);
  }
  explicit Client(const ClientFlags& f)
      : token_(f.token), stub_(v1::CoordinatorService::NewStub(grpc::CreateChannel(f.connect, Credentials(f)))) {}
  std::unique_ptr<grpc::ClientContext> Context() const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
    return ctx;
  }
  v1::CoordinatorService::Stub& stub() { return *stub_; }

 private:
  std::string token_;
  std::unique_ptr<v1::CoordinatorService::Stub> stub_;
};

std::string Describe(const grpc::Status& s, const std::string& address) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE)
    return "cannot reach the daemon at " + address + ": " + s.error_message();
  return s.error_message();
}

// Takes the signals BlockSignals blocked on a thread of its own, which
// runs on_signal for each until it is destroyed.
class SignalThread {
 public:
  SignalThread(const sigset_t& sigs, std::function<void(int)> on_signal)
      : sigs_(sigs), thread_([this, f = std::move(on_signal)] {
          int sig = 0;
          while (sigwait(&sigs_, &sig) == 0 && !stop_) f(sig);
        }) {}
  ~SignalThread() {
    stop_ = true;
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

 private:
  sigset_t sigs_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it starts once the rest is set
};

// What a signal does before there is a message to cancel: its default
// action, ending the client by it (a shell running clients in a loop sees
// the signal and stops). Every other thread blocks it, so this one takes it.
[[noreturn]] void EndBySignal(int sig) {
  std::cout.flush();
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
  _exit(128 + sig);
}

// A new session with the command line's settings.
v1::CreateSessionRequest SessionRequest(const AgentFlags& a, const std::string& approval) {
  v1::CreateSessionRequest req;
  req.set_mode(a.mode);
  req.set_model(a.llm.model);
  req.set_approval(approval);
  req.set_profile(a.profile);
  req.set_workflow(a.workflow);
  req.set_max_turns(a.max_turns);
  req.set_max_tool_calls(a.max_tool_calls);
  req.set_max_tokens(a.max_tokens);
  req.set_max_budget_usd(a.max_budget_usd);
  req.set_max_wall_seconds(a.max_wall_seconds);
  return req;
}

// Ctrl-C: the session's running message is cancelled.
void CancelMessage(Client& client, const std::string& session_id) {
  v1::CancelRequest req;
  req.set_session_id(session_id);
  v1::CancelResponse reply;
  // A daemon that does not answer must not hold the next Ctrl-C up.
  std::unique_ptr<grpc::ClientContext> ctx = client.Context();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  client.stub().Cancel(ctx.get(), req, &reply);
}

int Prompt(const GlobalFlags& g, const AgentFlags& a, ClientFlags c) {
  auto fail = [](const std::string& m, int code = kError) {
    std::cerr << "odin: " << m << "\n";
    return code;
  };
  if (a.approval == "prompt") return fail("--approval prompt needs the interactive session (odin attach)", kUsage);
  sigset_t sigs = BlockSignals();  // before the client
  if (Status s = ResolveClient(g, &c); !s.ok()) return fail(s.message());
  Client client(c);
  std::string session_id = c.session;
  std::atomic<bool> sent{false};  // session_id is final once set
  SignalThread signals(sigs, [&](int sig) {
    if (!sent) EndBySignal(sig);
    CancelMessage(client, session_id);
  });
  if (session_id.empty()) {
    v1::CreateSessionRequest req = SessionRequest(a, a.approval.empty() ? "deny" : a.approval);
    v1::SessionInfo info;
    grpc::Status st = client.stub().CreateSession(client.Context().get(), req, &info);
    if (!st.ok()) return fail(Describe(st, c.connect));
    session_id = info.session_id();
    if (a.output_format == "stream-json") {
      std::cout << SessionStartJson(session_id, info.provider(), info.model(), info.workspace()) << "\n" << std::flush;
    }
  }
  std::unique_ptr<grpc::ClientContext> ctx = client.Context();
  sent = true;
  v1::SendRequest req;
  req.set_session_id(session_id);
  req.set_text(a.prompt);
  req.set_mode(c.session.empty() ? "" : a.mode);
  req.set_workflow(c.session.empty() ? "" : a.workflow);
  std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> reader = client.stub().Send(ctx.get(), req);
  v1::SessionEvent e;
  std::optional<int> exit_code;
  while (reader->Read(&e)) {
    PrintPromptEvent(e, a.output_format, std::cout, std::cerr);
    if (e.has_message_finished()) exit_code = e.message_finished().exit_code();
  }
  grpc::Status st = reader->Finish();
  if (!st.ok()) return fail(Describe(st, c.connect));
  if (!exit_code) return fail("the daemon ended the stream before the message finished");
  return *exit_code;
}

// An interactive client: the session's events as the terminal shows them,
// lines typed become messages, y/a/n answer approvals.
int Attach(const GlobalFlags& g, const AgentFlags& a, ClientFlags c) {
  auto fail = [](const std::string& m) {
    std::cerr << "odin attach: " << m << "\n";
    return kError;
  };
  sigset_t sigs = BlockSignals();  // before the client
  if (Status s = ResolveClient(g, &c); !s.ok()) return fail(s.message());
  Client client(c);
  std::string session_id = c.session;
  std::atomic<bool> attached{false}, ended{false};  // session_id is final once attached
  SignalThread signals(sigs, [&](int sig) {
    if (!attached) EndBySignal(sig);
    if (!ended) CancelMessage(client, session_id);
  });
  if (session_id.empty()) {
    v1::CreateSessionRequest req = SessionRequest(a, "prompt");
    v1::SessionInfo info;
    grpc::Status st = client.stub().CreateSession(client.Context().get(), req, &info);
    if (!st.ok()) return fail(Describe(st, c.connect));
    session_id = info.session_id();
  }
  std::cout << "odin " << ODIN_VERSION << " · attached to session " << session_id << " at " << c.connect
            << " (Ctrl-D detaches, the session goes on)\n"
            << std::flush;

  attached = true;
  std::mutex mu;
  std::deque<std::string> approvals;  // execution ids waiting for an answer, oldest first
  std::unique_ptr<grpc::ClientContext> sub_ctx = client.Context();
  v1::SubscribeRequest sub;
  sub.set_session_id(session_id);
  std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> events = client.stub().Subscribe(sub_ctx.get(), sub);
  std::thread printer([&] {
    v1::SessionEvent e;
    bool in_text = false;
    // What the model and the commands wrote reaches the terminal with its
    // control characters made visible (base/terminal_text.h).
    auto line = [&](const std::string& text) {
      if (in_text) std::cout << "\n";
      in_text = false;
      std::cout << VisibleControls(text) << "\n" << std::flush;
    };
    while (events->Read(&e)) {
      std::lock_guard<std::mutex> lock(mu);
      switch (e.kind_case()) {
        case v1::SessionEvent::kMessageStarted:
          line("[" + e.message_started().mode() + "] " + e.message_started().text());
          break;
        case v1::SessionEvent::kTextDelta:
          std::cout << VisibleControls(e.text_delta().text()) << std::flush;
          in_text = !e.text_delta().text().empty() && e.text_delta().text().back() != '\n';
          break;
        case v1::SessionEvent::kToolCallStarted:
          line("⏺ " + CallLabel({"", e.tool_call_started().tool(), e.tool_call_started().arguments_json()}));
          break;
        case v1::SessionEvent::kToolCallFinished: line("  ⎿ " + e.tool_call_finished().summary()); break;
        case v1::SessionEvent::kApprovalRequested: {
          const v1::ApprovalRequested& r = e.approval_requested();
          approvals.push_back(r.execution_id());
          line("⚠ approval needed: `" + VisibleControls(r.what(), Layout::kOneLine) + "`\n  " + r.reason() +
               (r.saved_key().empty()
                    ? "\n  Allow? [y] once, [s] for this session, [n] no: "
                    : "\n  Allow? [y] once, [s] for this session, [w] always in this workspace, [A] always, [n] no: "));
          break;
        }
        case v1::SessionEvent::kApprovalResolved: {
          auto it = std::find(approvals.begin(), approvals.end(), e.approval_resolved().execution_id());
          if (it != approvals.end()) approvals.erase(it);
          line("  (approval: " + e.approval_resolved().answer() + ")");
          break;
        }
        case v1::SessionEvent::kMessageFinished: {
          const v1::MessageFinished& f = e.message_finished();
          if (f.status() != "done") line("(" + f.status() + (f.error().empty() ? "" : ": " + f.error()) + ")");
          line(f.report_text());
          break;
        }
        case v1::SessionEvent::kSessionEnded: line("(the session ended: " + e.session_ended().reason() + ")"); break;
        default: break;
      }
    }
    ended = true;
  });

  std::vector<std::thread> senders;
  std::string input;
  while (!ended && std::getline(std::cin, input)) {
    if (input.empty()) continue;
    if (input == "/quit") break;
    std::string waiting;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!approvals.empty()) waiting = approvals.front();
    }
    if (!waiting.empty()) {
      std::string answer = input == "y" || input == "yes" ? "once"
                           : input == "s" || input == "a" ? "session"
                           : input == "w"                 ? "workspace"
                           : input == "A"                 ? "always"
                                                          : "deny";
      v1::ApproveRequest req;
      req.set_session_id(session_id);
      req.set_execution_id(waiting);
      req.set_answer(answer);
      v1::ApproveResponse reply;
      client.stub().Approve(client.Context().get(), req, &reply);
      continue;
    }
    // The message's own stream is not needed: the subscription shows it all.
    senders.emplace_back([&client, session_id, input] {
      auto ctx = client.Context();
      v1::SendRequest req;
      req.set_session_id(session_id);
      req.set_text(input);
      auto reader = client.stub().Send(ctx.get(), req);
      v1::SessionEvent ignored;
      while (reader->Read(&ignored)) {
        if (ignored.has_message_finished()) break;
      }
      ctx->TryCancel();
      reader->Finish();
    });
  }
  // Detach: the session goes on in the daemon.
  for (std::thread& t : senders) t.join();
  sub_ctx->TryCancel();
  printer.join();
  events->Finish();
  ended = true;
  return 0;
}

std::string BudgetLine(const json& b) {
  std::string out;
  for (const char* k : {"turns", "tool_calls", "tokens", "cost_usd", "wall_seconds"}) {
    std::string v = "-";
    if (!b[k].is_null()) {
      char buf[32];
      snprintf(buf, sizeof buf, "%g", b[k].get<double>());
      v = buf;
    }
    out += (out.empty() ? "" : ", ") + std::string(k) + " " + v;
  }
  return out;
}

// What a running daemon reports (GetStatus), for odin doctor.
int PrintStatus(const GlobalFlags& g, ClientFlags c, bool as_json) {
  if (Status s = ResolveClient(g, &c); !s.ok()) {
    std::cerr << "odin: " << s.message() << "\n";
    return kError;
  }
  Client client(c);
  auto ctx = client.Context();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::StatusResponse st;
  grpc::Status rs = client.stub().GetStatus(ctx.get(), {}, &st);
  if (!rs.ok()) {
    std::cerr << "odin: " << Describe(rs, c.connect) << "\n";
    return kError;
  }
  auto limit = [](double v) { return v > 0 ? json(v) : json(); };
  json j = {{"listen", st.listen()}, {"pid", st.pid()}, {"version", st.version()}, {"sessions", json::array()}};
  for (const v1::SessionStatus& s : st.sessions()) {
    json workers = json::array(), breakers = json::array();
    for (const v1::WorkerStatus& w : s.workers()) {
      workers.push_back(
          {{"id", w.id()}, {"pid", w.pid()}, {"kind", w.kind()}, {"state", w.state()}, {"host", w.host()}});
    }
    json hosts = json::array();
    for (const v1::RemoteHostStatus& h : s.hosts()) {
      hosts.push_back({{"id", h.id()},
                       {"name", h.name()},
                       {"cores", h.cores()},
                       {"max_workers", h.max_workers()},
                       {"sandbox", h.sandbox()},
                       {"workers", h.workers()},
                       {"usable", h.usable()}});
    }
    for (const v1::BreakerStatus& b : s.breakers()) {
      breakers.push_back(
          {{"name", b.name()}, {"state", b.state()}, {"consecutive_failures", b.consecutive_failures()}});
    }
    j["sessions"].push_back({{"session_id", s.session().session_id()},
                             {"busy", s.session().busy()},
                             {"queued", s.session().queued()},
                             {"model", s.session().model()},
                             {"workers", workers},
                             {"breakers", breakers},
                             {"hosts", hosts},
                             {"budget_per_message",
                              {{"turns", limit(s.max_turns())},
                               {"tool_calls", limit(static_cast<double>(s.max_tool_calls()))},
                               {"tokens", limit(static_cast<double>(s.max_tokens()))},
                               {"cost_usd", limit(s.max_budget_usd())},
                               {"wall_seconds", limit(s.max_wall_seconds())}}},
                             {"used",
                              {{"llm_calls", s.used_llm_calls()},
                               {"input_tokens", s.used_input_tokens()},
                               {"output_tokens", s.used_output_tokens()},
                               {"cost_usd", s.used_cost_usd()}}}});
  }
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "daemon     " << st.listen() << " (pid " << st.pid() << ", odin " << st.version() << "), "
            << st.sessions_size() << " session(s)\n";
  for (const json& s : j["sessions"]) {
    std::map<std::string, int> states;
    for (const json& w : s["workers"]) ++states[w["kind"].get<std::string>() + " " + w["state"].get<std::string>()];
    std::string workers, open;
    for (auto& [k, n] : states) workers += (workers.empty() ? "" : ", ") + std::to_string(n) + " " + k;
    for (const json& b : s["breakers"]) {
      if (b["state"] != "closed")
        open += (open.empty() ? "" : ", ") + b["name"].get<std::string>() + " " + b["state"].get<std::string>();
    }
    std::cout << "  " << s["session_id"].get<std::string>() << "  " << (s["busy"] ? "busy" : "idle") << ", "
              << s["queued"] << " queued, model " << s["model"].get<std::string>() << ", " << s["used"]["llm_calls"]
              << " model calls\n"
              << "    workers   " << (workers.empty() ? "none" : workers) << "\n"
              << "    breakers  " << s["breakers"].size() << (open.empty() ? ", all closed" : ", " + open) << "\n"
              << "    budget    per message: " << BudgetLine(s["budget_per_message"]) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace odin

int main(int argc, char** argv) {
  odin::EnsureStandardFds();
  // Not dumpable: the daemon holds API keys, tokens and workers' secrets.
  prctl(PR_SET_DUMPABLE, 0);
  odin::InitLogging("odin-rpc");
  signal(SIGPIPE, SIG_IGN);
  odin::GlobalFlags global;
  odin::AgentFlags agent;
  odin::ServeFlags serve;
  odin::ClientFlags client;

  CLI::App app{"odin-rpc: Odin's gRPC daemon and clients (run through odin serve, odin attach, odin -p --connect)",
               "odin"};
  app.add_option("-C", global.dir, "Run as if started in DIR")->type_name("DIR");
  app.add_option("--sandbox", global.sandbox, "Sandbox policy: auto, require, fallback or off")
      ->check(CLI::IsMember({"auto", "require", "fallback", "off"}));
  app.add_flag("--network", global.network, "Edit-mode commands reach the network (never ask or plan)");
  odin::AddAgentOptions(&app, &agent);
  app.add_option("-p,--print", agent.prompt, "Run one message headless on the daemon");
  app.add_option("--connect", client.connect, "The daemon's address: unix:PATH or HOST:PORT");
  app.add_option("--token", client.token, "The daemon's bearer token (TCP); also ODIN_TOKEN");
  app.add_option("--session", client.session, "Send to this session instead of starting one");

  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the coordinator as a daemon for this workspace");
  serve_cmd->fallthrough();
  serve_cmd->add_option("--listen", serve.listen,
                        "unix:PATH or HOST:PORT (default: a unix socket in $XDG_RUNTIME_DIR/odin/, "
                        "named in .odin/daemon.json; TCP needs a token)");
  serve_cmd->add_option("--token", serve.token,
                        "The bearer token TCP clients must send (default: generated "
                        "into .odin/daemon.token)");
  CLI::App* attach_cmd = app.add_subcommand("attach", "Attach to a session of a running daemon (a new one if none)");
  attach_cmd->fallthrough();
  attach_cmd->add_option("SESSION", client.session, "The session id");
  bool status_json = false;
  CLI::App* status_cmd = app.add_subcommand("status", "What the workspace's daemon reports (odin doctor shows it)");
  status_cmd->fallthrough();
  status_cmd->add_flag("--json", status_json, "Print JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!agent.json_schema.empty() || !agent.images.empty()) {
    std::cerr << "odin: --json-schema and --image are not supported by the daemon yet (odin -p without --connect)\n";
    return odin::kUsageError;
  }
  if (serve_cmd->parsed()) return odin::Serve(global, agent, serve);
  if (attach_cmd->parsed()) return odin::Attach(global, agent, client);
  if (status_cmd->parsed()) return odin::PrintStatus(global, client, status_json);
  if (!agent.prompt.empty()) return odin::Prompt(global, agent, client);
  std::cerr << "odin-rpc: nothing to do (serve, attach, or -p PROMPT --connect ADDRESS)\n";
  return odin::kUsageError;
}
