// The coordinator's side of subagents, with fake workers and a scripted
// model: the test plays the subagent worker.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "planner/budget.h"
#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "tests/coordinator_fixture.h"

namespace odin {
namespace {

using nlohmann::json;

using Model = testing::ScriptedLlm;

class SubagentsTest : public testing::CoordinatorFixture {
 protected:
  void SetUp() override {
    CoordinatorOptions o;
    o.mode = CallMode::kEdit;
    o.pool.size = 1;
    o.pool.subagent_size = 2;
    o.pool.spawn_spec = [](const WorkerSpawn& w) {
      return SpawnOptions{.argv = {w.policy == WorkerPolicy::kSubagent ? "subagent" : "worker"}};
    };
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    coord_->set_model_access({&model_, "planner-model", {{"*", {1.0, 1.0}}}, 0, "be brief"});
    HelloAll();
  }
  std::string Submit(const std::string& tool, const json& args, const std::string& mode = "edit",
                     const std::string& agent = "main") {
    ToolCall call;
    call.tool = tool;
    call.arguments_json = args.dump();
    call.mode = ParseCallMode(mode);
    call.agent_id = agent;
    call.budget = &budget_;
    return SubmitCall(call);
  }
  // The worker holding execution id, and the last request sent to it.
  std::string Holder(const std::string& id) {
    HelloAll();
    return WorkerHolding(id);
  }
  // The calls the ledger holds under the AgentTool execution parent.
  std::vector<ExecutionRow> Children(const std::string& parent) {
    std::vector<ExecutionRow> out;
    std::vector<ExecutionRow> all = ledger_->ListSessionExecutions(coord_->session_id()).value();
    for (const ExecutionRow& row : all) {
      if (row.start.parent_id == parent) out.push_back(row);
    }
    return out;
  }

  Model model_;
  Budget budget_{BudgetLimits{}, &clock_};
};

TEST_F(SubagentsTest, AgentToolBecomesATaskForASubagentWorker) {
  std::string id = Submit("AgentTool", {{"prompt", "find the bug"}, {"mode", "ask"}, {"description", "bug hunt"}});
  std::string worker = Holder(id);
  ASSERT_FALSE(worker.empty());
  const v1::Envelope* req = LastTo(worker, v1::Envelope::kToolRequest);
  ASSERT_NE(req, nullptr);
  const v1::AgentTask& task = req->tool_request().agent_task();
  EXPECT_EQ(task.mode(), "ask");
  EXPECT_EQ(task.prompt(), "find the bug");
  EXPECT_EQ(task.instructions(), "be brief");
  EXPECT_EQ(task.agent_id().substr(0, 4), "sub_");
  EXPECT_EQ(req->tool_request().timeout_ms(), 600000u);  // the default deadline
}

TEST_F(SubagentsTest, ASubagentCannotHaveMoreThanItsParentsMode) {
  Submit("AgentTool", {{"prompt", "change things"}, {"mode", "edit"}}, "ask");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_[0].error().message().find("more than your mode (ask)"), std::string::npos);
}

TEST_F(SubagentsTest, AgentToolWithoutAPromptOrAModelIsAnError) {
  Submit("AgentTool", {{"mode", "ask"}});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_ERROR);
  EXPECT_NE(results_[0].error().message().find("prompt"), std::string::npos);
  coord_->set_model_access({});
  Submit("AgentTool", {{"prompt", "x"}});
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_NE(results_[1].error().message().find("need a model"), std::string::npos);
}

