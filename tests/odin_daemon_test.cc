// The coordinator daemon end to end: the real `odin serve` (odin-rpc, its
// sessions, workers and sandbox) driven through the generated gRPC client,
// with a scripted fake model.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "odin/v1/coordinator.grpc.pb.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;
namespace v1 = odin::v1;

json Call(const std::string& tool, const json& args) {
  return {{"tool_calls", {{{"name", tool}, {"arguments", args}}}}};
}
json Command(const std::string& command) { return Call("ExecuteCommand", {{"command", command}}); }
json Text(const std::string& text) { return {{"text", text}}; }

class OdinDaemonTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : daemons_) {
      kill(pid, SIGTERM);
      EXPECT_EQ(Wait(pid), 0) << "the daemon did not shut down cleanly";
    }
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::map<std::string, std::string> Env() {
    return {{"OPENAI_BASE_URL", llm_->OpenAiUrl()},
            {"OPENAI_API_KEY", "k"},
            {"ANTHROPIC_BASE_URL", ""},
            {"ANTHROPIC_API_KEY", ""},
            {"ODIN_TEST_MARK", marker_}};
  }
  // Starts `odin serve` with the script and waits until it listens.
  void Serve(const json& script, std::vector<std::string> extra = {}) {
    Put("odinconfig.json", R"({"checks":{"build":"","lint":"","tests":""}})");
    if (!config_.empty()) Put("odinconfig.json", config_);
    llm_ = std::make_unique<FakeLlm>(script.dump());
    std::vector<std::string> args = {"serve"};
    args.insert(args.end(), extra.begin(), extra.end());
    int out = -1;
    std::map<std::string, std::string> env = Env();
    for (const auto& [k, v] : daemon_env_) env[k] = v;
    daemons_.push_back(StartOdin(ws_.path(), args, &out, env));
    close(out);
    // It writes daemon.json once it listens.
    WaitUntil([&] { return PathExists(ws_.Join(".odin/daemon.json")); });
    json info = json::parse(*ReadFileToString(ws_.Join(".odin/daemon.json")), nullptr, false);
    ASSERT_TRUE(info.is_object()) << "the daemon did not start";
    address_ = info["listen"];
    stub_ = v1::CoordinatorService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }
  std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
    return ctx;
  }
  std::string NewSession(const std::string& approval = "deny") {
    v1::CreateSessionRequest req;
    req.set_approval(approval);
    v1::SessionInfo info;
    grpc::Status st = stub_->CreateSession(Context().get(), req, &info);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return info.session_id();
  }
  // Sends a message and reads its stream to the end; on_first runs when its
  // first event arrives (the daemon has taken the message).
  std::vector<v1::SessionEvent> SendAll(const std::string& session, const std::string& text,
                                        const std::function<void()>& on_first = nullptr) {
    v1::SendRequest req;
    req.set_session_id(session);
    req.set_text(text);
    auto ctx = Context();
    auto reader = stub_->Send(ctx.get(), req);
    std::vector<v1::SessionEvent> events;
    v1::SessionEvent e;
    while (reader->Read(&e)) {
      events.push_back(e);
      if (events.size() == 1 && on_first) on_first();
    }
    grpc::Status st = reader->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    return events;
  }
  // Reads a session's events from after_seq until a message finishes.
  std::vector<v1::SessionEvent> Follow(const std::string& session, uint64_t after_seq, size_t messages = 1) {
    v1::SubscribeRequest req;
    req.set_session_id(session);
    req.set_after_seq(after_seq);
    auto ctx = Context();
    auto reader = stub_->Subscribe(ctx.get(), req);
    std::vector<v1::SessionEvent> events;
    v1::SessionEvent e;
    size_t finished = 0;
    while (finished < messages && reader->Read(&e)) {
      events.push_back(e);
      if (e.has_message_finished()) ++finished;
    }
    ctx->TryCancel();
    reader->Finish();
    return events;
  }

  TempWorkspace ws_;
  std::string marker_ = UniqueMarker();
  std::string config_;
  std::map<std::string, std::string> daemon_env_;  // the daemon's own, over Env()
  std::unique_ptr<FakeLlm> llm_;
  std::vector<pid_t> daemons_;
  std::string address_, token_;
  std::unique_ptr<v1::CoordinatorService::Stub> stub_;
};

