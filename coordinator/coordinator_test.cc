#include "coordinator/coordinator.h"

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"
#include "tests/fakes.h"

namespace odin {
namespace {

// The coordinator with a real ledger (in a temporary directory) and fake
// workers: checks what is recorded, and when.
class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("odin-coord-test");
    ledger_ = std::move(Ledger::Open(dir_ + "/odin.db", Redactor()).value());
    CoordinatorOptions o;
    o.workspace = "/ws";
    o.artifact_cap_bytes = 10;
    o.pool.size = 1;
    o.pool.spawn_spec = [](const std::string&) { return SpawnOptions{.argv = {"w"}}; };
    coord_ = std::make_unique<Coordinator>(o, &clock_, &launcher_, &transport_);
    ASSERT_TRUE(coord_->StartWorkers().ok());
    ASSERT_TRUE(coord_->AttachLedger(ledger_.get()).ok());
    worker_id_ = coord_->pool().workers()[0].id;
    v1::Envelope hello = Env();
    hello.mutable_hello()->set_worker_id(worker_id_);
    Say(hello);
  }
  void TearDown() override {
    coord_.reset();
    RemoveTree(dir_);
  }

  static v1::Envelope Env() {
    v1::Envelope e;
    e.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    return e;
  }
  void Say(const v1::Envelope& e) {
    transport_.inbox.push_back({worker_id_, e});
    ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  }
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
  std::string Submit(const std::string& args) {
    ToolCall call;
    call.tool = "ExecuteCommand";
    call.arguments_json = args;
    return coord_->Submit(call, {nullptr, [this](const v1::ToolResult& r, const Status& s) {
                                   results_.push_back(r);
                                   recorded_.push_back(s);
                                 }});
  }

  std::string dir_;
  std::unique_ptr<Ledger> ledger_;
  FakeClock clock_;
  testing::FakeLauncher launcher_;
  testing::FakeTransport transport_;
  std::unique_ptr<Coordinator> coord_;
  std::string worker_id_;
  std::vector<v1::ToolResult> results_;
  std::vector<Status> recorded_;
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

}  // namespace
}  // namespace odin
