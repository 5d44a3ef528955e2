// The guards end to end (budgets, the stall detector, circuit breakers): the
// real odin, sandbox and workers, driven by scripted fake-model sessions.

#include <sqlite3.h>

#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

json Read(const std::string& path) { return Turn({Call("Read", {{"file_path", path}})}); }
json Cmd(const std::string& command) { return Turn({Call("ExecuteCommand", {{"command", command}})}); }
std::string Script(std::vector<json> responses) { return json({{"responses", responses}}).dump(); }

class OdinGuardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    // No checks unless a test sets them: the guards are the subject here.
    config_["checks"] = {{"build", ""}, {"lint", ""}, {"tests", ""}};
    for (const char* f : {"a.txt", "b.txt", "c.txt"}) Put(f, std::string("contents of ") + f + "\n");
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    // The user's config: prices, stall and breaker settings are not a
    // workspace's to make until it is trusted.
    EXPECT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    EXPECT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config_.dump(2)).ok());
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args,
                    {{"OPENAI_BASE_URL", llm.OpenAiUrl()},
                     {"OPENAI_API_KEY", "test-key"},
                     {"ANTHROPIC_BASE_URL", ""},
                     {"ANTHROPIC_API_KEY", ""},
                     {"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  static std::vector<json> Requests(const FakeLlm& llm) { return RequestsOf(llm); }
  // The runtime's words at the end of a request (a nudge or a refusal), or "".
  static std::string LastUserText(const json& request) {
    const json& m = LastMessageOf(request);
    return m["role"] == "user" && m["content"].is_string() ? m["content"].get<std::string>() : "";
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  // The ledger's gate events of a kind, details parsed, oldest first.
  std::vector<json> GateEvents(const std::string& kind) {
    std::vector<json> out;
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(ws_.Join(".odin/odin.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, "SELECT execution_id, detail_json FROM gate_events WHERE kind = ? ORDER BY seq", -1,
                             &st, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, kind.c_str(), -1, SQLITE_TRANSIENT);
        while (sqlite3_step(st) == SQLITE_ROW) {
          json d = json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
          d["_execution_id"] = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
          out.push_back(d);
        }
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
  }
  json Execution(const std::string& id) { return json::parse(RunOdin(ws_.path(), {"show", id, "--json"}).out); }
  // Checks a run that the stall detector stopped: a nudge naming the loop
  // first, then stalled with exit 5, and two gate events.
  void ExpectStalled(const json& r, const FakeLlm& llm, const std::string& rule, size_t nudge_request) {
    EXPECT_EQ(r["status"], "stalled") << last_.err;
    EXPECT_EQ(last_.exit_code, 5);
    EXPECT_NE(r["error"].get<std::string>().find(rule), std::string::npos) << r["error"];
    std::vector<json> requests = Requests(llm);
    ASSERT_GT(requests.size(), nudge_request);
    std::string nudge = LastUserText(requests[nudge_request]);
    EXPECT_NE(nudge.find("Loop detected (" + rule + ")"), std::string::npos) << nudge;
    EXPECT_EQ(requests.size(), nudge_request + 1) << "the run stops at the loop's next detection";
    std::vector<json> stalls = GateEvents("stall");
    ASSERT_EQ(stalls.size(), 2u);
    EXPECT_EQ(stalls[0]["rule"], rule);
    EXPECT_EQ(stalls[0]["action"], "nudge");
    EXPECT_EQ(stalls[1]["rule"], rule);
    EXPECT_EQ(stalls[1]["action"], "stop");
    for (const json& id : stalls[0]["execution_ids"]) {
      EXPECT_NE(nudge.find(id.get<std::string>()), std::string::npos) << "the nudge names " << id;
    }
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  json config_ = json::object();
  Ran last_;
};

// ---- budgets ------------------------------------------------------------------

TEST_F(OdinGuardsTest, TheTurnBudgetEndsTheRun) {
  FakeLlm llm(Script({Read("a.txt"), Read("b.txt"), Read("c.txt"), Text("unreachable")}));
  json r = Prompt(llm, {"--max-turns", "2"});
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "turns");
  EXPECT_EQ(r["budget"]["used"]["turns"], 2);
  EXPECT_EQ(r["budget"]["limits"]["turns"], 2);
  EXPECT_EQ(Requests(llm).size(), 2u);
  std::vector<json> events = GateEvents("budget_exceeded");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["limit"], "turns");
}

TEST_F(OdinGuardsTest, EachTurnShowsTheModelWhatIsLeft) {
  FakeLlm llm(Script({Read("a.txt"), Text("done")}));
  json r = Prompt(llm, {"--max-turns", "5", "--max-tool-calls", "9"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 2u);
  // After the conversation, as its last user content: the system prompt
  // stays the same bytes from turn to turn.
  std::string tail0 = TurnFactsOf(requests[0]), tail1 = TurnFactsOf(requests[1]);
  EXPECT_NE(tail0.find("turns 4 of 5 left, tool calls 9 of 9 left"), std::string::npos) << tail0;
  EXPECT_NE(tail1.find("turns 3 of 5 left, tool calls 8 of 9 left"), std::string::npos) << tail1;
  EXPECT_EQ(requests[0]["body"]["messages"][0], requests[1]["body"]["messages"][0]);
}

TEST_F(OdinGuardsTest, TheToolCallBudgetRefusesTheCallOverIt) {
  FakeLlm llm(Script({Turn({Call("Read", {{"file_path", "a.txt"}}), Call("Read", {{"file_path", "b.txt"}}),
                            Call("Read", {{"file_path", "c.txt"}})}),
                      Text("unreachable")}));
  json r = Prompt(llm, {"--max-tool-calls", "2"});
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "tool_calls");
  ASSERT_EQ(r["execution_ids"].size(), 3u);
  json third = Execution(r["execution_ids"][2]);
  EXPECT_EQ(third["status"], "rejected");
  EXPECT_NE(third["error"].get<std::string>().find("tool calls: 2 of 2 used"), std::string::npos) << third;
  // The calls let through before it were running: each ended, killed for the
  // budget unless it had finished first.
  for (int i = 0; i < 2; ++i) {
    json e = Execution(r["execution_ids"][i]);
    if (e["status"] == "cancelled") {
      EXPECT_EQ(e["exit_reason"], "budget_exceeded") << e;
    } else {
      EXPECT_EQ(e["status"], "ok") << e;
    }
  }
  EXPECT_EQ(GateEvents("budget_exceeded").size(), 1u);
}

TEST_F(OdinGuardsTest, TheTokenBudgetStopsBeforeTheNextCallRuns) {
  json first = Read("a.txt");
  first["usage"] = {{"input", 1000}, {"output", 500}};
  FakeLlm llm(Script({first, Text("unreachable")}));
  json r = Prompt(llm, {"--max-tokens", "1200"});
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "tokens");
  EXPECT_EQ(r["budget"]["used"]["tokens"], 1500);
  EXPECT_TRUE(r["execution_ids"].empty()) << "the response that crossed the limit ran nothing";
  EXPECT_EQ(Requests(llm).size(), 1u);
}

TEST_F(OdinGuardsTest, TheCostBudgetStopsTheRun) {
  config_["llm"]["prices"] = {{"*", {{"input_per_mtok", 10.0}, {"output_per_mtok", 10.0}}}};
  json turn = Read("a.txt");
  turn["usage"] = {{"input", 600}, {"output", 100}};  // $0.007 a turn
  FakeLlm llm(Script({turn, turn, Text("unreachable")}));
  json r = Prompt(llm, {"--max-budget-usd", "0.01"});
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "cost");
  EXPECT_DOUBLE_EQ(r["budget"]["used"]["cost_usd"].get<double>(), 0.014);
  EXPECT_EQ(Requests(llm).size(), 2u);
  std::vector<json> events = GateEvents("budget_exceeded");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["limit"], "cost");
}