TEST_F(OdinDaemonTest, AFullSessionWithTheFakeModel) {
  Serve({{"responses",
          {Call("WriteFile", {{"file_path", "notes.txt"}, {"content", "from the daemon\n"}}), Text("wrote it")}}});
  // The unix socket is the owner's alone, outside the workspace (no sandbox
  // sees it), in the runtime directory; daemon.json says where.
  ASSERT_EQ(address_.rfind("unix:", 0), 0u) << address_;
  std::string socket = address_.substr(5);
  EXPECT_EQ(socket.rfind(UserDir("XDG_RUNTIME_DIR") + "/odin/", 0), 0u) << socket;
  EXPECT_NE(socket.rfind(ws_.path(), 0), 0u) << socket;
  EXPECT_FALSE(PathExists(ws_.Join(".odin/daemon.sock")));
  struct stat st {};
  ASSERT_EQ(stat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(DirName(socket).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string session = NewSession();
  ASSERT_FALSE(session.empty());
  std::vector<v1::SessionEvent> events = SendAll(session, "write a note");
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.front().has_message_started());
  ASSERT_TRUE(events.back().has_message_finished());
  const v1::MessageFinished& done = events.back().message_finished();
  EXPECT_EQ(done.status(), "done") << done.error();
  EXPECT_EQ(done.exit_code(), 0);
  EXPECT_NE(done.report_text().find("notes.txt"), std::string::npos) << done.report_text();
  json result = json::parse(done.result_json());
  EXPECT_EQ(result["changed_files"], json::array({"notes.txt"}));
  EXPECT_EQ(*ReadFileToString(ws_.Join("notes.txt")), "from the daemon\n");
  // Numbered without gaps; the tool call's start and end carry its execution id.
  std::string execution_id;
  for (size_t i = 1; i < events.size(); ++i) EXPECT_EQ(events[i].seq(), events[i - 1].seq() + 1);
  for (const v1::SessionEvent& e : events) {
    EXPECT_EQ(e.session_id(), session);
    if (e.has_tool_call_started()) execution_id = e.tool_call_started().execution_id();
    if (e.has_tool_call_finished()) {
      EXPECT_EQ(e.tool_call_finished().execution_id(), execution_id);
      EXPECT_EQ(e.tool_call_finished().status(), "ok");
      EXPECT_FALSE(e.tool_call_finished().validation().empty()) << "a write's validation is in its event";
    }
  }
  ASSERT_FALSE(execution_id.empty());

  // The ledger through the service.
  v1::ListExecutionsRequest list;
  list.set_session_id(session);
  v1::ListExecutionsResponse executions;
  ASSERT_TRUE(stub_->ListExecutions(Context().get(), list, &executions).ok());
  bool listed = false;
  for (const v1::Execution& e : executions.executions()) listed = listed || e.execution_id() == execution_id;
  EXPECT_TRUE(listed);
  v1::GetExecutionRequest get;
  get.set_execution_id(execution_id);
  v1::Execution execution;
  ASSERT_TRUE(stub_->GetExecution(Context().get(), get, &execution).ok());
  EXPECT_EQ(execution.tool(), "WriteFile");
  EXPECT_EQ(execution.status(), "ok");
  v1::QueryMemoryRequest memory;
  memory.set_session_id(session);
  memory.set_arguments_json(R"({"query":"last_edit"})");
  v1::QueryMemoryResponse answer;
  grpc::Status qs = stub_->QueryMemory(Context().get(), memory, &answer);
  ASSERT_TRUE(qs.ok()) << qs.error_message();
  EXPECT_NE(answer.result_json().find(execution_id), std::string::npos) << answer.result_json();
  v1::ListSessionsResponse sessions;
  ASSERT_TRUE(stub_->ListSessions(Context().get(), {}, &sessions).ok());
  ASSERT_EQ(sessions.sessions_size(), 1);
  EXPECT_EQ(sessions.sessions(0).session_id(), session);
  EXPECT_FALSE(sessions.sessions(0).busy());
  v1::StatusResponse status;
  ASSERT_TRUE(stub_->GetStatus(Context().get(), {}, &status).ok());
  EXPECT_EQ(status.workspace(), ws_.path());
  ASSERT_EQ(status.sessions_size(), 1);
  EXPECT_GT(status.sessions(0).workers_size(), 0);
  EXPECT_GT(status.sessions(0).breakers_size(), 0);
  EXPECT_EQ(status.sessions(0).max_turns(), 0);  // no limit unless asked
  EXPECT_EQ(status.sessions(0).used_llm_calls(), 2);

  // odin -p --connect: the same output as odin -p, through the daemon.
  Ran via_cli = RunOdin(ws_.path(), {"-p", "again", "--connect", address_, "--output-format", "json"}, Env());
  EXPECT_EQ(via_cli.exit_code, 0) << via_cli.err;
  json r = json::parse(via_cli.out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << via_cli.out;
  EXPECT_EQ(r["type"], "result");
  EXPECT_EQ(r["status"], "done");
  EXPECT_EQ(r["result"], "(script exhausted)");
  // odin doctor shows the daemon's status.
  Ran doctor = RunOdin(ws_.path(), {"doctor"}, Env());
  EXPECT_NE(doctor.out.find("daemon     " + address_), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find(session), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("breakers"), std::string::npos) << doctor.out;
}

TEST_F(OdinDaemonTest, SubscribersSeeTheSameEventsAndMessagesQueueInOrder) {
  Serve({{"responses", {Command("echo first"), Text("one"), Command("echo second"), Text("two")}}});
  std::string session = NewSession();
  std::vector<v1::SessionEvent> a, b;
  std::thread ta([&] { a = Follow(session, 0, 2); });
  std::thread tb([&] { b = Follow(session, 0, 2); });
  // Two clients send at once; the second message waits for the first. The
  // second is sent once the first one's stream has begun.
  std::vector<v1::SessionEvent> first, second;
  std::promise<void> first_taken;
  std::thread s1([&] { first = SendAll(session, "message one", [&] { first_taken.set_value(); }); });
  EXPECT_EQ(first_taken.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  std::thread s2([&] { second = SendAll(session, "message two"); });
  s1.join();
  s2.join();
  ta.join();
  tb.join();
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].SerializeAsString(), b[i].SerializeAsString()) << i;
  std::vector<std::string> started;
  for (const v1::SessionEvent& e : a) {
    if (e.has_message_started()) started.push_back(e.message_started().text());
  }
  EXPECT_EQ(started, (std::vector<std::string>{"message one", "message two"}));
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(first.back().message_finished().status(), "done");
  EXPECT_EQ(second.back().message_finished().status(), "done");
  // Each Send streamed its own message only, and the second began after the first ended.
  EXPECT_EQ(first.back().message_finished().text(), "one");
  EXPECT_EQ(second.back().message_finished().text(), "two");
  EXPECT_GT(second.front().seq(), first.back().seq());
}

TEST_F(OdinDaemonTest, AnApprovalRoundTrip) {
  config_ = R"({"permissions":{"ask":["touch"]},"checks":{"build":"","lint":"","tests":""}})";
  Serve({{"responses", {Command("touch approved"), Command("touch refused"), Text("done")}}});
  std::string session = NewSession("prompt");
  v1::SendRequest req;
  req.set_session_id(session);
  req.set_text("make files");
  auto ctx = Context();
  auto reader = stub_->Send(ctx.get(), req);
  std::vector<v1::SessionEvent> events;
  std::vector<std::string> asked;
  v1::SessionEvent e;
  while (reader->Read(&e)) {
    events.push_back(e);
    if (!e.has_approval_requested()) continue;
    const v1::ApprovalRequested& a = e.approval_requested();
    asked.push_back(a.what());
    EXPECT_NE(a.reason().find("ask rule 'touch'"), std::string::npos) << a.reason();
    v1::ApproveRequest answer;
    answer.set_session_id(session);
    answer.set_execution_id(a.execution_id());
    answer.set_answer(asked.size() == 1 ? "once" : "deny");
    v1::ApproveResponse applied;
    ASSERT_TRUE(stub_->Approve(Context().get(), answer, &applied).ok());
    EXPECT_TRUE(applied.applied());
    // Answered: the same request cannot be answered twice.
    ASSERT_TRUE(stub_->Approve(Context().get(), answer, &applied).ok());
    EXPECT_FALSE(applied.applied());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"touch approved", "touch refused"}));
  EXPECT_TRUE(PathExists(ws_.Join("approved")));
  EXPECT_FALSE(PathExists(ws_.Join("refused")));
  // One order whatever the answer: the request, its answer, the gate's
  // record of it, then what the call came to.
  std::vector<std::string> order;
  for (const v1::SessionEvent& ev : events) {
    if (ev.has_approval_requested()) order.push_back("asked");
    if (ev.has_approval_resolved()) order.push_back(ev.approval_resolved().answer());
    if (ev.has_gate_event() && ev.gate_event().kind() == "approval") {
      order.push_back(json::parse(ev.gate_event().detail_json())["approval"]);
    }
    if (ev.has_tool_call_finished()) order.push_back(ev.tool_call_finished().status());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"asked", "once", "allowed once by the user", "ok", "asked", "deny",
                                             "denied by the user", "rejected"}));
  ASSERT_TRUE(events.back().has_message_finished());
  EXPECT_EQ(events.back().message_finished().status(), "done");
}

