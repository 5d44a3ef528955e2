// Background commands in the coordinator, with a real ledger and fake
// workers: the caller hears once the command started, its output is read
// and its end recorded later, callers that wait hear at the end or at their
// deadline, and the rules on who may start one hold.

#include <gtest/gtest.h>

#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "tests/coordinator_fixture.h"

namespace odin {
namespace {

class BackgroundCommandsTest : public testing::CoordinatorFixture {
 protected:
  void SetUp() override { Start(4); }
  void Start(int max_background) {
    CoordinatorOptions o;
    o.session_kind = "run";
    o.mode = CallMode::kEdit;
    o.pool.size = 1;
    o.max_background = max_background;
    o.pool.background_size = max_background;
    o.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    HelloAll();
    results_.clear();
  }
  std::string Submit(const std::string& tool, const std::string& args, const std::string& mode = "") {
    ToolCall call;
    call.tool = tool;
    call.arguments_json = args;
    call.mode = ParseCallMode(mode);
    return SubmitCall(call);
  }
  // Starts a background command and has its worker say it started.
  std::string StartJob(const std::string& command = "serve") {
    std::string id = Submit("ExecuteCommand", R"({"command": ")" + command + R"(", "run_in_background": true})");
    HelloAll();  // its worker, started for it
    worker_ = WorkerHolding(id);
    if (worker_.empty()) return id;
    v1::Envelope e = Env();
    e.mutable_tool_progress()->set_execution_id(id);
    e.mutable_tool_progress()->set_started_pgid(7);
    Say(worker_, e);
    return id;
  }
  void SayOutput(const std::string& id, const std::string& data) {
    v1::Envelope e = Env();
    e.mutable_tool_progress()->set_execution_id(id);
    e.mutable_tool_progress()->mutable_output()->set_data(data);
    Say(worker_, e);
  }
  void SayEnd(const std::string& id, v1::ToolStatus status, int exit_code) {
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(status);
    r->set_has_exit_code(true);
    r->set_exit_code(exit_code);
    Say(worker_, e);
  }
  std::string Last() const { return results_.empty() ? "" : results_.back().output_head(); }

  std::string worker_;
};

TEST_F(BackgroundCommandsTest, TheCallerHearsOnceItStartedAndItsEndIsRecordedWhenItEnds) {
  std::string id = StartJob();
  ASSERT_FALSE(worker_.empty());
  bool background_worker = false;
  for (const auto& w : coord_->pool().workers()) {
    if (w.id == worker_) background_worker = w.policy == WorkerPolicy::kBackground;
  }
  EXPECT_TRUE(background_worker);
  const v1::Envelope* sent = LastTo(worker_, v1::Envelope::kToolRequest);
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->tool_request().timeout_ms(), 0u);          // no deadline
  EXPECT_FALSE(sent->tool_request().needs_overlay());        // it writes in place
  EXPECT_EQ(sent->tool_request().stream_limit_bytes(), 0u);  // all of its output
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_OK);
  EXPECT_NE(Last().find("Started in the background as " + id), std::string::npos) << Last();
  EXPECT_FALSE(ledger_->FindExecution(id)->end.has_value());
  ASSERT_EQ(coord_->background().Running().size(), 1u);

  SayOutput(id, "listening\n");
  EXPECT_EQ(results_.size(), 1u);  // its output is the job's now
  Submit("CommandOutput", R"({"id": ")" + id + R"("})");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_NE(Last().find("running for"), std::string::npos) << Last();
  EXPECT_NE(Last().find("listening\n"), std::string::npos) << Last();
  Submit("CommandOutput", R"({"id": ")" + id + R"("})");
  EXPECT_NE(Last().find("No new output."), std::string::npos) << Last();

  // StopCommand waits for the end, which the worker is asked for.
  Submit("StopCommand", R"({"id": ")" + id + R"("})");
  EXPECT_EQ(results_.size(), 3u);
  EXPECT_NE(LastTo(worker_, v1::Envelope::kCancel), nullptr);
  SayOutput(id, "bye\n");
  SayEnd(id, v1::TOOL_STATUS_CANCELLED, 143);
  ASSERT_EQ(results_.size(), 4u);
  EXPECT_NE(Last().find("stopped (StopCommand)"), std::string::npos) << Last();
  EXPECT_NE(Last().find("bye\n"), std::string::npos) << Last();
  ASSERT_TRUE(ledger_->FindExecution(id)->end.has_value());
  EXPECT_EQ(ledger_->FindExecution(id)->end->status, "cancelled");
  EXPECT_TRUE(coord_->background().Running().empty());
}

