#include "coordinator/coordinator.h"

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "tests/coordinator_fixture.h"
#include "sandbox/workspace_overlay.h"
#include "tests/ledger_rows.h"

namespace odin {
namespace {

// The coordinator with a real ledger (in a temporary directory) and fake
// workers: checks what is recorded, and when.
class CoordinatorTest : public testing::CoordinatorFixture {
 protected:
  void SetUp() override {
    CoordinatorOptions o;
    o.mode = CallMode::kEdit;
    o.artifact_cap_bytes = 10;
    o.pool.size = 1;
    o.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    worker_id_ = coord_->pool().workers()[0].id;
    Hello(worker_id_);
  }

  // The one worker says e.
  using CoordinatorFixture::Say;
  void Say(const v1::Envelope& e) { Say(worker_id_, e); }
  void SayOutput(const std::string& id, const std::string& data) {
    v1::Envelope e = Env();
    e.mutable_tool_progress()->set_execution_id(id);
    e.mutable_tool_progress()->mutable_output()->set_data(data);
    Say(e);
  }
  void SayResult(const std::string& id, const std::string& head, const std::string& tail, uint64_t total) {
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(v1::TOOL_STATUS_OK);
    r->set_has_exit_code(true);
    r->set_output_head(head);
    r->set_output_tail(tail);
    r->set_output_total_bytes(total);
    Say(e);
  }
  std::string Submit(const std::string& args, const std::string& tool = "ExecuteCommand",
                     const std::string& mode = "") {
    ToolCall call;
    call.tool = tool;
    call.arguments_json = args;
    call.mode = ParseCallMode(mode);
    return SubmitCall(call);
  }

  // A worker's answer to a Read of path: the whole file, as on disk.
  void SayRead(const std::string& id, const std::string& path) {
    std::string content = *ReadFileToString(path);
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(v1::TOOL_STATUS_OK);
    v1::FileSnapshot* s = r->add_files_read();
    s->set_path(path);
    s->set_sha256(Sha256Hex(content));
    s->set_size_bytes(content.size());
    s->set_total_lines(1);
    s->set_full(true);
    s->set_content(content);
    Say(e);
  }
  int Requests() { return transport_.Count(worker_id_, v1::Envelope::kToolRequest); }
  // The coordinator again, as an agent's session has it (odin exec's, the
  // default, looks at the tree no sooner than it must).
  void StartAgentSession() {
    CoordinatorOptions o;
    o.session_kind = "run";
    o.mode = CallMode::kEdit;
    o.pool.size = 1;
    o.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    worker_id_ = coord_->pool().workers()[0].id;
    Hello(worker_id_);
  }

  // dirs directories d0, d1, ..., each of files files f0, f1, ...: a tree
  // that takes the first look a while.
  void MakeFiles(int dirs, int files) {
    for (int d = 0; d < dirs; ++d) {
      std::string dir = ws_ + "/d" + std::to_string(d);
      ASSERT_TRUE(MakeDirs(dir).ok());
      for (int f = 0; f < files; ++f) std::ofstream(dir + "/f" + std::to_string(f)) << "x";
    }
  }

  std::string worker_id_;
};

TEST_F(CoordinatorTest, StartIsRecordedBeforeTheWorkerRunsAndEndAfter) {
  std::string id = Submit(R"({"argv": ["true"]})");
  ASSERT_EQ(transport_.Count(worker_id_, v1::Envelope::kToolRequest), 1);
  auto row = ledger_->FindExecution(id);
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->end.has_value());
  EXPECT_EQ(row->start.worker_id, worker_id_);
  EXPECT_EQ(row->start.args_json, R"({"argv":["true"]})");  // canonical