// The signals a thread blocks (SigBlk in /proc/PID/task/TID/status), or
// nothing if it has ended.
std::optional<uint64_t> BlockedSignals(const std::filesystem::path& task) {
  StatusOr<std::string> status = ReadFileToString(task.string() + "/status");
  if (!status.ok()) return std::nullopt;
  size_t at = status->find("SigBlk:");
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(status->substr(at + 7, status->find('\n', at) - at - 7), nullptr, 16);
}

// SIGTERM is the daemon's to take (a clean shutdown): every thread but the
// one waiting for it blocks it, gRPC's first threads included, so the
// kernel never picks one whose default action would end the daemon unclean.
TEST_F(OdinDaemonTest, NoThreadButTheSignalWaiterCanTakeSigterm) {
  Serve({{"responses", {Text("hi")}}});
  std::string session = NewSession();
  ASSERT_FALSE(SendAll(session, "hello").empty());
  json info = json::parse(*ReadFileToString(ws_.Join(".odin/daemon.json")), nullptr, false);
  int pid = info.value("pid", 0);
  ASSERT_GT(pid, 0);
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    if (task.path().filename() == std::to_string(pid)) continue;  // the main thread, in sigwait
    std::optional<uint64_t> blocked = BlockedSignals(task.path());
    if (!blocked) continue;  // gone meanwhile
    StatusOr<std::string> comm = ReadFileToString(task.path().string() + "/comm");
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      EXPECT_TRUE(*blocked & (uint64_t{1} << (sig - 1)))
          << "thread " << (comm.ok() ? *comm : "?") << " takes signal " << sig;
    }
    ++threads;
  }
  EXPECT_GT(threads, 0);
}

