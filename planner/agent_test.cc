#include "planner/agent.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"
#include "coordinator/coordinator.h"
#include "tests/coordinator_fixture.h"

namespace odin {
namespace {

using nlohmann::json;

using ScriptedModel = testing::ScriptedLlm;

class Recorder : public AgentObserver {
 public:
  void OnMessageDone(const MessageOutcome& o) override { done.push_back(o); }
  void OnToolStart(const std::string& id, const ToolCallRequest& call) override { started.push_back(id); }
  std::vector<MessageOutcome> done;
  std::vector<std::string> started;
};

ChatResponse Text(const std::string& text) {
  ChatResponse r;
  r.text = text;
  r.stop_reason = "stop";
  r.usage = {100, 10};
  return r;
}

ChatResponse Calls(std::vector<ToolCallRequest> calls) {
  ChatResponse r;
  r.tool_calls = std::move(calls);
  r.stop_reason = "tool_calls";
  r.usage = {100, 10};
  return r;
}

class AgentTest : public testing::CoordinatorFixture {
 protected:
  void SetUp() override {
    CoordinatorOptions co;
    co.mode = CallMode::kEdit;
    co.pool.size = 2;
    co.pool.spawn_spec = [](const WorkerSpawn&) { return SpawnOptions{.argv = {"w"}}; };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(co));
    HelloAll();
    options_.model = "test-model";
    options_.workspace = ws_;
    options_.cwd = ws_;
    options_.budget.turns = 5;
    options_.instructions = "## ODIN.md\nalways be testing\n";
    options_.prices = {{"test-model", {3.0, 15.0}}};
    MakeAgent();
  }
  void MakeAgent() {
    agent_ = std::make_unique<Agent>(options_, coord_.get(), &model_, ledger_.get(), &clock_, &recorder_);
  }
  // The gate events of the session with this kind.
  std::vector<json> GateEvents(const std::string& kind) {
    std::vector<json> out;
    std::vector<GateEvent> events = ledger_->ListGateEvents(coord_->session_id()).value();
    for (const GateEvent& e : events) {
      if (e.kind == kind) out.push_back(json::parse(e.detail_json));
    }
    return out;
  }
  // The cancel requests sent to workers, by execution id.
  std::map<std::string, int> CancelsSent() {
    std::map<std::string, int> out;
    for (const auto& [to, env] : transport_.sent) {
      if (env.body_case() == v1::Envelope::kCancel) out[env.cancel().execution_id()] = env.cancel().reason();
    }
    return out;
  }
  void TearDown() override {
    agent_.reset();  // before the coordinator it calls
    CoordinatorFixture::TearDown();
  }

  // The fake worker holding execution id answers it.
  void WorkerAnswers(const std::string& execution_id, const std::string& output) {
    for (const auto& w : coord_->pool().workers()) {
      if (w.execution_id != execution_id) continue;
      v1::Envelope e = Env();
      v1::ToolResult* r = e.mutable_tool_result();
      r->set_execution_id(execution_id);
      r->set_status(v1::TOOL_STATUS_OK);
      r->set_has_exit_code(true);
      r->set_output_head(output);
      r->set_output_total_bytes(output.size());
      transport_.inbox.push_back({w.id, e});
    }
    ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  }

  static std::string Todo(int n) {
    return R"({"todos":[{"id":")" + std::to_string(n) + R"(","content":"step","status":"pending"}]})";
  }

  ScriptedModel model_;
  Recorder recorder_;
  AgentOptions options_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentTest, AnswerWithoutToolsEndsTheMessage) {
  agent_->Send("hi", Mode::kAsk);
  ASSERT_EQ(model_.requests.size(), 1u);
  model_.Answer(Text("hello"));
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "done");
  EXPECT_EQ(recorder_.done[0].text, "hello");
  EXPECT_FALSE(agent_->busy());
}

TEST_F(AgentTest, ParallelCallsAreSubmittedTogetherAndAnsweredInTheModelsOrder) {
  agent_->Send("run two", Mode::kEdit);
  model_.Answer(Calls({{"a", "ExecuteCommand", R"({"command":"one"})"}, {"b", "Grep", R"({"pattern":"two"})"}}));
  // Both are out at once, on the two workers.
  ASSERT_EQ(recorder_.started.size(), 2u);
  EXPECT_EQ(transport_.Count(coord_->pool().workers()[0].id, v1::Envelope::kToolRequest) +
                transport_.Count(coord_->pool().workers()[1].id, v1::Envelope::kToolRequest),
            2);
  // The second finishes first; the model still hears them in its order.
  WorkerAnswers(recorder_.started[1], "two done");
  EXPECT_EQ(model_.requests.size(), 1u);  // waits for both
  WorkerAnswers(recorder_.started[0], "one done");
  ASSERT_EQ(model_.requests.size(), 2u);
  const ChatMessage& results = model_.requests[1].messages.back();
  ASSERT_EQ(results.results.size(), 2u);
  EXPECT_EQ(results.results[0].call_id, "a");
  EXPECT_EQ(json::parse(results.results[0].content)["output"], "one done");
  EXPECT_EQ(json::parse(results.results[0].content)["authority"], "ground_truth");
  EXPECT_EQ(results.results[1].call_id, "b");
}