TEST_F(OdinGuardsTest, TheWallTimeBudgetKillsTheRunningCommand) {
  std::string marker = "61.4" + std::to_string(getpid());
  FakeLlm llm(Script({Cmd("echo started; sleep " + marker), Text("unreachable")}));
  json r = Prompt(llm, {"--max-wall-seconds", "2"});
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "wall_time");
  EXPECT_LT(r["budget"]["used"]["wall_seconds"].get<double>(), 30.0);
  EXPECT_TRUE(ProcessesWithArg("sleep " + marker).empty()) << "the command's process group was killed";
  ASSERT_EQ(r["execution_ids"].size(), 1u);
  json command = Execution(r["execution_ids"][0]);
  EXPECT_EQ(command["status"], "cancelled") << command;
  EXPECT_EQ(command["exit_reason"], "budget_exceeded") << command;
  std::vector<json> events = GateEvents("budget_exceeded");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["limit"], "wall_time");
}

TEST_F(OdinGuardsTest, APerToolTimeoutFromTheConfigKillsASlowCommand) {
  config_["budgets"]["tool_timeouts"] = {{"ExecuteCommand", 1}};
  FakeLlm llm(Script({Cmd("sleep 30"), Text("it timed out")}));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  json command = Execution(r["execution_ids"][0]);
  EXPECT_EQ(command["status"], "timed_out") << command;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 2u);
  json result = json::parse(LastMessageOf(requests[1])["content"].get<std::string>());
  EXPECT_EQ(result["status"], "timed_out");
}