TEST_F(BackgroundCommandsTest, AWaitEndsWithTheCommandOrAtItsDeadline) {
  std::string id = StartJob();
  // (Steps shorter than the workers' liveness: the fake workers send no
  // heartbeats.)
  Submit("CommandOutput", R"({"id": ")" + id + R"(", "wait_seconds": 1})");
  EXPECT_EQ(results_.size(), 1u);
  clock_.Advance(std::chrono::milliseconds(900));
  ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  EXPECT_EQ(results_.size(), 1u);
  clock_.Advance(std::chrono::milliseconds(300));
  ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_NE(Last().find("running for 1 s"), std::string::npos) << Last();
  Submit("CommandOutput", R"({"id": ")" + id + R"(", "wait_seconds": 300})");
  EXPECT_EQ(results_.size(), 2u);
  SayEnd(id, v1::TOOL_STATUS_ERROR, 3);
  ASSERT_EQ(results_.size(), 3u);
  EXPECT_NE(Last().find("exited 3"), std::string::npos) << Last();
  // Asking after the end: how it ended, at once.
  Submit("CommandOutput", R"({"id": ")" + id + R"(", "wait_seconds": 300})");
  ASSERT_EQ(results_.size(), 4u);
  EXPECT_NE(Last().find("exited 3"), std::string::npos) << Last();
}

TEST_F(BackgroundCommandsTest, AWaitingCallCanBeCancelled) {
  std::string id = StartJob();
  std::string waiter = Submit("CommandOutput", R"({"id": ")" + id + R"(", "wait_seconds": 100})");
  coord_->Cancel(waiter);
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_CANCELLED);
  clock_.Advance(std::chrono::seconds(200));
  ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  EXPECT_EQ(results_.size(), 2u);  // answered once
}

TEST_F(BackgroundCommandsTest, OnlyEditModeAndOnlyUpToTheLimit) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  std::string one = StartJob("one");
  ASSERT_EQ(results_.size(), 1u);
  // Its tools are edit mode's too, and a subagent's reach only its own.
  Submit("StopCommand", R"({"id": ")" + one + R"("})", "ask");
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("edit mode's"), std::string::npos);
  ToolCall other;
  other.tool = "CommandOutput";
  other.arguments_json = R"({"id": ")" + one + R"("})";
  other.agent_id = "sub_1";
  SubmitCall(other);
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("another agent's"), std::string::npos);
  ASSERT_TRUE(coord_->background().Find(one)->running);
  results_.erase(results_.begin() + 1, results_.end());
  Submit("ExecuteCommand", R"({"command": "two", "run_in_background": true})");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("commands.max_background"), std::string::npos)
      << results_.back().error().message();
  Submit("ExecuteCommand", R"({"command": "three", "run_in_background": true})", "ask");
  ASSERT_EQ(results_.size(), 3u);
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_.back().error().message().find("only in edit mode"), std::string::npos);
  Submit("ExecuteCommand", R"({"command": "four", "run_in_background": "yes"})");
  EXPECT_NE(results_.back().status(), v1::TOOL_STATUS_OK);
  Submit("CommandOutput", R"({"id": "ex_nope"})");
  EXPECT_NE(results_.back().error().message().find("running: "), std::string::npos)
      << results_.back().error().message();
  Submit("CommandOutput", R"({"id": "x", "wait_seconds": 301})");
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_ERROR);
}

TEST_F(BackgroundCommandsTest, AnAskRequestACancelAndTheSessionsEndStopThem) {
  std::string id = StartJob();
  coord_->ModelRequestStarted(Mode::kEdit);
  EXPECT_EQ(LastTo(worker_, v1::Envelope::kCancel), nullptr);
  coord_->ModelRequestStarted(Mode::kAsk);
  ASSERT_NE(LastTo(worker_, v1::Envelope::kCancel), nullptr);
  SayEnd(id, v1::TOOL_STATUS_CANCELLED, 143);
  EXPECT_EQ(coord_->background().Find(id)->ended, "stopped (an ask message started)");
  std::string second = StartJob();
  coord_->MessageCancelled("main");
  SayEnd(second, v1::TOOL_STATUS_CANCELLED, 143);
  EXPECT_EQ(coord_->background().Find(second)->ended, "stopped (the message was cancelled)");
  StatusOr<std::vector<GateEvent>> events = ledger_->ListGateEventsOfKind("background_stop", 10);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 2u);
}

}  // namespace
}  // namespace odin