TEST_F(SubagentsTest, ModelCallsAreMadeHereChargedToTheParentAndRecorded) {
  std::string id = Submit("AgentTool", {{"prompt", "look"}, {"mode", "plan"}});
  std::string worker = Holder(id);
  std::string agent = LastTo(worker, v1::Envelope::kToolRequest)->tool_request().agent_task().agent_id();
  v1::Envelope e = Env();
  v1::ModelRequest* mr = e.mutable_model_request();
  mr->set_request_id(7);
  mr->set_system("subagent system");
  v1::ChatTurn* t = mr->add_messages();
  t->set_role(v1::ChatTurn::ROLE_USER);
  t->set_text("look");
  Say(worker, e);
  ASSERT_EQ(model_.requests.size(), 1u);
  const ChatRequest& req = model_.requests[0];
  EXPECT_EQ(req.model, "planner-model");
  EXPECT_EQ(req.system.substr(0, 15), "subagent system");
  ASSERT_EQ(req.messages.size(), 1u);
  EXPECT_EQ(req.messages[0].text, "look");
  for (const ToolSpec& s : req.tools) {
    EXPECT_NE(s.name, "AgentTool");
    EXPECT_NE(s.name, "EditTool");  // plan mode
  }
  ChatResponse answer;
  answer.text = "found it";
  answer.usage = {1000, 500};
  model_.Answer(answer);
  const v1::Envelope* back = LastTo(worker, v1::Envelope::kModelResponse);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->model_response().request_id(), 7u);
  EXPECT_EQ(back->model_response().text(), "found it");
  EXPECT_EQ(budget_.used().tokens, 1500);
  EXPECT_EQ(budget_.used().cost_microusd, 1500);  // $1 per million tokens
  SessionUsage usage = ledger_->UsageOf(coord_->session_id(), 0, agent).value();
  EXPECT_EQ(usage.llm_calls, 1);
  EXPECT_EQ(usage.input_tokens, 1000);
}

TEST_F(SubagentsTest, AModelRequestOverTheParentsBudgetIsRefused) {
  BudgetLimits limits;
  limits.tokens = 10;
  budget_ = Budget(limits, &clock_);
  std::string id = Submit("AgentTool", {{"prompt", "look"}});
  std::string worker = Holder(id);
  budget_.ChargeModel(10, 0);  // the parent (or a sibling) spent it meanwhile
  v1::Envelope e = Env();
  e.mutable_model_request()->set_request_id(3);
  Say(worker, e);
  EXPECT_TRUE(model_.requests.empty());
  const v1::Envelope* back = LastTo(worker, v1::Envelope::kModelResponse);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->model_response().request_id(), 3u);
  EXPECT_NE(back->model_response().error().message().find("budget exceeded"), std::string::npos);
}