  SayResult(id, "", "", 0);
  row = ledger_->FindExecution(id);
  ASSERT_TRUE(row->end.has_value());
  EXPECT_EQ(row->end->status, "ok");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_TRUE(recorded_[0].ok());
}

TEST_F(CoordinatorTest, FullOutputBecomesAnArtifactOnlyWhenHeadAndTailLeaveSomethingOut) {
  std::string whole = Submit(R"({"argv":["a"]})");
  SayOutput(whole, "abcd");
  SayResult(whole, "abcd", "", 4);
  EXPECT_TRUE(ledger_->ListArtifacts(whole)->empty());

  std::string cut = Submit(R"({"argv":["b"]})");
  SayOutput(cut, "0123456789");
  SayOutput(cut, "ABCDEFGHIJ");
  SayResult(cut, "01", "IJ", 20);
  auto artifacts = ledger_->ListArtifacts(cut);
  ASSERT_EQ(artifacts->size(), 1u);
  EXPECT_EQ((*artifacts)[0].content, "0123456789");  // capped at artifact_cap_bytes
  EXPECT_EQ((*artifacts)[0].size, 20);
  EXPECT_TRUE((*artifacts)[0].truncated);
}

TEST_F(CoordinatorTest, MalformedArgumentsAreRejectedAndRecordedWithoutAWorker) {
  std::string id = Submit("{not json");
  EXPECT_EQ(transport_.Count(worker_id_, v1::Envelope::kToolRequest), 0);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  auto row = ledger_->FindExecution(id);
  ASSERT_TRUE(row.ok());
  ASSERT_TRUE(row->end.has_value());
  EXPECT_EQ(row->end->status, "rejected");
  EXPECT_EQ(row->start.worker_id, "");
}

TEST_F(CoordinatorTest, CallCancelledInTheQueueIsRecordedToo) {
  std::string busy = Submit(R"({"argv":["a"]})");
  std::string queued = Submit(R"({"argv":["b"]})");
  coord_->Cancel(queued);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_CANCELLED);
  auto row = ledger_->FindExecution(queued);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->end->status, "cancelled");
  EXPECT_EQ(row->start.tool, "ExecuteCommand");
  EXPECT_TRUE(ledger_->Verify()->ok);
  (void)busy;
}

TEST_F(CoordinatorTest, ModeGateRefusalIsARecordedRejection) {
  std::string id = Submit(R"({"file_path":"a.txt","content":"x"})", "WriteFile", "ask");
  EXPECT_EQ(Requests(), 0);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_[0].error().message().find("not available in ask mode"), std::string::npos);
  EXPECT_EQ(ledger_->FindExecution(id)->end->status, "rejected");
  EXPECT_EQ(ledger_->FindExecution(id)->start.mode, "ask");
}

// exec mode skips the mode gate (odin exec's own command); Odin's own calls
// are refused all the same, before any worker sees them.
TEST_F(CoordinatorTest, OdinsOwnCallsAreRefusedWhoeverNamesThemInAnyMode) {
  for (const char* internal : {"Hook", "IndexParse", "lsp_references", "McpListTools"}) {
    for (const char* mode : {"exec", "edit"}) {
      results_.clear();
      std::string id = Submit(R"({"command":"touch made","input":"{}","paths":["a.c"]})", internal, mode);
      ASSERT_EQ(results_.size(), 1u) << internal << " " << mode;
      EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED) << internal << " " << mode;
      EXPECT_EQ(ledger_->FindExecution(id)->end->status, "rejected");
    }
  }
  EXPECT_EQ(Requests(), 0);
}

TEST_F(CoordinatorTest, EditWithoutReadIsRejectedAndAfterReadIsSentWithTheHash) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "hello\n").ok());
  Submit(R"({"file_path":"a.txt","old_string":"hello","new_string":"bye"})", "EditTool");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_EQ(Requests(), 0);

  std::string read = Submit(R"({"file_path":"a.txt"})", "Read");
  SayRead(read, ws_ + "/a.txt");
  Submit(R"({"file_path":"a.txt","old_string":"hello","new_string":"bye"})", "EditTool");
  ASSERT_EQ(Requests(), 2);
  const v1::ToolRequest& req = transport_.sent.back().second.tool_request();
  EXPECT_EQ(req.tool(), "EditTool");
  EXPECT_EQ(req.expect().sha256(), Sha256Hex("hello\n"));
  EXPECT_TRUE(req.expect().full_read());
}