// Ctrl-C on `odin -p --connect` cancels the message in the daemon: only the
// client's signal thread takes SIGINT (gRPC's threads block it, so none of
// them is picked and ended by it, leaving the message running), and the
// client ends with the cancelled message's code.
TEST_F(OdinDaemonTest, CtrlCOnAConnectedPromptCancelsItsMessage) {
  std::string sleeper = "sleep 64." + std::to_string(getpid());
  Serve({{"responses", {Command(sleeper), Text("never")}}});
  int out = -1;
  pid_t client = StartOdin(ws_.path(), {"-p", "wait a minute", "--connect", address_}, &out, Env());
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(30)))
      << "the command never ran";
  int takers = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(client) + "/task")) {
    std::optional<uint64_t> blocked = BlockedSignals(task.path());
    if (!blocked) continue;
    if (!(*blocked & (uint64_t{1} << (SIGINT - 1)))) ++takers;  // the one in sigwait
  }
  EXPECT_EQ(takers, 1) << "threads of the client that SIGINT could be given to";
  kill(client, SIGINT);
  EXPECT_EQ(Wait(client), 130);
  close(out);
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArg(sleeper).empty(); })) << "the message ran on";
}

TEST_F(OdinDaemonTest, CancelStopsTheRunningMessage) {
  Serve({{"responses", {Command("sleep 60"), Text("never")}}});
  std::string session = NewSession();
  v1::SendRequest req;
  req.set_session_id(session);
  req.set_text("wait a minute");
  auto ctx = Context();
  auto reader = stub_->Send(ctx.get(), req);
  v1::SessionEvent e;
  std::vector<v1::SessionEvent> events;
  while (reader->Read(&e)) {
    events.push_back(e);
    if (e.has_tool_call_started()) {
      // Cancelled once the command is running.
      EXPECT_TRUE(WaitUntil([] { return !ProcessesWithArg("sleep 60").empty(); }));
      v1::CancelRequest cancel;
      cancel.set_session_id(session);
      v1::CancelResponse reply;
      ASSERT_TRUE(stub_->Cancel(Context().get(), cancel, &reply).ok());
      EXPECT_TRUE(reply.cancelled());
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(events.back().has_message_finished());
  EXPECT_EQ(events.back().message_finished().status(), "cancelled");
  EXPECT_EQ(events.back().message_finished().exit_code(), 130);
  bool command_cancelled = false;
  for (const v1::SessionEvent& ev : events) {
    command_cancelled =
        command_cancelled || (ev.has_tool_call_finished() && ev.tool_call_finished().status() == "cancelled");
  }
  EXPECT_TRUE(command_cancelled);
  // Nothing runs now: a second cancel has nothing to stop.
  v1::CancelRequest cancel;
  cancel.set_session_id(session);
  v1::CancelResponse reply;
  ASSERT_TRUE(stub_->Cancel(Context().get(), cancel, &reply).ok());
  EXPECT_FALSE(reply.cancelled());
}

TEST_F(OdinDaemonTest, AClientThatDisconnectsCanReattachAndTheSessionGoesOn) {
  Serve({{"responses", {Command("sleep 1; echo hi > after.txt"), Text("finished without you")}}});
  std::string session = NewSession();
  uint64_t last_seen = 0;
  {
    v1::SendRequest req;
    req.set_session_id(session);
    req.set_text("work while I am away");
    auto ctx = Context();
    auto reader = stub_->Send(ctx.get(), req);
    v1::SessionEvent e;
    while (reader->Read(&e)) {
      last_seen = e.seq();
      if (e.has_tool_call_started()) break;
    }
    ctx->TryCancel();  // the client goes away mid-stream
    reader->Finish();
  }
  ASSERT_GT(last_seen, 0u);
  // Back again: the events it missed, from where it left off, without gaps.
  std::vector<v1::SessionEvent> rest = Follow(session, last_seen);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front().seq(), last_seen + 1);
  ASSERT_TRUE(rest.back().has_message_finished());
  EXPECT_EQ(rest.back().message_finished().status(), "done");
  EXPECT_EQ(rest.back().message_finished().text(), "finished without you");
  EXPECT_EQ(*ReadFileToString(ws_.Join("after.txt")), "hi\n");
}

TEST_F(OdinDaemonTest, OdinAttachIsATerminalClientOfASession) {
  config_ = R"({"permissions":{"ask":["touch"]},"checks":{"build":"","lint":"","tests":""}})";
  Serve({{"responses", {Command("touch from-attach"), Text("attached and done")}}});
  std::string session = NewSession("prompt");
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {"attach", session}, &in, &out, Env());
  auto say = [in](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  EXPECT_NE(ReadUntil(out, "attached to session " + session).find(session), std::string::npos);
  say("make a file");
  std::string seen = ReadUntil(out, "Allow?");
  EXPECT_NE(seen.find("[edit] make a file"), std::string::npos) << seen;
  EXPECT_NE(seen.find("approval needed: `touch from-attach`"), std::string::npos) << seen;
  say("y");
  seen = ReadUntil(out, "Status: done");
  EXPECT_NE(seen.find("attached and done"), std::string::npos) << seen;
  close(in);  // detaches; the session stays
  ReadUntil(out, "\x04");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_TRUE(PathExists(ws_.Join("from-attach")));
  v1::ListSessionsResponse sessions;
  ASSERT_TRUE(stub_->ListSessions(Context().get(), {}, &sessions).ok());
  ASSERT_EQ(sessions.sessions_size(), 1);
  EXPECT_TRUE(sessions.sessions(0).alive());
}

// Beyond loopback the token would cross the network: TLS is required, with
// the certificate and key of the user's config.
TEST_F(OdinDaemonTest, BeyondLoopbackTlsIsRequired) {
  llm_ = std::make_unique<FakeLlm>(json({{"responses", {Text("hello")}}}).dump());
  Put("odinconfig.json", R"({"checks":{"build":"","lint":"","tests":""}})");
  Ran plain = RunOdin(ws_.path(), {"serve", "--listen", "0.0.0.0:0"}, Env());
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.err.find("0.0.0.0:0 listens beyond loopback: it needs TLS (set serve.tls_cert"), std::string::npos)
      << plain.err;
  EXPECT_FALSE(PathExists(ws_.Join(".odin/daemon.json"))) << "it must not have listened";
  // A name that starts like a loopback address is a name: it may resolve anywhere.
  for (const char* listen : {"127.evil.example:0", "[::ffff:10.0.0.1]:0", "127.0.0.1.nip.io:0"}) {
    Ran named = RunOdin(ws_.path(), {"serve", "--listen", listen}, Env());
    EXPECT_NE(named.exit_code, 0) << listen;
    EXPECT_NE(named.err.find("listens beyond loopback: it needs TLS"), std::string::npos)
        << listen << ": " << named.err;
  }
}