// ---- the stall detector -----------------------------------------------------

TEST_F(OdinGuardsTest, TheSameCallWithTheSameResultIsNudgedThenStopped) {
  FakeLlm llm(Script({Read("a.txt"), Read("a.txt"), Read("a.txt"), Read("a.txt"), Text("unreachable")}));
  json r = Prompt(llm);
  ExpectStalled(r, llm, "repeated_call", 3);
  std::vector<json> stalls = GateEvents("stall");
  EXPECT_EQ(stalls[0]["loop_start"], r["execution_ids"][0]);
  EXPECT_EQ(stalls[0]["execution_ids"].size(), 3u);
  EXPECT_EQ(stalls[1]["count"], 4);
}

TEST_F(OdinGuardsTest, TheSameFailureIsNudgedThenStopped) {
  // Each run prints something new (the time), but fails the same way.
  std::string failing = "date +%s%N; echo 'error: no rule to make target'; exit 2";
  FakeLlm llm(Script({Cmd(failing), Cmd(failing), Cmd(failing), Cmd(failing), Text("unreachable")}));
  json r = Prompt(llm);
  ExpectStalled(r, llm, "repeated_failure", 3);
}

TEST_F(OdinGuardsTest, TheSameReplyWhileRefusedIsNudgedThenStopped) {
  config_["checks"]["tests"] = "echo '1 test failed'; exit 1";
  FakeLlm llm(Script({Turn({Call("WriteFile", {{"file_path", "new.txt"}, {"content", "x\n"}})}), Text("All done."),
                      Text("All done."), Text("All done."), Text("All done."), Text("unreachable")}));
  json r = Prompt(llm);
  ExpectStalled(r, llm, "repeated_message", 4);
  // The nudge follows the checks' refusal, in the same request.
  std::vector<json> requests = Requests(llm);
  const json& messages = requests[4]["body"]["messages"];
  size_t nudge = messages.size() - (TurnFactsOf(requests[4]).empty() ? 1 : 2);  // the per-turn facts come last
  std::string refusal = messages[nudge - 1]["content"];
  EXPECT_NE(refusal.find("1 test failed"), std::string::npos) << refusal;
}

TEST_F(OdinGuardsTest, TwoCallsAlternatingAreNudgedThenStopped) {
  FakeLlm llm(Script({Read("a.txt"), Read("b.txt"), Read("a.txt"), Read("b.txt"), Read("a.txt"), Read("b.txt"),
                      Read("a.txt"), Text("unreachable")}));
  json r = Prompt(llm);
  ExpectStalled(r, llm, "alternation", 6);
  EXPECT_EQ(GateEvents("stall")[0]["loop_start"], r["execution_ids"][0]);
}