TEST_F(CoordinatorTest, WritesToOneFileTakeTurns) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "one two\n").ok());
  std::string read = Submit(R"({"file_path":"a.txt"})", "Read");
  SayRead(read, ws_ + "/a.txt");
  std::string first = Submit(R"({"file_path":"a.txt","old_string":"one","new_string":"1"})", "EditTool");
  std::string second = Submit(R"({"file_path":"a.txt","old_string":"two","new_string":"2"})", "EditTool");
  // Only the first is out; the second waits for its turn on the file.
  EXPECT_EQ(Requests(), 2);  // the Read, then the first edit
  EXPECT_EQ(transport_.sent.back().second.tool_request().execution_id(), first);
  v1::Envelope done = Env();
  v1::ToolResult* r = done.mutable_tool_result();
  r->set_execution_id(first);
  r->set_status(v1::TOOL_STATUS_OK);
  v1::FileSnapshot* w = r->mutable_file_written();
  w->set_path(ws_ + "/a.txt");
  w->set_sha256(Sha256Hex("1 two\n"));
  w->set_full(true);
  w->set_content("1 two\n");
  r->set_diff("--- a/a.txt\n");
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "1 two\n").ok());  // what the worker did
  Say(done);
  ASSERT_EQ(Requests(), 3);
  const v1::ToolRequest& next = transport_.sent.back().second.tool_request();
  EXPECT_EQ(next.execution_id(), second);
  // It is checked against the file as the first edit left it.
  EXPECT_EQ(next.expect().sha256(), Sha256Hex("1 two\n"));
  auto artifacts = ledger_->ListArtifacts(first);
  ASSERT_EQ(artifacts->size(), 2u);
  EXPECT_EQ((*artifacts)[0].kind, "diff");
  EXPECT_EQ((*artifacts)[1].kind, "content_hashes");
}

TEST_F(CoordinatorTest, TodoWriteRunsHereAndIsRecorded) {
  std::string id = Submit(R"({"todos":[{"id":"1","content":"read","status":"completed"},
                                       {"id":"2","content":"edit","status":"in_progress"}]})",
                          "TodoWrite");
  EXPECT_EQ(Requests(), 0);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_OK);
  EXPECT_EQ(coord_->Todos("main").items().size(), 2u);
  EXPECT_NE(results_[0].output_head().find("[>] 2. edit"), std::string::npos);
  EXPECT_EQ(ledger_->FindExecution(id)->end->status, "ok");
  Submit(R"({"todos":[{"id":"1","content":"x","status":"bogus"}]})", "TodoWrite");
  EXPECT_EQ(results_[1].status(), v1::TOOL_STATUS_ERROR);
  EXPECT_EQ(coord_->Todos("main").items().size(), 2u);  // unchanged
}

TEST_F(CoordinatorTest, ResumedSessionRebuildsTheCacheAndTodosFromTheLedger) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "hello\n").ok());
  std::string read = Submit(R"({"file_path":"a.txt"})", "Read");
  SayRead(read, ws_ + "/a.txt");
  Submit(R"({"todos":[{"id":"1","content":"t","status":"pending"}]})", "TodoWrite");
  std::string session = coord_->session_id();

  // A new coordinator (a later `odin tool --session`) over the same ledger.
  CoordinatorOptions o;
  o.workspace = ws_;
  o.mode = CallMode::kEdit;
  o.pool.size = 1;
  o.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
  testing::FakeLauncher launcher;
  testing::FakeTransport transport;
  Coordinator again(o, &clock_, &launcher, &transport);
  ASSERT_TRUE(again.StartWorkers().ok());
  ASSERT_TRUE(again.ResumeSession(ledger_.get(), session).ok());
  EXPECT_EQ(again.session_id(), session);
  auto cached = again.CachedFiles("main");
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(cached[0].path, ws_ + "/a.txt");
  EXPECT_TRUE(cached[0].full);
  EXPECT_EQ(again.Todos("main").items().size(), 1u);
  EXPECT_EQ(again.ResumeSession(ledger_.get(), "ses_nope").code(), StatusCode::kNotFound);
}