TEST_F(OdinDaemonTest, BeyondLoopbackClientsSpeakTlsAndVerifyTheDaemon) {
  // A self-signed certificate for 127.0.0.1, in the user's config.
  TempWorkspace tls;
  std::string cert = tls.Join("tls.crt"), key = tls.Join("tls.key");
  SpawnOptions o;
  o.argv = {"/usr/bin/openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=odin",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            key,
            "-out",
            cert};
  StatusOr<CommandOutput> made = RunCommand(o);
  if (!made.ok() || made->exit_code != 0) GTEST_SKIP() << "skipped: openssl cannot make a test certificate";
  std::string config = UserDir("XDG_CONFIG_HOME") + "/odin/odinconfig.json";
  ASSERT_TRUE(MakeDirs(UserDir("XDG_CONFIG_HOME") + "/odin").ok());
  ASSERT_TRUE(WriteFileAtomic(config, json({{"serve", {{"tls_cert", cert}, {"tls_key", key}}}}).dump()).ok());
  Serve({{"responses", {Text("hello over tls")}}}, {"--listen", "0.0.0.0:0"});
  std::string port = address_.substr(address_.rfind(':') + 1);
  // With the daemon's CA the CLI verifies it and talks.
  std::map<std::string, std::string> env = Env();
  env["ODIN_TLS_CA"] = cert;
  Ran ok = RunOdin(ws_.path(), {"-p", "hi", "--connect", "127.0.0.1:" + port}, env);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("hello over tls"), std::string::npos) << ok.out;
  // In plaintext, or trusting another CA, it gets nowhere.
  Ran plain = RunOdin(ws_.path(), {"-p", "hi", "--connect", "127.0.0.1:" + port}, Env());
  EXPECT_NE(plain.exit_code, 0);
  env["ODIN_TLS_CA"] = "/etc/ssl/certs/ca-certificates.crt";
  Ran other = RunOdin(ws_.path(), {"-p", "hi", "--connect", "127.0.0.1:" + port}, env);
  EXPECT_NE(other.exit_code, 0);
  // A plaintext gRPC client is refused too.
  v1::ListSessionsResponse sessions;
  token_ = *ReadFileToString(ws_.Join(".odin/daemon.token"));
  while (!token_.empty() && token_.back() == '\n') token_.pop_back();
  auto insecure =
      v1::CoordinatorService::NewStub(grpc::CreateChannel("127.0.0.1:" + port, grpc::InsecureChannelCredentials()));
  auto ctx = Context();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  EXPECT_FALSE(insecure->ListSessions(ctx.get(), {}, &sessions).ok());
  unlink(config.c_str());
}

