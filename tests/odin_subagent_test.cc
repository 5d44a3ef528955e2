// Subagents (AgentTool) end to end: the real odin, subagent workers, tool
// workers and ledger, with the fake model routing each subagent's requests by
// its prompt.

#include <signal.h>
#include <sys/wait.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/llm_requests.h"
#include "tests/ledger_rows.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

json Agent(const std::string& prompt, const std::string& mode) {
  return Call("AgentTool", {{"description", prompt.substr(0, 6)}, {"prompt", prompt}, {"mode", mode}});
}

class OdinSubagentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    config_["checks"] = {{"build", ""}, {"lint", ""}, {"tests", ""}};
    config_["agent"] = {{"subagent_concurrency", 4}};
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  // The settings go to the user's config: subagent settings are not a
  // workspace's to make until it is trusted.
  void WriteConfig() {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config_.dump(2)).ok());
  }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    WriteConfig();
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "exit " << last_.exit_code << "\nstdout: " << last_.out
                                   << "\nstderr: " << last_.err;
    return j;
  }
  static std::vector<json> Requests(const FakeLlm& llm) { return RequestsOf(llm); }
  // The main script's requests (the parent's), in order.
  static std::vector<json> ParentRequests(const FakeLlm& llm) {
    std::vector<json> out;
    for (const json& r : Requests(llm)) {
      if (r["n"].get<int64_t>() < 1000000) out.push_back(r);
    }
    return out;
  }
  static std::vector<json> ToolResults(const json& request) { return ToolResultsOf(request); }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_.Join(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }
  // Rows of the ledger: each row's columns joined by '|'.
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  json config_ = json::object();
  Ran last_;
};

TEST_F(OdinSubagentTest, FourResearchSubagentsRunInParallelAndEachAnswers) {
  json agents = json::object();
  std::vector<json> spawn;
  for (const char* name : {"north", "south", "east", "west"}) {
    std::string file = std::string(name) + ".txt";
    Put(file, std::string("region ") + name + "\nsecret = " + name + "-42\n");
    std::string prompt = "research " + std::string(name) + ": what is the secret in " + file + "?";
    spawn.push_back(Agent(prompt, "ask"));
    agents["research " + std::string(name)] = {Turn({Call("Grep", {{"pattern", "secret"}, {"path", file}})}),
                                               Turn({Call("Read", {{"file_path", file}})}),
                                               Text(std::string("The secret in ") + file + " is " + name + "-42.")};
  }
  FakeLlm llm(json({{"responses", {Turn(spawn), Text("All four secrets found.")}}, {"agents", agents}}).dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  ASSERT_EQ(r["execution_ids"].size(), 4u);

  // The parent's next request holds the four answers, each with its report.
  std::vector<json> parent = ParentRequests(llm);
  ASSERT_EQ(parent.size(), 2u);
  std::vector<json> results = ToolResults(parent[1]);
  ASSERT_EQ(results.size(), 4u);
  const char* names[] = {"north", "south", "east", "west"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i]["tool"], "AgentTool");
    EXPECT_EQ(results[i]["status"], "ok") << results[i].dump();
    std::string output = results[i]["output"];
    EXPECT_NE(output.find(std::string(names[i]) + "-42"), std::string::npos) << output;
    EXPECT_NE(output.find("Odin report (from the ledger"), std::string::npos) << output;
  }
  // Every subagent call is in the ledger under the subagent's id, linked to
  // its AgentTool execution, and went through a read-only tool worker.
  std::vector<std::string> calls = Rows(
      "SELECT s.agent_id, s.tool, s.parent_id, e.status FROM execution_starts s JOIN execution_ends e "
      "ON e.execution_id = s.execution_id WHERE s.agent_id LIKE 'sub_%' ORDER BY s.seq");
  ASSERT_EQ(calls.size(), 8u);
  std::set<std::string> subagents, parents;
  for (const std::string& row : calls) {
    subagents.insert(row.substr(0, row.find('|')));
    EXPECT_NE(row.find("|ok"), std::string::npos) << row;
  }
  EXPECT_EQ(subagents.size(), 4u);
  for (const json& id : r["execution_ids"]) {
    EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts WHERE parent_id = '" + id.get<std::string>() + "'")[0], "2");
  }
  // Their model calls were made and recorded by the coordinator.
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM llm_calls WHERE agent_id LIKE 'sub_%' AND role = 'subagent'")[0], "12");
  // They ran at once: every AgentTool call started before any of them ended.
  std::vector<std::string> spans = Rows(
      "SELECT MAX(s.started_at_ms) <= MIN(e.finished_at_ms) FROM execution_starts s JOIN execution_ends e "
      "ON e.execution_id = s.execution_id WHERE s.tool = 'AgentTool'");
  EXPECT_EQ(spans[0], "1");
  // A subagent is offered its mode's tools, never AgentTool.
  for (const json& req : Requests(llm)) {
    if (req["n"].get<int64_t>() < 1000000) continue;
    for (const json& t : req["body"]["tools"]) EXPECT_NE(t["function"]["name"], "AgentTool");
  }
}