// The tree's first look runs on a thread of its own while the model thinks
// (ModelRequestStarted, in edit mode). A write waits for it, so the look
// never takes the write's file for the tree as it was, to be found later
// as a change outside Odin; a read made meanwhile still gives a command's
// later change of that file its bytes before.
TEST_F(CoordinatorTest, WritesWaitForTheFirstLookInTheBackgroundAndReadsAreNotLost) {
  ASSERT_NO_FATAL_FAILURE(StartAgentSession());
  // A tree that takes the look a while: the root's entries are looked at
  // first, then 2,000 files below.
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "one\n").ok());
  ASSERT_NO_FATAL_FAILURE(MakeFiles(20, 100));
  coord_->ModelRequestStarted(Mode::kEdit);
  ASSERT_TRUE(coord_->Poll(std::chrono::milliseconds(1)).ok());  // a wait: the look starts
  std::string read = Submit(R"({"file_path":"a.txt"})", "Read");
  SayRead(read, ws_ + "/a.txt");
  // The worker writes b.txt a moment after it is asked to: were the write
  // not to wait, the look would by then have passed the root (and be
  // below it), and later find b.txt as made outside Odin.
  std::string write = Submit(R"({"file_path":"b.txt","content":"two\n"})", "WriteFile");
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/b.txt", "two\n").ok());
  v1::Envelope e = Env();
  v1::ToolResult* r = e.mutable_tool_result();
  r->set_execution_id(write);
  r->set_status(v1::TOOL_STATUS_OK);
  r->mutable_file_written()->set_path(ws_ + "/b.txt");
  r->mutable_file_written()->set_sha256(Sha256Hex("two\n"));
  r->mutable_file_written()->set_size_bytes(4);
  r->mutable_file_written()->set_content("two\n");
  Say(e);
  // A command changes a.txt; its next look finds nothing else changed.
  std::string command = Submit(R"({"argv": ["sh", "-c", "echo three > a.txt"]})");
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "three\n").ok());
  SayResult(command, "", "", 0);
  ASSERT_EQ(results_.size(), 3u);
  std::vector<std::string> rows = testing::LedgerRows(
      dir_ + "/odin.db",
      "SELECT source || ' ' || substr(path, length(?) + 2) || ' ' || undoable FROM mutations ORDER BY path", ws_);
  EXPECT_EQ(rows, std::vector<std::string>({"command a.txt 1", "file_tool b.txt 1"}));
}