TEST_F(SubagentsTest, ASubagentsToolCallGoesThroughTheGatesUnderItsIdAndMode) {
  std::string id = Submit("AgentTool", {{"prompt", "read"}, {"mode", "ask"}});
  std::string worker = Holder(id);
  std::string agent = LastTo(worker, v1::Envelope::kToolRequest)->tool_request().agent_task().agent_id();
  // A write from an ask-mode subagent meets the mode gate.
  v1::Envelope e = Env();
  e.mutable_subagent_call()->set_execution_id("ex_fromsub00001");
  e.mutable_subagent_call()->set_tool("WriteFile");
  e.mutable_subagent_call()->set_arguments_json(R"({"file_path":"a.txt","content":"x"})");
  Say(worker, e);
  const v1::Envelope* back = LastTo(worker, v1::Envelope::kSubagentCallResult);
  ASSERT_NE(back, nullptr);
  // The subagent hears of it under the id it proposed; the ledger's id is ours.
  EXPECT_EQ(back->subagent_call_result().result().execution_id(), "ex_fromsub00001");
  EXPECT_EQ(back->subagent_call_result().result().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_FALSE(ledger_->FindExecution("ex_fromsub00001").ok());
  std::vector<ExecutionRow> children = Children(id);
  ASSERT_EQ(children.size(), 1u);
  const ExecutionRow& row = children[0];
  EXPECT_EQ(row.start.agent_id, agent);
  EXPECT_EQ(row.start.mode, "ask");
  EXPECT_EQ(row.start.parent_id, id);
  // And it may not start a subagent of its own.
  v1::Envelope nested = Env();
  nested.mutable_subagent_call()->set_execution_id("ex_fromsub00002");
  nested.mutable_subagent_call()->set_tool("AgentTool");
  nested.mutable_subagent_call()->set_arguments_json(R"({"prompt":"grandchild"})");
  Say(worker, nested);
  back = LastTo(worker, v1::Envelope::kSubagentCallResult);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->subagent_call_result().result().status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(back->subagent_call_result().result().error().message().find("cannot start subagents"), std::string::npos);
}

TEST_F(SubagentsTest, WhenTheTaskEndsWhatItLeftRunningStops) {
  std::string id = Submit("AgentTool", {{"prompt", "work"}, {"mode", "edit"}});
  std::string worker = Holder(id);
  v1::Envelope call = Env();
  call.mutable_subagent_call()->set_execution_id("ex_fromsub00003");
  call.mutable_subagent_call()->set_tool("ExecuteCommand");
  call.mutable_subagent_call()->set_arguments_json(R"({"command":"sleep 100"})");
  Say(worker, call);
  v1::Envelope mr = Env();
  mr.mutable_model_request()->set_request_id(1);
  Say(worker, mr);
  ASSERT_EQ(model_.pending.size(), 1u);
  // The subagent worker ends its task (it crashed, say).
  v1::Envelope end = Env();
  end.mutable_tool_result()->set_execution_id(id);
  end.mutable_tool_result()->set_status(v1::TOOL_STATUS_CRASHED);
  Say(worker, end);
  EXPECT_EQ(model_.cancelled, 1);
  std::vector<ExecutionRow> children = Children(id);
  ASSERT_EQ(children.size(), 1u);
  std::string command = children[0].start.execution_id;
  std::string holder = Holder(command);
  ASSERT_FALSE(holder.empty());
  const v1::Envelope* cancel = LastTo(holder, v1::Envelope::kCancel);
  ASSERT_NE(cancel, nullptr);
  EXPECT_EQ(cancel->cancel().execution_id(), command);
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_NE(results_[0].output_head().find("did not finish"), std::string::npos) << results_[0].output_head();
}

TEST_F(SubagentsTest, AWorkerWithoutATaskMayNotAskForAnything) {
  HelloAll();
  std::string idle;
  for (const auto& w : coord_->pool().workers()) {
    if (w.policy == WorkerPolicy::kWritable) idle = w.id;
  }
  ASSERT_FALSE(idle.empty());
  v1::Envelope mr = Env();
  mr.mutable_model_request()->set_request_id(1);
  Say(idle, mr);
  EXPECT_TRUE(model_.requests.empty());
  bool killed = true;
  for (const auto& w : coord_->pool().workers())
    killed = killed && !(w.id == idle && w.state != WorkerPool::WorkerState::kStopping);
  EXPECT_TRUE(killed) << "a protocol violation";
}

TEST_F(SubagentsTest, ASubagentCancelsItsCallByTheIdItProposed) {
  std::string id = Submit("AgentTool", {{"prompt", "work"}, {"mode", "edit"}});
  std::string worker = Holder(id);
  v1::Envelope call = Env();
  call.mutable_subagent_call()->set_execution_id("ex_mine");
  call.mutable_subagent_call()->set_tool("ExecuteCommand");
  call.mutable_subagent_call()->set_arguments_json(R"({"command":"sleep 100","timeout_seconds":5})");
  Say(worker, call);
  std::vector<ExecutionRow> children = Children(id);
  ASSERT_EQ(children.size(), 1u);
  std::string command = children[0].start.execution_id;
  std::string holder = Holder(command);
  // The deadline is the coordinator's reading of the call, not the worker's.
  const v1::Envelope* req = LastTo(holder, v1::Envelope::kToolRequest);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->tool_request().timeout_ms(), 5000u);
  v1::Envelope cancel = Env();
  cancel.mutable_cancel()->set_execution_id("ex_mine");
  Say(worker, cancel);
  const v1::Envelope* sent = LastTo(holder, v1::Envelope::kCancel);
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->cancel().execution_id(), command);
  // An id it never proposed is a protocol violation: the worker is stopped.
  v1::Envelope stranger = Env();
  stranger.mutable_cancel()->set_execution_id("ex_not_mine");
  Say(worker, stranger);
  bool stopping = false;
  for (const auto& w : coord_->pool().workers())
    stopping = stopping || (w.id == worker && w.state == WorkerPool::WorkerState::kStopping);
  EXPECT_TRUE(stopping);
}