TEST_F(OdinSubagentTest, ASubagentThatTriesAgentToolIsRefused) {
  json agents = {{"nested task", {Turn({Agent("a grandchild", "ask")}), Text("I could not start one.")}}};
  FakeLlm llm(json({{"responses", {Turn({Agent("nested task: start another agent", "ask")}), Text("done")}},
                    {"agents", agents}})
                  .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<std::string> refused = Rows(
      "SELECT s.agent_id, e.status, e.error FROM execution_starts s JOIN execution_ends e ON e.execution_id = "
      "s.execution_id WHERE s.tool = 'AgentTool' AND s.agent_id LIKE 'sub_%'");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("|rejected|"), std::string::npos) << refused[0];
  EXPECT_NE(refused[0].find("a subagent cannot start subagents"), std::string::npos) << refused[0];
  // No second subagent ever ran: one AgentTool call succeeded, from main.
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts WHERE tool = 'AgentTool' AND agent_id = 'main'")[0], "1");
  EXPECT_EQ(Rows("SELECT COUNT(DISTINCT agent_id) FROM llm_calls WHERE role = 'subagent'")[0], "1");
}

// With --network, an edit-mode subagent is told its commands have the
// network, as the main agent is.
TEST_F(OdinSubagentTest, AnEditSubagentIsToldItsCommandsHaveTheNetwork) {
  json agents = {{"net task", {Text("noted")}}};
  FakeLlm llm(
      json({{"responses", {Turn({Agent("net task: look", "edit")}), Text("done")}}, {"agents", agents}}).dump());
  json r = Prompt(llm, {"--network"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::string description;
  for (const json& request : Requests(llm)) {
    if (request["n"].get<int64_t>() < 1000000) continue;  // the parent's
    for (const json& t : request["body"]["tools"]) {
      if (t["function"]["name"] == "ExecuteCommand") description = t["function"]["description"];
    }
  }
  EXPECT_NE(description.find("the network (the user turned it on)"), std::string::npos) << description;
}

TEST_F(OdinSubagentTest, WhenASubagentIsKilledTheParentContinues) {
  std::string slow = "sleep 47." + std::to_string(getpid());
  json agents = {{"doomed task", {Turn({Call("ExecuteCommand", {{"command", slow}})}), Text("unreachable")}}};
  // The parent's answer is held until the test has watched what the crash left.
  TempWorkspace release;
  json late = Text("The subagent died; I carry on.");
  late["hold_until"] = release.Join("answer");
  FakeLlm llm(
      json({{"responses", {Turn({Agent("doomed task: wait for it", "ask")}), late}}, {"agents", agents}}).dump());
  WriteConfig();
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "do the task", "--output-format", "json"}, &out, Env(llm));
  // Once the subagent's command runs, its worker is killed.
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg(slow).empty(); })) << "the subagent never ran its command";
  std::vector<pid_t> workers = ProcessesWithArg("odin-subagent", ws_.path());
  ASSERT_FALSE(workers.empty());
  for (pid_t p : workers) kill(p, SIGKILL);
  // What the subagent had running ends with it, while the parent goes on.
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArg(slow).empty(); }, std::chrono::seconds(2)))
      << "the subagent's command outlived it";
  EXPECT_EQ(waitpid(odin, nullptr, WNOHANG), 0) << "odin was still running then";
  ASSERT_TRUE(WriteFileAtomic(release.Join("answer"), "").ok());
  std::string text = ReadUntil(out, "\n}");
  close(out);
  int code = Wait(odin);
  json r = json::parse(text.substr(0, text.rfind('}') + 1), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << text;
  EXPECT_EQ(code, 0);
  EXPECT_EQ(r["status"], "done");
  EXPECT_EQ(r["result"], "The subagent died; I carry on.");
  std::vector<std::string> tool = Rows(
      "SELECT e.status FROM execution_ends e JOIN execution_starts s ON "
      "s.execution_id = e.execution_id WHERE s.tool = 'AgentTool'");
  ASSERT_EQ(tool.size(), 1u);
  EXPECT_EQ(tool[0], "crashed");
  std::vector<json> parent = ParentRequests(llm);
  ASSERT_EQ(parent.size(), 2u);
  json record = ToolResults(parent[1])[0];
  EXPECT_EQ(record["status"], "crashed") << record.dump();
}