// InitTool's write of ODIN.md is made here, on the coordinator's side,
// meeting no writers' lane: it still waits for a first look under way, so
// the file is the tool's change and not one made outside Odin.
TEST_F(CoordinatorTest, AWriteMadeByTheCoordinatorDuringTheBackgroundLookIsNotExternal) {
  ASSERT_NO_FATAL_FAILURE(StartAgentSession());
  coord_->set_init_active(true);  // /init
  ASSERT_NO_FATAL_FAILURE(MakeFiles(20, 100));
  coord_->ModelRequestStarted(Mode::kEdit);
  ASSERT_TRUE(coord_->Poll(std::chrono::milliseconds(1)).ok());  // a wait: the look starts
  std::this_thread::sleep_for(std::chrono::milliseconds(3));     // past the root, below it
  Submit(R"({"content":"# Project\n"})", "InitTool");
  ASSERT_EQ(results_.size(), 1u);
  ASSERT_EQ(results_[0].status(), v1::TOOL_STATUS_OK) << results_[0].output_head();
  // The next command's look finds nothing changed but what it changed.
  std::string command = Submit(R"({"argv": ["sh", "-c", "echo x > c.txt"]})");
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/c.txt", "x\n").ok());
  SayResult(command, "", "", 0);
  ASSERT_EQ(results_.size(), 2u);
  std::vector<std::string> rows = testing::LedgerRows(
      dir_ + "/odin.db", "SELECT source || ' ' || substr(path, length(?) + 2) FROM mutations ORDER BY path", ws_);
  EXPECT_EQ(rows, std::vector<std::string>({"file_tool ODIN.md", "command c.txt"}));
}

// The protected paths' index is made on the look's thread too. An
// instruction file made after it (by an editor, between calls) is heard
// of, so a command's change of it is still put back.
TEST_F(CoordinatorTest, AnInstructionFileMadeAfterTheBackgroundLookIsStillPutBack) {
  ASSERT_NO_FATAL_FAILURE(StartAgentSession());
  ASSERT_TRUE(MakeDirs(ws_ + "/sub").ok());
  coord_->ModelRequestStarted(Mode::kEdit);
  ASSERT_TRUE(coord_->Poll(std::chrono::milliseconds(1)).ok());  // a wait: the look starts
  // The look (of an almost empty tree) is most likely over by now; were it
  // not, the command would wait for it, and the outcome is the same.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/sub/AGENTS.md", "be careful\n").ok());
  std::string command = Submit(R"({"argv": ["sh", "-c", "echo evil > sub/AGENTS.md"]})");
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/sub/AGENTS.md", "evil\n").ok());
  SayResult(command, "", "", 0);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(*ReadFileToString(ws_ + "/sub/AGENTS.md"), "be careful\n");
  EXPECT_NE(results_[0].output_tail().find("put back: sub/AGENTS.md"), std::string::npos) << results_[0].output_tail();
}

class BreakerTest : public CoordinatorTest {
 protected:
  void End(const std::string& id, v1::ToolStatus status, std::optional<int> exit_code = std::nullopt) {
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(status);
    r->set_exit_reason(status == v1::TOOL_STATUS_TIMED_OUT ? v1::EXIT_REASON_TIMEOUT : v1::EXIT_REASON_NORMAL);
    if (exit_code) {
      r->set_has_exit_code(true);
      r->set_exit_code(*exit_code);
    }
    Say(e);
  }
  BreakerInfo Breaker(const std::string& name) {
    for (const BreakerInfo& b : coord_->Breakers()) {
      if (b.name == name) return b;
    }
    ADD_FAILURE() << "no breaker " << name;
    return {};
  }
  std::vector<std::string> Transitions() {
    std::vector<std::string> out;
    std::vector<GateEvent> events = ledger_->ListGateEvents(coord_->session_id()).value();
    for (const GateEvent& e : events) {
      if (e.kind == "breaker") out.push_back(e.detail_json);
    }
    return out;
  }
};

TEST_F(BreakerTest, TimeoutsOpenTheToolsBreakerButNotTheWorkersOne) {
  for (int i = 0; i < 5; ++i) End(Submit(R"({"argv": ["sleep", "9"]})"), v1::TOOL_STATUS_TIMED_OUT, 124);
  EXPECT_EQ(Breaker("tool:ExecuteCommand").state, BreakerState::kOpen);
  EXPECT_EQ(Breaker("tool:ExecuteCommand").consecutive_failures, 5);
  EXPECT_EQ(Breaker("worker:writable").state, BreakerState::kClosed);
  ASSERT_EQ(Transitions().size(), 1u);
  EXPECT_NE(Transitions()[0].find(R"("to":"open")"), std::string::npos) << Transitions()[0];
  // Refused at once, without a worker, and recorded.
  int sent = Requests();
  std::string refused = Submit(R"({"argv": ["true"]})");
  EXPECT_EQ(Requests(), sent);
  ASSERT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("circuit breaker tool:ExecuteCommand"), std::string::npos)
      << results_.back().error().message();
  EXPECT_EQ(ledger_->FindExecution(refused).value().end->status, "rejected");
  // Other tools still run.
  Submit(R"({"pattern": "*"})", "Glob");
  EXPECT_EQ(Requests(), sent + 1);
}