TEST_F(AgentTest, CommandsThatCanWriteRunOneAtATime) {
  // Each one's change set must be its own: the second waits for the first.
  agent_->Send("run two", Mode::kEdit);
  model_.Answer(
      Calls({{"a", "ExecuteCommand", R"({"command":"one"})"}, {"b", "ExecuteCommand", R"({"command":"two"})"}}));
  ASSERT_EQ(recorder_.started.size(), 2u);
  auto sent = [&] {
    return transport_.Count(coord_->pool().workers()[0].id, v1::Envelope::kToolRequest) +
           transport_.Count(coord_->pool().workers()[1].id, v1::Envelope::kToolRequest);
  };
  EXPECT_EQ(sent(), 1);
  WorkerAnswers(recorder_.started[0], "one done");
  EXPECT_EQ(sent(), 2);
  EXPECT_EQ(model_.requests.size(), 1u);
  WorkerAnswers(recorder_.started[1], "two done");
  ASSERT_EQ(model_.requests.size(), 2u);
  const ChatMessage& results = model_.requests[1].messages.back();
  ASSERT_EQ(results.results.size(), 2u);
  EXPECT_EQ(json::parse(results.results[0].content)["output"], "one done");
  EXPECT_EQ(json::parse(results.results[1].content)["output"], "two done");
}

TEST_F(AgentTest, AWaitingCommandCanBeCancelled) {
  agent_->Send("run two", Mode::kEdit);
  model_.Answer(
      Calls({{"a", "ExecuteCommand", R"({"command":"one"})"}, {"b", "ExecuteCommand", R"({"command":"two"})"}}));
  ASSERT_EQ(recorder_.started.size(), 2u);
  agent_->CancelCurrent();
  // The running one is asked to stop; the waiting one never reaches a worker.
  EXPECT_EQ(CancelsSent().count(recorder_.started[0]), 1u);
  EXPECT_EQ(CancelsSent().count(recorder_.started[1]), 0u);
  ExecutionRow waiting = ledger_->FindExecution(recorder_.started[1]).value();
  ASSERT_TRUE(waiting.end);
  EXPECT_EQ(waiting.end->status, "cancelled");
}

TEST_F(AgentTest, TheTurnBudgetStopsTheMessage) {
  agent_->Send("loop forever", Mode::kEdit);
  for (int i = 0; i < 5; ++i) model_.Answer(Calls({{"t", "TodoWrite", Todo(i)}}));
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "budget_exceeded");
  EXPECT_EQ(recorder_.done[0].budget_limit, "turns");
  EXPECT_EQ(recorder_.done[0].turns, 5);
  EXPECT_EQ(model_.requests.size(), 5u);
}

TEST_F(AgentTest, QueuedMessagesRunInOrderEachInItsMode) {
  agent_->Send("first", Mode::kAsk);
  agent_->Send("second", Mode::kPlan);
  agent_->Send("third", Mode::kEdit);
  EXPECT_EQ(agent_->queued(), 2u);
  model_.Answer(Text("1"));
  model_.Answer(Text("2"));
  model_.Answer(Text("3"));
  ASSERT_EQ(model_.requests.size(), 3u);
  EXPECT_NE(model_.requests[0].system.find("Mode: ask"), std::string::npos);
  EXPECT_NE(model_.requests[1].system.find("Mode: plan"), std::string::npos);
  EXPECT_NE(model_.requests[2].system.find("Mode: edit"), std::string::npos);
  auto has = [](const ChatRequest& r, const std::string& tool) {
    for (const ToolSpec& t : r.tools) {
      if (t.name == tool) return true;
    }
    return false;
  };
  EXPECT_FALSE(has(model_.requests[0], "EditTool"));
  EXPECT_TRUE(has(model_.requests[2], "EditTool"));
  EXPECT_EQ(model_.requests[2].messages.size(), 5u);  // the conversation carries over
  ASSERT_EQ(recorder_.done.size(), 3u);
}