TEST_F(OdinSubagentTest, ASubagentPastItsDeadlineEndsAsTimedOutAndTheParentContinues) {
  config_["agent"]["subagent_timeout_seconds"] = 1;
  std::string slow = "sleep 59." + std::to_string(getpid());
  json agents = {{"slow task", {Turn({Call("ExecuteCommand", {{"command", slow}})}), Text("unreachable")}}};
  FakeLlm llm(json({{"responses", {Turn({Agent("slow task: wait", "ask")}), Text("It took too long; moving on.")}},
                    {"agents", agents}})
                  .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["result"], "It took too long; moving on.");
  std::vector<std::string> end = Rows(
      "SELECT e.status, e.exit_reason FROM execution_ends e JOIN execution_starts s "
      "ON s.execution_id = e.execution_id WHERE s.tool = 'AgentTool'");
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0], "timed_out|timeout");
  EXPECT_EQ(Rows("SELECT e.status FROM execution_ends e JOIN execution_starts s ON s.execution_id = "
                 "e.execution_id WHERE s.args_json LIKE '%sleep 59.%'"),
            std::vector<std::string>{"cancelled"});
  EXPECT_TRUE(ProcessesWithArg(slow).empty());
  std::vector<json> parent = ParentRequests(llm);
  ASSERT_EQ(parent.size(), 2u);
  EXPECT_EQ(ToolResults(parent[1])[0]["status"], "timed_out");
}