TEST_F(BreakerTest, ACommandsOwnFailureIsNotCounted) {
  for (int i = 0; i < 8; ++i) End(Submit(R"({"argv": ["false"]})"), v1::TOOL_STATUS_ERROR, 1);
  EXPECT_EQ(Breaker("tool:ExecuteCommand").state, BreakerState::kClosed);
  EXPECT_EQ(Breaker("tool:ExecuteCommand").consecutive_failures, 0);
}

TEST_F(BreakerTest, CrashesOpenTheWorkerKindsBreaker) {
  for (int i = 0; i < 5; ++i) End(Submit(R"({"argv": ["true"]})"), v1::TOOL_STATUS_CRASHED);
  EXPECT_EQ(Breaker("worker:writable").state, BreakerState::kOpen);
  Submit(R"({"pattern": "*"})", "Glob");
  ASSERT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("circuit breaker worker:writable"), std::string::npos);
}

TEST_F(BreakerTest, AfterTheCooldownTrialsCloseIt) {
  for (int i = 0; i < 5; ++i) End(Submit(R"({"argv": ["sleep", "9"]})"), v1::TOOL_STATUS_TIMED_OUT, 124);
  clock_.Advance(seconds(30));
  std::string trial = Submit(R"({"argv": ["true"]})");
  EXPECT_EQ(Breaker("tool:ExecuteCommand").state, BreakerState::kHalfOpen);
  // A second call while the trial runs is refused.
  Submit(R"({"argv": ["true"]})");
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  End(trial, v1::TOOL_STATUS_OK, 0);
  End(Submit(R"({"argv": ["true"]})"), v1::TOOL_STATUS_OK, 0);
  EXPECT_EQ(Breaker("tool:ExecuteCommand").state, BreakerState::kClosed);
  std::vector<std::string> t = Transitions();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_NE(t[1].find(R"("to":"half_open")"), std::string::npos);
  EXPECT_NE(t[2].find(R"("to":"closed")"), std::string::npos);
}

// Finding 6: arguments nested 60,000 deep are refused before they become a
// value, and recorded as text, so no reader of the ledger meets the nesting.
// Commands judged to only read go to the read-only view only where the
// workers offer it; a worker that turns out to have none turns it off; and
// whether a command ran there is the coordinator's word, not the worker's.
class ReadOnlyViewTest : public CoordinatorTest {
 protected:
  void SetUp() override {}
  void Start(const std::vector<std::string>& capabilities) {
    CoordinatorOptions o;
    o.session_kind = "run";
    o.mode = CallMode::kEdit;
    o.overlay_commands = true;
    o.pool.size = 1;
    o.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    worker_id_ = coord_->pool().workers()[0].id;
    v1::Envelope hello = Env();
    hello.mutable_hello()->set_worker_id(worker_id_);
    hello.mutable_hello()->set_secret(launcher_.SecretFor(worker_id_));
    hello.mutable_hello()->set_kind(v1::WORKER_KIND_TOOL);
    for (const std::string& c : capabilities) hello.mutable_hello()->add_capabilities(c);
    Say(hello);
  }
  // Submits the command; returns the request the worker got for it.
  v1::ToolRequest Run(const std::string& command, std::string* id) {
    *id = Submit(nlohmann::json({{"command", command}}).dump());
    const v1::Envelope* sent = LastTo(worker_id_, v1::Envelope::kToolRequest);
    return sent != nullptr ? sent->tool_request() : v1::ToolRequest();
  }
  void Answer(const std::string& id, bool no_view, bool claims_view) {
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(no_view ? v1::TOOL_STATUS_ERROR : v1::TOOL_STATUS_OK);
    if (!no_view) r->set_has_exit_code(true);
    r->set_no_read_only_view(no_view);
    r->set_read_only_view(claims_view);
    Say(e);
  }
  std::string ResultJson(const std::string& id) {
    std::vector<std::string> rows =
        testing::LedgerRows(dir_ + "/odin.db", "SELECT result_json FROM execution_ends WHERE execution_id = ?", id);
    return rows.empty() ? "" : rows[0];
  }
};