// A workflow named by the client reaches the session: --workflow over
// --connect, and a bad name is refused.
TEST_F(OdinDaemonTest, TheClientsWorkflowIsTheSessions) {
  Serve({{"responses", {Text("answered")}}});
  v1::CreateSessionRequest bad;
  bad.set_workflow("yolo");
  v1::SessionInfo info;
  grpc::Status refused = stub_->CreateSession(Context().get(), bad, &info);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("workflow 'yolo'"), std::string::npos) << refused.error_message();
  Ran ran = RunOdin(ws_.path(), {"-p", "what is this?", "--connect", address_, "--workflow", "question"}, Env());
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  bool told = false;
  for (const std::string& line : llm_->LogLines())
    told = told || line.find("question: answer only") != std::string::npos;
  EXPECT_TRUE(told) << "the model was not given the question workflow's rules";
}

// grpcurl's and a Kubernetes probe's way in: the standard health service
// (open) and server reflection (behind the token, as every call), driven by
// npm's generic clients, which know no .proto of Odin's.
TEST_F(OdinDaemonTest, GenericClientsUseHealthAndReflection) {
  std::string modules = BinDir() + "/../lsp/node_modules";
  if (!PathExists(modules + "/grpc-js-reflection-client") || !PathExists(modules + "/grpc-health-check")) {
    GTEST_SKIP() << "the generic gRPC clients are not installed (scripts/install-language-servers.sh installs them)";
  }
  Serve({{"responses", {Text("hello")}}}, {"--listen", "127.0.0.1:0"});
  std::string token = *ReadFileToString(ws_.Join(".odin/daemon.token"));
  while (!token.empty() && token.back() == '\n') token.pop_back();
  std::string output;
  json seen = json::parse(RunClientScript({"node", std::string(ODIN_SOURCE_DIR) + "/tests/grpc/generic_client.mjs",
                                           modules, address_, token},
                                          {}, &output),
                          nullptr, false);
  ASSERT_TRUE(seen.is_object()) << output;
  EXPECT_EQ(seen["health"]["ok"], "SERVING") << seen["health"];
  // Reflection without the token (or with a wrong one) learns nothing.
  EXPECT_FALSE(seen["servicesWithoutToken"].contains("ok")) << seen["servicesWithoutToken"];
  EXPECT_FALSE(seen["servicesWrongToken"].contains("ok")) << seen["servicesWrongToken"];
  ASSERT_TRUE(seen["services"].contains("ok")) << seen["services"];
  std::vector<std::string> services = seen["services"]["ok"];
  EXPECT_TRUE(std::count(services.begin(), services.end(), "odin.v1.CoordinatorService")) << seen["services"];
  EXPECT_TRUE(std::count(services.begin(), services.end(), "grpc.health.v1.Health")) << seen["services"];
  // A call built from reflection's descriptors works, and needs the token.
  EXPECT_TRUE(seen["listSessions"].contains("ok")) << seen.dump();
  EXPECT_EQ(seen["listSessionsWithoutToken"]["code"], static_cast<int>(grpc::StatusCode::UNAUTHENTICATED))
      << seen["listSessionsWithoutToken"];
}