TEST_F(OdinSubagentTest, WhenSubagentsUseUpTheBudgetAllOfThemStop) {
  // "one" runs short commands; "two" and "three" (in ask mode, so their
  // commands run side by side: commands that can write take turns) start
  // one that would run for a minute. The AgentTool calls and the three
  // first commands use the budget of 6 tool calls: one's second command is
  // refused, and every subagent stops, the long commands killed. One's
  // second command is held until the test sees both long ones running, so
  // it comes last.
  config_["workers"] = {{"count", 3}};
  std::string slow = "sleep 61." + std::to_string(getpid());
  TempWorkspace release;
  json agents = json::object();
  std::vector<json> spawn;
  for (const char* name : {"one", "two", "three"}) {
    bool first = std::string(name) == "one";
    std::vector<json> turns;
    for (int i = 0; i < 5; ++i) {
      std::string command = first ? "echo " + std::to_string(i) : slow;
      json turn = Turn({Call("ExecuteCommand", {{"command", command + " # " + std::to_string(i)}})});
      if (first && i == 1) turn["hold_until"] = release.Join("go");
      turns.push_back(turn);
    }
    turns.push_back(Text("unreachable"));
    agents[std::string("worker ") + name] = turns;
    spawn.push_back(Agent(std::string("worker ") + name + ": keep going", first ? "edit" : "ask"));
  }
  FakeLlm llm(json({{"responses", {Turn(spawn), Text("unreachable")}}, {"agents", agents}}).dump());
  WriteConfig();
  int out = -1;
  pid_t odin =
      StartOdin(ws_.path(), {"-p", "do the task", "--output-format", "json", "--max-tool-calls", "6"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArg(slow).size() >= 2; }, std::chrono::seconds(30)))
      << "the long commands never ran";
  ASSERT_TRUE(WriteFileAtomic(release.Join("go"), "").ok());
  std::string text = ReadUntil(out, "\n}");
  close(out);
  last_.exit_code = Wait(odin);
  json r = json::parse(text.substr(0, text.rfind('}') + 1), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << text;
  EXPECT_EQ(r["status"], "budget_exceeded") << last_.err;
  EXPECT_EQ(last_.exit_code, 4);
  EXPECT_EQ(r["budget"]["exceeded"], "tool_calls");
  EXPECT_TRUE(ProcessesWithArg(slow).empty());
  // Three subagent calls were let through; the next was refused for the budget.
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts s JOIN execution_ends e ON e.execution_id = "
                 "s.execution_id WHERE s.agent_id LIKE 'sub_%' AND e.status != 'rejected'")[0],
            "3");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts s JOIN execution_ends e ON e.execution_id = "
                 "s.execution_id WHERE s.agent_id LIKE 'sub_%' AND e.status = 'rejected' AND e.error "
                 "LIKE '%budget exceeded%'")[0],
            "1");
  // Every subagent stopped for the budget, none crashed or was killed.
  std::vector<std::string> ends = Rows(
      "SELECT e.status, e.exit_reason FROM execution_ends e JOIN execution_starts s "
      "ON s.execution_id = e.execution_id WHERE s.tool = 'AgentTool'");
  ASSERT_EQ(ends.size(), 3u);
  for (const std::string& end : ends) EXPECT_EQ(end, "cancelled|budget_exceeded");
  // So did their long commands.
  std::vector<std::string> commands = Rows(
      "SELECT e.status FROM execution_ends e JOIN execution_starts s ON "
      "s.execution_id = e.execution_id WHERE s.args_json LIKE '%sleep 61.%'");
  ASSERT_EQ(commands.size(), 2u);
  for (const std::string& status : commands) EXPECT_EQ(status, "cancelled");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts WHERE execution_id NOT IN (SELECT execution_id FROM "
                 "execution_ends)")[0],
            "0");
}