TEST_F(ReadOnlyViewTest, ACommandThatOnlyReadsGoesToTheViewAndOneThatWritesDoesNot) {
  ASSERT_NO_FATAL_FAILURE(Start({kOverlayCapability, kReadOnlyViewCapability}));
  std::string reads, writes;
  EXPECT_TRUE(Run("cat a.txt", &reads).read_only_view());
  Answer(reads, false, false);
  EXPECT_NE(ResultJson(reads).find("\"read_only_view\":true"), std::string::npos) << ResultJson(reads);
  v1::ToolRequest w = Run("echo x > a.txt", &writes);
  EXPECT_FALSE(w.read_only_view());
  // A worker that says a writing command ran in the view is not believed.
  Answer(writes, false, true);
  EXPECT_EQ(ResultJson(writes).find("read_only_view"), std::string::npos) << ResultJson(writes);
}

TEST_F(ReadOnlyViewTest, NoViewWhereTheWorkerOffersNone) {
  ASSERT_NO_FATAL_FAILURE(Start({kOverlayCapability}));
  std::string id;
  EXPECT_FALSE(Run("cat a.txt", &id).read_only_view());
}

TEST_F(ReadOnlyViewTest, AWorkerThatHadNoViewTurnsItOffSoAskingAgainRunsTheCommand) {
  ASSERT_NO_FATAL_FAILURE(Start({kOverlayCapability, kReadOnlyViewCapability}));
  std::string first, again;
  EXPECT_TRUE(Run("cat a.txt", &first).read_only_view());
  Answer(first, /*no_view=*/true, false);
  EXPECT_FALSE(Run("cat a.txt", &again).read_only_view());
}

// Where the writers have overlays, a writing command's protected files are
// not snapshotted (its writes land only through the overlay's apply, which
// keeps protected paths aside), so it must run over one or not at all: a
// worker started since without an overlay refuses it rather than writing
// into the workspace unwatched. Without overlays it may run in place.
TEST_F(ReadOnlyViewTest, ACommandSentWithoutAProtectedSnapshotRunsOverAnOverlayOrNotAtAll) {
  ASSERT_NO_FATAL_FAILURE(Start({kOverlayCapability, kReadOnlyViewCapability}));
  std::string id;
  EXPECT_TRUE(Run("echo x > a.txt", &id).needs_overlay());
}

TEST_F(ReadOnlyViewTest, WithoutOverlaysAWritingCommandMayRunInPlace) {
  ASSERT_NO_FATAL_FAILURE(Start({}));
  std::string id;
  EXPECT_FALSE(Run("echo x > a.txt", &id).needs_overlay());
}

TEST_F(CoordinatorTest, ArgumentsNestedTooDeepAreRefusedAndRecordedAsText) {
  std::string deep = "{\"command\":" + std::string(60000, '[') + std::string(60000, ']') + "}";
  std::string id = Submit(deep);
  EXPECT_EQ(Requests(), 0);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_EQ(results_[0].error().message(), "ExecuteCommand: JSON arguments: nested more than 64 levels deep");
  auto row = ledger_->FindExecution(id);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->end->status, "rejected");
  EXPECT_EQ(row->start.args_json, nlohmann::json(deep).dump());
}

}  // namespace
}  // namespace odin