TEST_F(AgentTest, CancelWhileTheModelThinksKeepsTheQueue) {
  agent_->Send("slow", Mode::kEdit);
  agent_->Send("next", Mode::kEdit);
  agent_->CancelCurrent();
  EXPECT_EQ(model_.cancelled, 1);
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "cancelled");
  ASSERT_EQ(model_.requests.size(), 2u);  // the next message started
  model_.Answer(Text("ok"));
  EXPECT_EQ(recorder_.done[1].status, "done");
}

TEST_F(AgentTest, ModelErrorsEndTheMessageAsErrors) {
  agent_->Send("x", Mode::kEdit);
  model_.Answer(Status::Unavailable("gave up after 5 attempts", "HTTP 503"));
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "error");
  EXPECT_EQ(recorder_.done[0].error.message(), "gave up after 5 attempts: HTTP 503");
}

TEST_F(AgentTest, UsageAndCostGoToTheLedger) {
  agent_->Send("x", Mode::kEdit);
  model_.Answer(Calls({{"t", "TodoWrite", Todo(1)}}));
  model_.Answer(Text("done"));
  auto usage = ledger_->UsageOf(coord_->session_id());
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->llm_calls, 2);
  EXPECT_EQ(usage->input_tokens, 200);
  // 200 tokens at $3/M in + 20 at $15/M out = 600 + 300 micro-dollars.
  EXPECT_EQ(usage->cost_microusd, 900);
  EXPECT_EQ(recorder_.done[0].cost_microusd, 900);
}

TEST_F(AgentTest, TheSystemPromptCarriesInstructionsAndTheCache) {
  agent_->Send("x", Mode::kEdit);
  model_.Answer(Calls({{"t", "TodoWrite", Todo(1)}}));
  const std::string& system = model_.requests[1].system;
  EXPECT_NE(system.find("always be testing"), std::string::npos);
  EXPECT_NE(system.find("ground_truth"), std::string::npos);
  // The todo list changes from turn to turn: it goes after the conversation,
  // and the system prompt stays the same bytes (prompt caching).
  EXPECT_EQ(system.find("Your todo list:"), std::string::npos);
  EXPECT_NE(model_.requests[1].tail.find("Your todo list:"), std::string::npos);
  EXPECT_EQ(model_.requests[0].system, system);
}

TEST_F(AgentTest, AnEmptyAnswerIsNotKeptInTheConversation) {
  agent_->Send("x", Mode::kEdit);
  model_.Answer(Text(""));
  EXPECT_EQ(recorder_.done[0].status, "done");
  agent_->Send("y", Mode::kEdit);
  // Two user messages, no empty assistant turn between them.
  ASSERT_EQ(model_.requests.size(), 2u);
  ASSERT_EQ(model_.requests[1].messages.size(), 2u);
  EXPECT_EQ(model_.requests[1].messages[0].role, ChatMessage::Role::kUser);
  EXPECT_EQ(model_.requests[1].messages[1].role, ChatMessage::Role::kUser);
}

TEST_F(AgentTest, ACutOffAnswerWithoutCallsAsksTheModelToContinue) {
  agent_->Send("x", Mode::kEdit);
  ChatResponse cut = Text("half an ans");
  cut.truncated = true;
  model_.Answer(cut);
  ASSERT_EQ(model_.requests.size(), 2u);
  EXPECT_NE(model_.requests[1].messages.back().text.find("cut off"), std::string::npos);
  model_.Answer(Text("whole answer"));
  EXPECT_EQ(recorder_.done[0].status, "done");
}

TEST_F(AgentTest, TheWallTimeBudgetCancelsRunningCallsAndStops) {
  options_.budget.wall = seconds(10);
  MakeAgent();
  agent_->Send("build it", Mode::kEdit);
  ASSERT_EQ(agent_->NextTimer(), clock_.Now() + seconds(10));
  model_.Answer(Calls({{"a", "ExecuteCommand", R"({"command":"sleep 100"})"}}));
  ASSERT_EQ(recorder_.started.size(), 1u);
  clock_.Advance(seconds(10) - milliseconds(1));
  agent_->Tick();
  EXPECT_TRUE(CancelsSent().empty());
  clock_.Advance(milliseconds(1));
  agent_->Tick();
  std::map<std::string, int> cancels = CancelsSent();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[recorder_.started[0]], v1::CANCEL_REASON_BUDGET);
  EXPECT_TRUE(recorder_.done.empty());  // waits for the killed call's end
  // The worker reports the kill.
  for (const auto& w : coord_->pool().workers()) {
    if (w.execution_id != recorder_.started[0]) continue;
    v1::Envelope e = Env();
    e.mutable_tool_result()->set_execution_id(recorder_.started[0]);
    e.mutable_tool_result()->set_status(v1::TOOL_STATUS_CANCELLED);
    e.mutable_tool_result()->set_exit_reason(v1::EXIT_REASON_BUDGET_EXCEEDED);
    transport_.inbox.push_back({w.id, e});
  }
  ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "budget_exceeded");
  EXPECT_EQ(recorder_.done[0].budget_limit, "wall_time");
  EXPECT_EQ(model_.requests.size(), 1u);
  std::vector<json> events = GateEvents("budget_exceeded");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["limit"], "wall_time");
}