TEST_F(OdinSubagentTest, TwoSubagentsEditingOneFileBothLandTheirEdits) {
  Put("shared.txt", "alpha = 0\nbeta = 0\n");
  auto script = [&](const std::string& me, const std::string& other, const std::string& key) {
    json edit = Turn(
        {Call("EditTool", {{"file_path", "shared.txt"}, {"old_string", key + " = 0"}, {"new_string", key + " = 1"}})});
    // Both read before either edits: each subagent's edit is held until the
    // other's marker exists. (The markers come from commands, which may take
    // turns in the writers' lane, so a command must not wait for the other's.)
    json held = edit;
    held["hold_until"] = ws_.Join("ready_" + other);
    return json::array(
        {Turn(
             {Call("Read", {{"file_path", "shared.txt"}}), Call("ExecuteCommand", {{"command", "touch ready_" + me}})}),
         held,
         {{"when", "changed since you read it"}, {"then", {Turn({Call("Read", {{"file_path", "shared.txt"}})}), edit}}},
         Text(key + " is 1 now")});
  };
  json agents = {{"edit alpha", script("a", "b", "alpha")}, {"edit beta", script("b", "a", "beta")}};
  FakeLlm llm(json({{"responses",
                     {Turn({Agent("edit alpha: set alpha to 1 in shared.txt", "edit"),
                            Agent("edit beta: set beta to 1 in shared.txt", "edit")}),
                      Text("Both values are 1.")}},
                    {"agents", agents}})
                  .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("shared.txt"), "alpha = 1\nbeta = 1\n");
  // One edit landed first; the other was refused as stale, re-read, retried.
  std::vector<std::string> edits = Rows(
      "SELECT s.agent_id, e.status FROM execution_starts s JOIN execution_ends e ON e.execution_id = "
      "s.execution_id WHERE s.tool = 'EditTool' ORDER BY e.seq");
  ASSERT_EQ(edits.size(), 3u);
  std::vector<std::string> stale = Rows(
      "SELECT s.agent_id FROM execution_starts s JOIN execution_ends e ON e.execution_id = s.execution_id "
      "WHERE s.tool = 'EditTool' AND e.status = 'rejected' AND e.error LIKE '%changed since you read it%'");
  ASSERT_EQ(stale.size(), 1u);
  std::string loser = stale[0];
  std::vector<std::string> after = Rows(
      "SELECT s.tool, e.status FROM execution_starts s JOIN execution_ends e ON e.execution_id = s.execution_id "
      "WHERE s.agent_id = '" +
      loser + "' AND s.tool != 'lsp_check' ORDER BY s.seq");
  ASSERT_EQ(after.size(), 5u);  // Read, barrier, stale EditTool, Read, EditTool (and its validation)
  EXPECT_EQ(after[2], "EditTool|rejected");
  EXPECT_EQ(after[3], "Read|ok");
  EXPECT_EQ(after[4], "EditTool|ok");
  // The barrier commands' markers are changes too (in the order the
  // subagents finished).
  std::vector<std::string> changed = r["changed_files"];
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<std::string>{"ready_a", "ready_b", "shared.txt"}));
  // Each marker is a mutation of the subagent's command that made it.
  EXPECT_EQ(Rows("SELECT substr(m.path, length('" + ws_.path() +
                 "') + 2) || '|' || m.change || '|' || (s.agent_id != 'main') FROM mutations m JOIN "
                 "execution_starts s ON s.execution_id = m.execution_id WHERE s.tool = 'ExecuteCommand' ORDER BY "
                 "m.path"),
            (std::vector<std::string>{"ready_a|created|1", "ready_b|created|1"}));
}