TEST_F(OdinGuardsTest, TurnsWithoutProgressAreNudgedThenStopped) {
  config_["stall"] = {{"no_progress_turns", 3}};
  FakeLlm llm(Script({Read("a.txt"), Read("b.txt"), Read("c.txt"),  // new
                      Read("b.txt"), Read("a.txt"), Read("c.txt"),  // seen before: 3 idle turns
                      Read("a.txt"),                                // a 4th
                      Text("unreachable")}));
  json r = Prompt(llm);
  ExpectStalled(r, llm, "no_progress", 6);
}

// No turn limit unless asked, as Claude Code and Codex: a healthy session of
// 60 turns, each changing the workspace, runs to its end.
TEST_F(OdinGuardsTest, ALongHealthySessionHasNoTurnLimit) {
  std::vector<json> script;
  for (int i = 0; i < 60; ++i) script.push_back(Cmd("echo " + Word(i) + " > f_" + Word(i) + ".txt"));
  script.push_back(Text("All sixty files written."));
  FakeLlm llm(Script(script));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(Requests(llm).size(), 61u);
  EXPECT_EQ(*ReadFileToString(ws_.Join("f_" + Word(59) + ".txt")), Word(59) + "\n");
  EXPECT_TRUE(GateEvents("stall").empty());
}

// Without a turn limit the stall detector still ends a session of distinct
// calls that never change anything: nudged, then stopped, long before the
// script (or the old default of 50 turns) runs out.
TEST_F(OdinGuardsTest, DistinctCallsThatChangeNothingStillStopWithoutATurnLimit) {
  std::vector<json> script;
  for (int i = 0; i < 200; ++i) script.push_back(Cmd("true " + Word(i)));
  script.push_back(Text("unreachable"));
  FakeLlm llm(Script(script));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "stalled") << last_.err << r.dump();
  EXPECT_EQ(last_.exit_code, 5);
  EXPECT_NE(r["error"].get<std::string>().find("no_progress"), std::string::npos) << r["error"];
  EXPECT_LT(Requests(llm).size(), 30u);
  std::vector<json> stalls = GateEvents("stall");
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0]["action"], "nudge");
  EXPECT_EQ(stalls[1]["action"], "stop");
}

TEST_F(OdinGuardsTest, RerunningTestsAfterARealEditIsNotAStall) {
  Put("check.sh", "echo 'FAIL: expected 3'; exit 1\n");
  auto edit = [](int n) {
    return Turn({Call("WriteFile", {{"file_path", "value.txt"}, {"content", std::to_string(n) + "\n"}})});
  };
  // The same failing command, with the same output, after each real change;
  // and a command that changes the workspace itself each time.
  std::string bump = "echo x >> counter.txt; echo 'FAIL: expected 3'; exit 1";
  FakeLlm llm(Script({Cmd("sh check.sh"), edit(1), Cmd("sh check.sh"), edit(2), Cmd("sh check.sh"), edit(3),
                      Cmd("sh check.sh"), Cmd(bump), Cmd(bump), Cmd(bump), Cmd(bump), Text("gave up honestly")}));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_TRUE(GateEvents("stall").empty());
}

// The stall detector's view of the workspace is the coordinator's digest of
// the change sets (no walk of the tree): a command that writes the same
// bytes each time changed nothing after its first run.
TEST_F(OdinGuardsTest, ACommandRewritingTheSameBytesIsStillALoop) {
  std::string rewrite = "printf 'same\\n' > out.txt; echo written";
  FakeLlm llm(Script({Cmd(rewrite), Cmd(rewrite), Cmd(rewrite), Cmd(rewrite), Cmd(rewrite), Text("unreachable")}));
  json r = Prompt(llm);
  // The first run created out.txt (a change); the next three are the loop.
  ExpectStalled(r, llm, "repeated_call", 4);
  EXPECT_EQ(GateEvents("stall")[0]["loop_start"], r["execution_ids"][1]);
}