// A subagent started under a narrowed message (a custom command's
// allowed-tools) and of a custom type: both lists hold for its calls, and
// its offered tools are what both name.
TEST_F(SubagentsTest, ASubagentKeepsItsTypesToolsAndThoseOfTheMessageThatStartedIt) {
  ClaudeDefs defs;
  defs.agents.push_back({.name = "reviewer", .tools = std::vector<std::string>{"Read", "Grep", "WriteFile"}});
  coord_->set_model_access({&model_, "planner-model", {{"*", {1.0, 1.0}}}, 0, "be brief", 50, {}, 0, 0.8, defs});
  ToolCall call;
  call.tool = "AgentTool";
  call.arguments_json = json({{"prompt", "look"}, {"subagent_type", "reviewer"}}).dump();
  call.mode = CallMode::kEdit;
  call.agent_id = "main";
  call.budget = &budget_;
  call.tool_lists = {{"Read", "WriteFile", "AgentTool"}};
  std::string id = SubmitCall(call);
  std::string worker = Holder(id);
  const v1::AgentTask& task = LastTo(worker, v1::Envelope::kToolRequest)->tool_request().agent_task();
  EXPECT_EQ(task.agent_type(), "reviewer");
  v1::Envelope m = Env();
  m.mutable_model_request()->set_request_id(1);
  m.mutable_model_request()->set_system("s");
  Say(worker, m);
  ASSERT_EQ(model_.requests.size(), 1u);
  std::vector<std::string> offered;
  for (const ToolSpec& s : model_.requests[0].tools) offered.push_back(s.name);
  EXPECT_NE(std::find(offered.begin(), offered.end(), "Read"), offered.end());
  EXPECT_NE(std::find(offered.begin(), offered.end(), "WriteFile"), offered.end());
  EXPECT_EQ(std::find(offered.begin(), offered.end(), "Grep"), offered.end());  // not the message's
  EXPECT_EQ(std::find(offered.begin(), offered.end(), "ExecuteCommand"), offered.end());
  for (const char* tool : {"Grep", "ExecuteCommand"}) {
    v1::Envelope e = Env();
    e.mutable_subagent_call()->set_execution_id(std::string("ex_sub_") + tool);
    e.mutable_subagent_call()->set_tool(tool);
    e.mutable_subagent_call()->set_arguments_json(tool == std::string("Grep") ? R"({"pattern":"x"})"
                                                                              : R"({"command":"true"})");
    Say(worker, e);
    const v1::Envelope* back = LastTo(worker, v1::Envelope::kSubagentCallResult);
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->subagent_call_result().result().status(), v1::TOOL_STATUS_REJECTED) << tool;
    EXPECT_NE(back->subagent_call_result().result().error().message().find("not in the tool list"), std::string::npos)
        << back->subagent_call_result().result().error().message();
  }
  // An unknown type is named; Claude Code's general-purpose is Odin's own.
  Submit("AgentTool", {{"prompt", "x"}, {"subagent_type", "admin"}});
  EXPECT_NE(results_.back().error().message().find("no agent type 'admin' (reviewer)"), std::string::npos);
  std::string general = Submit("AgentTool", {{"prompt", "x"}, {"subagent_type", "general-purpose"}});
  EXPECT_FALSE(Holder(general).empty());
}

}  // namespace
}  // namespace odin