TEST_F(OdinDaemonTest, OverTcpATokenIsRequired) {
  Serve({{"responses", {Text("hello")}}}, {"--listen", "127.0.0.1:0"});
  ASSERT_EQ(address_.rfind("127.0.0.1:", 0), 0u) << address_;
  EXPECT_NE(address_, "127.0.0.1:0");
  // The generated token is the owner's alone.
  struct stat st {};
  ASSERT_EQ(stat(ws_.Join(".odin/daemon.token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  v1::ListSessionsResponse sessions;
  grpc::Status none = stub_->ListSessions(Context().get(), {}, &sessions);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  token_ = "not-the-token";
  v1::SessionInfo info;
  grpc::Status wrong = stub_->CreateSession(Context().get(), {}, &info);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  token_ = *ReadFileToString(ws_.Join(".odin/daemon.token"));
  while (!token_.empty() && token_.back() == '\n') token_.pop_back();
  ASSERT_TRUE(stub_->ListSessions(Context().get(), {}, &sessions).ok());
  // The CLI finds the token beside the daemon's address.
  Ran cli = RunOdin(ws_.path(), {"-p", "hi", "--connect", address_}, Env());
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("hello"), std::string::npos) << cli.out;
}

TEST_F(OdinDaemonTest, BadInputGetsClearErrors) {
  Serve({{"responses", {Text("fine")}}});
  v1::SendRequest send;
  send.set_session_id("ses_nope");
  send.set_text("x");
  auto ctx = Context();
  auto reader = stub_->Send(ctx.get(), send);
  v1::SessionEvent e;
  EXPECT_FALSE(reader->Read(&e));
  grpc::Status unknown = reader->Finish();
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(unknown.error_message().find("no session 'ses_nope'"), std::string::npos) << unknown.error_message();

  v1::CreateSessionRequest bad_mode;
  bad_mode.set_mode("yolo");
  v1::SessionInfo info;
  grpc::Status m = stub_->CreateSession(Context().get(), bad_mode, &info);
  EXPECT_EQ(m.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(m.error_message().find("mode 'yolo'"), std::string::npos);
  std::string session = NewSession();
  send.set_session_id(session);
  send.set_text("");
  auto ctx2 = Context();
  auto empty = stub_->Send(ctx2.get(), send);
  EXPECT_FALSE(empty->Read(&e));
  EXPECT_EQ(empty->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::ApproveRequest approve;
  approve.set_session_id(session);
  approve.set_execution_id("ex_1");
  approve.set_answer("maybe");
  v1::ApproveResponse applied;
  EXPECT_EQ(stub_->Approve(Context().get(), approve, &applied).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::GetExecutionRequest get;
  get.set_execution_id("ex_nope");
  v1::Execution execution;
  EXPECT_EQ(stub_->GetExecution(Context().get(), get, &execution).error_code(), grpc::StatusCode::NOT_FOUND);
  // An unknown session's executions are NOT_FOUND, as its memory is.
  v1::ListExecutionsRequest list;
  list.set_session_id("ses_nope");
  v1::ListExecutionsResponse executions;
  grpc::Status listed = stub_->ListExecutions(Context().get(), list, &executions);
  EXPECT_EQ(listed.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(listed.error_message().find("no session 'ses_nope'"), std::string::npos) << listed.error_message();
  v1::QueryMemoryRequest memory;
  memory.set_session_id("ses_nope");
  v1::QueryMemoryResponse remembered;
  EXPECT_EQ(stub_->QueryMemory(Context().get(), memory, &remembered).error_code(), grpc::StatusCode::NOT_FOUND);
  // Subscribing past the last event is answered at once, not waited on.
  v1::SubscribeRequest past;
  past.set_session_id(session);
  past.set_after_seq(1000000);
  auto ctx3 = Context();
  auto beyond = stub_->Subscribe(ctx3.get(), past);
  EXPECT_FALSE(beyond->Read(&e));
  grpc::Status out_of_range = beyond->Finish();
  EXPECT_EQ(out_of_range.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(out_of_range.error_message().find("past the session's last event"), std::string::npos)
      << out_of_range.error_message();

  // A second daemon on the workspace is refused, naming the first one's socket.
  Ran second = RunOdin(ws_.path(), {"serve"}, Env());
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("a daemon already serves"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find(address_), std::string::npos) << second.err;
  // After all that, the daemon still works.
  std::vector<v1::SessionEvent> events = SendAll(session, "still there?");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().message_finished().status(), "done");
}

// ---- who may connect (finding 5) -------------------------------------------------

bool BwrapWorks() {
  static const bool works = system("bwrap --ro-bind / / --unshare-pid --unshare-net true >/dev/null 2>&1") == 0;
  return works;
}

size_t SessionCount(v1::CoordinatorService::Stub& stub) {
  grpc::ClientContext ctx;
  v1::ListSessionsResponse sessions;
  EXPECT_TRUE(stub.ListSessions(&ctx, {}, &sessions).ok());
  return static_cast<size_t>(sessions.sessions_size());
}

TEST_F(OdinDaemonTest, WithoutARuntimeDirectoryTheSocketIsInTheStateDirectory) {
  daemon_env_ = {{"XDG_RUNTIME_DIR", ""}};
  Serve({{"responses", {Text("hello")}}});
  EXPECT_EQ(address_.rfind("unix:" + UserDir("XDG_STATE_HOME") + "/odin/run/", 0), 0u) << address_;
  Ran cli = RunOdin(ws_.path(), {"-p", "hi", "--connect", address_}, Env());
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  // Clients find it through daemon.json, as before.
  Ran doctor = RunOdin(ws_.path(), {"doctor"}, Env());
  EXPECT_NE(doctor.out.find("daemon     " + address_), std::string::npos) << doctor.out;
}

// The review's finding: a command run by odin exec --mode ask drove the
// daemon into an edit-mode session with approval allow.
TEST_F(OdinDaemonTest, ASandboxedCommandCannotDriveTheDaemon) {
  if (!BwrapWorks()) GTEST_SKIP() << "bubblewrap cannot create namespaces here: commands would not be sandboxed";
  Serve({{"responses", {Command("touch pwned"), Text("done")}}});
  std::vector<std::string> exploit = {BinDir() + "/odin", "-p",   "go",         "--connect", address_,
                                      "--mode",           "edit", "--approval", "allow"};
  std::vector<std::string> args = {"exec", "--mode", "ask", "--"};
  args.insert(args.end(), exploit.begin(), exploit.end());
  Ran r = RunOdin(ws_.path(), args, Env());
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(SessionCount(*stub_), 0u);
  EXPECT_FALSE(PathExists(ws_.Join("pwned")));
}

// Even a socket the sandbox can see (one the user put in the workspace) is no
// way in: the client runs in the sandbox's namespaces and is refused by them.
TEST_F(OdinDaemonTest, AClientInsideASandboxIsRefusedEvenWhereItSeesTheSocket) {
  if (!BwrapWorks()) GTEST_SKIP() << "bubblewrap cannot create namespaces here: commands would not be sandboxed";
  Serve({{"responses", {Command("touch pwned"), Text("done")}}}, {"--listen", "unix:" + ws_.Join("visible.sock")});
  ASSERT_EQ(address_, "unix:" + ws_.Join("visible.sock"));
  Ran r = RunOdin(ws_.path(),
                  {"exec", "--mode", "ask", "--", BinDir() + "/odin", "-p", "go", "--connect", address_, "--mode",
                   "edit", "--approval", "allow"},
                  Env());
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("connection refused"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("namespace"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(SessionCount(*stub_), 0u);
  EXPECT_FALSE(PathExists(ws_.Join("pwned")));
}

// Without namespaces (the fallback, chosen) a command shares the daemon's uid
// and namespaces and can reach its socket: the seccomp filter and
// no_new_privs every sandboxed command carries give it away.
TEST_F(OdinDaemonTest, ACommandOfTheFallbackWithoutNamespacesIsRefused) {
  Serve({{"responses", {Command("touch pwned"), Text("done")}}});
  Ran r = RunOdin(ws_.path(),
                  {"--sandbox", "fallback", "exec", "--", BinDir() + "/odin", "-p", "go", "--connect", address_,
                   "--mode", "edit", "--approval", "allow"},
                  [&] {
                    std::map<std::string, std::string> env = Env();
                    // bubblewrap unusable: the fallback runs the command.
                    env["PATH"] = "/nonexistent";
                    return env;
                  }());
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("a sandboxed command"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(SessionCount(*stub_), 0u);
  EXPECT_FALSE(PathExists(ws_.Join("pwned")));
}

TEST_F(OdinDaemonTest, AClientOfAnotherUserIsRefusedWithAClearError) {
  if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
    GTEST_SKIP() << "running a client as another uid needs root and setpriv";
  }
  // A socket another user could reach (its mode stops no one who is root,
  // and here it is opened up on purpose): the daemon's own check is what
  // refuses the client.
  std::string open_dir = *MakeTempDir("odin-open-sock");
  chmod(open_dir.c_str(), 0755);
  Serve({{"responses", {Text("never")}}}, {"--listen", "unix:" + open_dir + "/d.sock"});
  ASSERT_EQ(chmod((open_dir + "/d.sock").c_str(), 0666), 0);
  // The client (odin, and the odin-rpc it hands over to) must be reachable
  // for that user: not from a clone under a private directory.
  for (std::string dir = BinDir(); dir.size() > 1; dir = dir.substr(0, dir.rfind('/'))) {
    struct stat st;
    if (stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      RemoveTree(open_dir);
      GTEST_SKIP() << dir << " is not reachable for uid 65534, so no client can run as that user here";
    }
  }
  Ran probe =
      RunOdinWrapped({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, "/", {"--version"});
  if (probe.exit_code != 0) {
    RemoveTree(open_dir);
    GTEST_SKIP() << "cannot run odin as uid 65534 here: " << probe.err;
  }
  Ran r = RunOdinWrapped({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, "/",
                         {"-p", "go", "--connect", address_, "--mode", "edit", "--approval", "allow"}, Env());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("connection refused: this daemon serves only its own user's processes"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("uid 65534"), std::string::npos) << r.err;
  EXPECT_EQ(SessionCount(*stub_), 0u);
  // The daemon's own user still gets in.
  Ran mine = RunOdin(ws_.path(), {"-p", "hi", "--connect", address_}, Env());
  EXPECT_EQ(mine.exit_code, 0) << mine.err;
  RemoveTree(open_dir);
}

TEST_F(OdinDaemonTest, AClientInAnotherPidNamespaceIsRefused) {
  if (system("unshare --pid --fork true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "cannot create a pid namespace here (unshare --pid)";
  }
  Serve({{"responses", {Text("never")}}});
  Ran r =
      RunOdinWrapped({"/usr/bin/unshare", "--pid", "--fork"}, ws_.path(), {"-p", "go", "--connect", address_}, Env());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("runs in another pid namespace"), std::string::npos) << r.err;
  EXPECT_EQ(SessionCount(*stub_), 0u);
  // Nor do generic clients learn anything there: the server that refuses
  // them offers no reflection or health (libgrpc++_reflection registers its
  // plugin for every server of the process).
  std::string modules = BinDir() + "/../lsp/node_modules";
  if (!PathExists(modules + "/grpc-js-reflection-client")) return;
  std::string output;
  json seen = json::parse(
      RunClientScript({"/usr/bin/unshare", "--pid", "--fork", "node",
                       std::string(ODIN_SOURCE_DIR) + "/tests/grpc/generic_client.mjs", modules, address_, ""},
                      {}, &output),
      nullptr, false);
  ASSERT_TRUE(seen.is_object()) << output;
  EXPECT_FALSE(seen["health"].contains("ok")) << seen["health"];
  EXPECT_FALSE(seen["services"].contains("ok")) << seen["services"];
}

}  // namespace
}  // namespace odin::testing