// A change made between calls by no call (an editor's save) is found at the
// turn's start by the external-change detector and is progress, even where
// the calls only read.
TEST_F(OdinGuardsTest, AChangeOutsideOdinBetweenCallsIsProgress) {
  TempWorkspace release;
  json held = Cmd("true");
  held["hold_until"] = release.Join("go");
  FakeLlm llm(Script({Cmd("true"), Cmd("true"), held, Cmd("true"), Text("finished")}));
  std::thread editor([&] {
    // While the model "thinks" about its third answer.
    if (WaitUntil([&] { return Requests(llm).size() >= 3; })) Put("a.txt", "saved in an editor\n");
    EXPECT_TRUE(WriteFileAtomic(release.Join("go"), "").ok());
  });
  json r = Prompt(llm);
  editor.join();
  EXPECT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_TRUE(GateEvents("stall").empty()) << GateEvents("stall")[0].dump();
  // Without the change, the same four calls are a loop (a new session).
  FakeLlm again(Script({Cmd("true"), Cmd("true"), Cmd("true"), Cmd("true"), Text("unreachable")}));
  json stalled = Prompt(again);
  EXPECT_EQ(stalled["status"], "stalled") << last_.err << stalled.dump();
}

TEST_F(OdinGuardsTest, PollingSomethingThatProgressesIsNotAStall) {
  std::string poll = "date +%s%N";
  FakeLlm llm(Script({Cmd(poll), Cmd(poll), Cmd(poll), Cmd(poll), Cmd(poll), Cmd(poll), Text("finished")}));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_TRUE(GateEvents("stall").empty());
}

// Sixty tool calls of ordinary work: searching, reading different files,
// editing, running tests that fail and then pass, polling a log. Nothing in it
// may look like a loop.
TEST_F(OdinGuardsTest, SixtyStepsOfLegitimateWorkAreNotAStall) {
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  for (int i = 0; i < 8; ++i) {
    Put("src/mod" + std::to_string(i) + ".txt", "module " + std::to_string(i) + "\nvalue = 0\n");
  }
  Put("test.sh", "grep -L 'value = 1' src/*.txt | sed 's/^/not fixed: /'; ! grep -q 'value = 0' src/*.txt\n");
  std::vector<json> responses;
  int steps = 0;
  auto add = [&](std::vector<json> calls) {
    steps += static_cast<int>(calls.size());
    responses.push_back(Turn(std::move(calls)));
  };
  add({Call("LS", {{"path", "."}}), Call("Glob", {{"pattern", "src/*.txt"}})});
  add({Call("Grep", {{"pattern", "value"}, {"path", "src"}})});
  add({Call("ExecuteCommand", {{"command", "sh test.sh"}})});
  for (int i = 0; i < 8; ++i) {
    std::string f = "src/mod" + std::to_string(i) + ".txt";
    add({Call("Read", {{"file_path", f}}), Call("Grep", {{"pattern", "module " + std::to_string(i)}})});
    add({Call("EditTool", {{"file_path", f}, {"old_string", "value = 0"}, {"new_string", "value = 1"}})});
    add({Call("ExecuteCommand", {{"command", "sh test.sh"}}), Call("Grep", {{"pattern", "value = 1"}, {"path", f}})});
    add({Call("ExecuteCommand", {{"command", "date +%s%N >> progress.log; wc -l < progress.log"}})});
  }
  add({Call("LS", {{"path", "src"}}), Call("Glob", {{"pattern", "*.sh"}})});
  add({Call("Read", {{"file_path", "b.txt"}}), Call("Read", {{"file_path", "c.txt"}})});
  add({Call("Read", {{"file_path", "test.sh"}}), Call("Read", {{"file_path", "a.txt"}})});
  add({Call("ExecuteCommand", {{"command", "sh test.sh && echo all fixed"}})});
  add({Call("Grep", {{"pattern", "value = 1"}, {"path", "src"}, {"output_mode", "count"}})});
  ASSERT_EQ(steps, 60);
  responses.push_back(Text("All eight modules are fixed and the test passes."));
  FakeLlm llm(Script(responses));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(r["execution_ids"].size(), 60u);
  EXPECT_TRUE(GateEvents("stall").empty()) << GateEvents("stall")[0].dump();
  EXPECT_EQ(Execution(r["execution_ids"][59])["status"], "ok");
}