TEST_F(AgentTest, TheTokenBudgetStopsBeforeTheCallsOfTheResponseThatCrossedIt) {
  options_.budget.tokens = 150;
  MakeAgent();
  agent_->Send("go", Mode::kEdit);
  model_.Answer(Calls({{"a", "ExecuteCommand", R"({"command":"true"})"}}));  // 110 tokens
  WorkerAnswers(recorder_.started[0], "ok");
  ASSERT_EQ(model_.requests.size(), 2u);
  EXPECT_NE(model_.requests[1].tail.find("tokens 40 of 150 left"), std::string::npos) << model_.requests[1].tail;
  model_.Answer(Calls({{"b", "ExecuteCommand", R"({"command":"rm -rf build"})"}}));  // 220 tokens
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "budget_exceeded");
  EXPECT_EQ(recorder_.done[0].budget_limit, "tokens");
  EXPECT_EQ(recorder_.started.size(), 1u);  // the second call never ran
}

TEST_F(AgentTest, TheToolCallBudgetRefusesTheCallOverItAndStops) {
  options_.budget.tool_calls = 2;
  MakeAgent();
  agent_->Send("go", Mode::kEdit);
  model_.Answer(Calls({{"a", "TodoWrite", Todo(1)}, {"b", "TodoWrite", Todo(2)}, {"c", "TodoWrite", Todo(3)}}));
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "budget_exceeded");
  EXPECT_EQ(recorder_.done[0].budget_limit, "tool_calls");
  EXPECT_EQ(recorder_.done[0].budget_used.tool_calls, 2);
  // The third was refused, and the ledger says why.
  std::string third = recorder_.done[0].execution_ids[2];
  ExecutionEnd end = ledger_->FindExecution(third).value().end.value();
  EXPECT_EQ(end.status, "rejected");
  EXPECT_NE(end.error.find("tool calls: 2 of 2 used"), std::string::npos) << end.error;
}

TEST_F(AgentTest, ARepeatedCallIsNudgedThenStopped) {
  agent_->Send("go", Mode::kEdit);
  for (int i = 0; i < 3; ++i) model_.Answer(Calls({{"t", "TodoWrite", Todo(7)}}));
  ASSERT_EQ(model_.requests.size(), 4u);
  const ChatMessage& nudge = model_.requests[3].messages.back();
  EXPECT_EQ(nudge.role, ChatMessage::Role::kUser);
  EXPECT_NE(nudge.text.find("Loop detected (repeated_call)"), std::string::npos) << nudge.text;
  EXPECT_NE(nudge.text.find(recorder_.started[0]), std::string::npos);  // names the executions
  model_.Answer(Calls({{"t", "TodoWrite", Todo(7)}}));
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "stalled");
  std::vector<json> events = GateEvents("stall");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["action"], "nudge");
  EXPECT_EQ(events[0]["loop_start"], recorder_.started[0]);
  EXPECT_EQ(events[0]["execution_ids"].size(), 3u);
  EXPECT_EQ(events[1]["action"], "stop");
}

TEST_F(AgentTest, ARepeatedCallAfterAFileChangedIsNotAStall) {
  options_.budget.turns = 10;
  MakeAgent();
  agent_->Send("go", Mode::kEdit);
  for (int i = 0; i < 5; ++i) {
    // Something changes the workspace between the calls (the user, a tool).
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/f.txt", "version " + std::to_string(i) + "\n").ok());
    model_.Answer(Calls({{"t", "TodoWrite", Todo(7)}, {"c", "ExecuteCommand", R"({"command":"make"})"}}));
    WorkerAnswers(recorder_.started.back(), "made");
  }
  EXPECT_TRUE(recorder_.done.empty()) << recorder_.done[0].status;
  EXPECT_TRUE(GateEvents("stall").empty());
}

TEST_F(AgentTest, AFinalAnswerThatCrossesTheTokenBudgetStillFinishes) {
  options_.budget.tokens = 50;
  MakeAgent();
  agent_->Send("what is this?", Mode::kAsk);
  model_.Answer(Text("a repository"));  // 110 tokens
  ASSERT_EQ(recorder_.done.size(), 1u);
  EXPECT_EQ(recorder_.done[0].status, "done");
  EXPECT_EQ(recorder_.done[0].budget_used.tokens, 110);
}

}  // namespace
}  // namespace odin