// Edit-mode subagents' commands run side by side, each over an overlay of
// its own: each change set is its own command's, and where both changed one
// path, the one that ended second finds it changed meanwhile: a conflict,
// reported, its version kept aside, nothing lost. So it goes for a file
// both wrote, for one the other deleted (not brought back), and for a file
// inside a nested repository's .git (not a mutation, but numbered all the
// same); different files in one ignored directory are no conflict.
TEST_F(OdinSubagentTest, SubagentsCommandsRunSideBySideAndTheLaterWriteToAFileIsAConflict) {
  StatusOr<CommandOutput> init = RunCommand({.argv = {"git", "init", "-q", ws_.path()}, .env = CurrentEnvironment()});
  ASSERT_TRUE(init.ok() && init->exit_code == 0);
  Put(".gitignore", "build/\n");
  Put("shared.txt", "base\n");
  Put("doomed.txt", "doomed\n");
  Put("build/one.o", "0\n");
  Put("build/two.o", "0\n");
  Put("sub/.git/HEAD", "ref: refs/heads/main\n");
  Put("sub/.git/FETCH_HEAD", "base\n");
  // The first stops itself once it has written. The second's model asks
  // for its command only then, and the test lets the first go on once the
  // second's changes have landed: which happens only if the second ran
  // while the first still ran.
  TempWorkspace release;
  json second_turn = Turn({Call("ExecuteCommand", {{"command",
                                                    "echo two > b.txt; echo second >> shared.txt; rm doomed.txt; "
                                                    "echo 2 > build/two.o; echo second > sub/.git/FETCH_HEAD"}})});
  second_turn["hold_until"] = release.Join("first_runs");
  // An ask-mode subagent looks first: its read-only worker's Hello says
  // nothing of an overlay, which must not stop commands sharing the lane.
  json agents = {
      {"look", {Turn({Call("ExecuteCommand", {{"command", "ls"}})}), Text("looked")}},
      {"first",
       {Turn({Call("ExecuteCommand", {{"command",
                                       "echo one > a.txt; echo first >> shared.txt; echo first >> doomed.txt; "
                                       "echo 1 > build/one.o; echo first > sub/.git/FETCH_HEAD; kill -STOP $$"}})}),
        Text("first done")}},
      {"second", {second_turn, Text("second done")}}};
  FakeLlm llm(
      json({{"responses",
             {Turn({Agent("look: list the files", "ask")}),
              Turn({Agent("first: write a.txt", "edit"), Agent("second: write b.txt", "edit")}), Text("Both ran.")}},
            {"agents", agents}})
          .dump());
  std::atomic<bool> overlapped{false};
  std::thread outsider([&] {
    std::string overlay = ws_.Join(".odin/overlay");
    auto first_waits = [&] {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(overlay, ec)) {
        if (PathExists(e.path().string() + "/u/sub/.git/FETCH_HEAD")) return true;
      }
      return false;
    };
    EXPECT_TRUE(WaitUntil(first_waits, std::chrono::seconds(30)));
    EXPECT_TRUE(WriteFileAtomic(release.Join("first_runs"), "").ok());
    overlapped = WaitUntil([&] { return PathExists(ws_.Join("b.txt")); }, std::chrono::seconds(30));
    for (pid_t pid : ProcessesWithEnv("ODIN_TEST_MARK", marker_)) kill(pid, SIGCONT);
  });
  json r = Prompt(llm);
  outsider.join();
  // The first subagent's version of the shared files did not land: the run
  // says so (issue 47, item 3), with the paths and where they are kept.
  EXPECT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_EQ(last_.exit_code, 10);
  EXPECT_EQ(r["report"]["conflicts"].size(), 3u) << r["report"].dump();
  EXPECT_TRUE(overlapped) << "the second subagent's command did not land while the first's ran";
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Get("b.txt"), "two\n");
  EXPECT_EQ(Get("shared.txt"), "base\nsecond\n");
  EXPECT_FALSE(PathExists(ws_.Join("doomed.txt"))) << "a file another command deleted was brought back";
  EXPECT_EQ(Get("sub/.git/FETCH_HEAD"), "second\n");
  EXPECT_EQ(Get("build/one.o"), "1\n");
  EXPECT_EQ(Get("build/two.o"), "2\n");
  std::vector<std::string> first =
      Rows("SELECT execution_id FROM execution_starts WHERE args_json LIKE '%kill -STOP%'");
  std::vector<std::string> second = Rows("SELECT execution_id FROM execution_starts WHERE args_json LIKE '%echo two%'");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  std::string kept = ".odin/conflicts/" + first[0] + "/";
  EXPECT_EQ(Get(kept + "shared.txt"), "base\nfirst\n");
  EXPECT_EQ(Get(kept + "doomed.txt"), "doomed\nfirst\n");
  EXPECT_EQ(Get(kept + "sub/.git/FETCH_HEAD"), "first\n");
  EXPECT_FALSE(PathExists(ws_.Join(kept + "build"))) << "different files in one ignored directory conflicted";
  EXPECT_EQ(Rows("SELECT execution_id || '|' || change FROM mutations WHERE path LIKE '%/shared.txt'"),
            std::vector<std::string>{second[0] + "|modified"});
  EXPECT_EQ(Rows("SELECT execution_id || '|' || change FROM mutations WHERE path LIKE '%/doomed.txt'"),
            std::vector<std::string>{second[0] + "|deleted"});
  EXPECT_EQ(Rows("SELECT execution_id FROM mutations WHERE path LIKE '%/a.txt'"), first);
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'overlay_conflict'")[0], "1");
  // The first subagent's model reads it in its command's result.
  int told = 0;
  for (const json& request : Requests(llm)) {
    for (const json& result : ToolResults(request)) {
      std::string text = result.value("output", "");
      if (text.find("changed by something else while the command ran") != std::string::npos &&
          text.find(".odin/conflicts/" + first[0] + "): ") != std::string::npos &&
          text.find("shared.txt") != std::string::npos && text.find("doomed.txt") != std::string::npos &&
          text.find("sub/.git/FETCH_HEAD") != std::string::npos) {
        ++told;
      }
    }
  }
  EXPECT_EQ(told, 1);
}

}  // namespace
}  // namespace odin::testing