// ---- circuit breakers ---------------------------------------------------------

TEST_F(OdinGuardsTest, ABreakerOpensOnTimeoutsRefusesThenClosesAfterATrial) {
  config_["budgets"]["tool_timeouts"] = {{"ExecuteCommand", 1}};
  config_["breakers"] = {{"failures", 2}, {"cooldown_seconds", 1}, {"successes", 1}};
  json trial = Cmd("echo trial");
  trial["delay_ms"] = 1500;  // the model thinks past the cooldown
  FakeLlm llm(Script({Cmd("sleep 30"), Cmd("sleep 31"), Cmd("echo refused"), trial, Text("done")}));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  ASSERT_EQ(r["execution_ids"].size(), 4u);
  EXPECT_EQ(Execution(r["execution_ids"][0])["status"], "timed_out");
  EXPECT_EQ(Execution(r["execution_ids"][1])["status"], "timed_out");
  json refused = Execution(r["execution_ids"][2]);
  EXPECT_EQ(refused["status"], "rejected");
  EXPECT_NE(refused["error"].get<std::string>().find("circuit breaker tool:ExecuteCommand"), std::string::npos)
      << refused;
  EXPECT_EQ(refused["duration_us"].get<int64_t>() < 1'000'000, true) << "refused at once";
  EXPECT_EQ(Execution(r["execution_ids"][3])["status"], "ok");
  // The model read the refusal as a ground-truth record.
  json seen = json::parse(LastMessageOf(Requests(llm)[3])["content"].get<std::string>());
  EXPECT_EQ(seen["status"], "rejected");
  std::vector<json> transitions = GateEvents("breaker");
  ASSERT_EQ(transitions.size(), 3u);
  EXPECT_EQ(transitions[0]["to"], "open");
  EXPECT_EQ(transitions[0]["_execution_id"], r["execution_ids"][1]);
  EXPECT_EQ(transitions[1]["to"], "half_open");
  EXPECT_EQ(transitions[2]["to"], "closed");
  // The JSON output shows the breaker as the run left it.
  bool shown = false;
  for (const json& b : r["breakers"]) {
    if (b["name"] == "tool:ExecuteCommand") {
      shown = true;
      EXPECT_EQ(b["state"], "closed");
    }
  }
  EXPECT_TRUE(shown) << r["breakers"];
}

TEST_F(OdinGuardsTest, AnOpenBreakerShowsInTheJsonOutputAndInOdinLog) {
  config_["budgets"]["tool_timeouts"] = {{"ExecuteCommand", 1}};
  config_["breakers"] = {{"failures", 2}};
  FakeLlm llm(Script({Cmd("sleep 30"), Cmd("sleep 31"), Text("stopping here")}));
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  json breaker;
  for (const json& b : r["breakers"]) {
    if (b["name"] == "tool:ExecuteCommand") breaker = b;
  }
  ASSERT_TRUE(breaker.is_object()) << r["breakers"];
  EXPECT_EQ(breaker["state"], "open");
  EXPECT_EQ(breaker["consecutive_failures"], 2);
  EXPECT_EQ(breaker["last_failure"], "timed out");
  EXPECT_GT(breaker["reopens_in_ms"].get<int64_t>(), 0);
  Ran log = RunOdin(ws_.path(), {"log"});
  EXPECT_EQ(log.exit_code, 0);
  EXPECT_NE(log.out.find("Circuit breakers of session"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("tool:ExecuteCommand"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("open"), std::string::npos) << log.out;
}

}  // namespace
}  // namespace odin::testing
