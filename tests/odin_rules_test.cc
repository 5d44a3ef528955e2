// The command rules and odin's input limits end to end (findings 8 and 6 of
// the security review), through the real odin, sandbox and workers.
//   - With {"permissions":{"deny":["rm","git push"]}}, every bypass the
//     review found is refused, whether it comes through odin exec, odin tool
//     (edit and ask modes) or an agent session: the file v survives, the
//     remote gets no push, and the refusal is in the ledger.
//   - Input too deep or too long for odin to read (tool arguments 60,000
//     levels deep, 15,000 or 5,000 nested $( ) is refused with one line, the
//     session goes on, odin exits normally and the ledger verifies.

#include <sqlite3.h>
#include <stdio.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/ledger_rows.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

struct Bypass {
  std::string command;            // as the model writes it (odin tool, the agent)
  std::vector<std::string> argv;  // as odin exec runs it
  bool asks = false;              // needs approval (refused by the headless policy) rather than denied
};

// The review's list, verbatim.
const std::vector<Bypass>& ReviewBypasses() {
  static const std::vector<Bypass> list = {
      {"r\\\nm v", {"bash", "-c", "r\\\nm v"}},
      {"coproc rm v", {"bash", "-c", "coproc rm v"}},
      {"coproc X { rm v; }", {"bash", "-c", "coproc X { rm v; }"}},
      {"sh -c -- 'rm v'", {"sh", "-c", "--", "rm v"}},
      {"bash -c -- 'rm v'", {"bash", "-c", "--", "rm v"}},
      {"eval -- rm v", {"bash", "-c", "eval -- rm v"}},
      {"env -S'rm v'", {"env", "-Srm v"}},
      {"git -C . push", {"git", "-C", ".", "push"}},
      {"git -c a=b push", {"git", "-c", "a=b", "push"}},
      {"git -P push", {"git", "-P", "push"}},
      {"git --git-dir=.git push", {"git", "--git-dir=.git", "push"}},
      {"unshare -r rm v", {"unshare", "-r", "rm", "v"}},
      {"prlimit --nofile=64 rm v", {"prlimit", "--nofile=64", "rm", "v"}},
      {"runuser -u root -- rm v", {"runuser", "-u", "root", "--", "rm", "v"}},
      {"su -c 'rm v'", {"su", "-c", "rm v"}},
      {"script -qc 'rm v' /dev/null", {"script", "-qc", "rm v", "/dev/null"}},
      {"watch -g rm v", {"watch", "-g", "rm", "v"}},
      {"nsenter -t 1 rm v", {"nsenter", "-t", "1", "rm", "v"}},
      {"fakeroot rm v", {"fakeroot", "rm", "v"}},
      {"valgrind rm v", {"valgrind", "rm", "v"}},
      {"cd; cd ../etc; head shadow", {"bash", "-c", "cd; cd ../etc; head shadow"}, true},
      {"git -c alias.x='!rm v' x", {"git", "-c", "alias.x=!rm v", "x"}},
      {"git -c core.pager='rm v' log", {"git", "-c", "core.pager=rm v", "log"}},
  };
  return list;
}

std::string Nested(int depth, bool objects) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (int i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

std::string Repeated(const std::string& unit, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += unit;
  return s;
}

// $( nested levels times: 15,000 (the review's) make 45 KB, too long for
// odin to read at all; 5,000 make 15 KB, read and found too deep.
std::string DeepCommand(int levels = 15000) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += "$(";
  s += "true";
  for (int i = 0; i < levels; ++i) s += ")";
  return s;
}

class OdinRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A repository whose push would land in remote.git, one commit ahead.
    ASSERT_EQ(Sh("git init -q && git symbolic-ref HEAD refs/heads/main && "
                 "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one && "
                 "git init -q --bare remote.git && git remote add origin remote.git && "
                 "git push -q -u origin main 2>&1 && "
                 "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two && echo ok"),
              "ok\n");
    remote_before_ = RemoteHead();
    ASSERT_NE(remote_before_, Sh("git rev-parse main"));
    Put("v", "keep me\n");
    config_["permissions"] = {{"deny", {"rm", "git push"}}};
    config_["checks"] = {{"build", ""}, {"lint", ""}, {"tests", ""}};
    Put("odinconfig.json", config_.dump(2));
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
    // Nothing denied ran, and the record of it is intact.
    EXPECT_EQ(Get("v"), "keep me\n");
    EXPECT_EQ(RemoteHead(), remote_before_) << "a push went through";
    Ran verify = RunOdin(ws_.path(), {"ledger", "verify"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }

  // A shell command in the workspace (setup and inspection), its stdout.
  std::string Sh(const std::string& command) {
    std::string out;
    FILE* p = popen(("cd '" + ws_.path() + "' && " + command).c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
  }
  std::string RemoteHead() { return Sh("git --git-dir=remote.git rev-parse main"); }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) {
    StatusOr<std::string> content = ReadFileToString(ws_.Join(rel));
    return content.ok() ? *content : "(gone)";
  }
  std::map<std::string, std::string> Env(const FakeLlm* llm = nullptr, bool anthropic = false) {
    std::map<std::string, std::string> env = {{"ODIN_TEST_MARK", marker_}};
    if (llm != nullptr) {
      env["OPENAI_BASE_URL"] = anthropic ? "" : llm->OpenAiUrl();
      env["OPENAI_API_KEY"] = anthropic ? "" : "test-key";
      env["ANTHROPIC_BASE_URL"] = anthropic ? llm->AnthropicUrl() : "";
      env["ANTHROPIC_API_KEY"] = anthropic ? "test-key" : "";
    }
    return env;
  }
  json Run(const std::vector<std::string>& args, const FakeLlm* llm = nullptr, bool anthropic = false) {
    last_ = RunOdin(ws_.path(), args, Env(llm, anthropic));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "odin " << args[0] << "\nstdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  // Rows of the ledger: each row's columns joined by '|'.
  std::vector<std::string> Rows(const std::string& sql, const std::string& bind = "") {
    return LedgerRows(ws_.Join(".odin/odin.db"), sql, bind);
  }
  // The execution as the ledger has it (odin show --json).
  json Shown(const std::string& execution_id) {
    Ran shown = RunOdin(ws_.path(), {"show", execution_id, "--json"});
    json j = json::parse(shown.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << shown.out << shown.err;
    return j;
  }
  // A refused call: rejected, with the reason in its error, ended in the
  // ledger and with the gate's decision recorded against it.
  void ExpectRefused(const std::string& execution_id, const std::string& status, const std::string& error,
                     const Bypass& b, const std::string& how) {
    SCOPED_TRACE(how + ": " + b.command);
    EXPECT_EQ(status, "rejected");
    EXPECT_NE(error.find(b.asks ? "needs approval" : "deny rule"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    json shown = Shown(execution_id);
    EXPECT_EQ(shown["status"], "rejected") << shown.dump();
    std::vector<std::string> gate =
        Rows("SELECT kind, detail_json FROM gate_events WHERE execution_id = ? ORDER BY seq", execution_id);
    ASSERT_FALSE(gate.empty()) << "no gate event for " << execution_id;
    if (b.asks) {
      EXPECT_EQ(gate[0].substr(0, gate[0].find('|')), "approval") << gate[0];
      EXPECT_NE(gate[0].find("denied by policy"), std::string::npos) << gate[0];
    } else {
      EXPECT_EQ(gate[0].substr(0, gate[0].find('|')), "command_rule") << gate[0];
      EXPECT_NE(gate[0].find(R"("decision":"deny")"), std::string::npos) << gate[0];
    }
    EXPECT_EQ(Get("v"), "keep me\n");
    EXPECT_EQ(RemoteHead(), remote_before_);
  }
  void ToolRefusesEach(const std::string& mode) {
    for (const Bypass& b : ReviewBypasses()) {
      json r = Run({"tool", "ExecuteCommand", json({{"command", b.command}}).dump(), "--mode", mode, "--json"});
      EXPECT_EQ(last_.exit_code, 1) << b.command;
      ExpectRefused(r.value("execution_id", ""), r.value("status", ""), r.value("error", ""), b, "odin tool " + mode);
    }
  }
  void ExecRefusesEach(const std::string& mode) {
    for (const Bypass& b : ReviewBypasses()) {
      std::vector<std::string> args = {"exec", "--mode", mode, "--json", "--"};
      args.insert(args.end(), b.argv.begin(), b.argv.end());
      json r = Run(args);
      EXPECT_EQ(last_.exit_code, 125) << b.command;
      ExpectRefused(r.value("execution_id", ""), r.value("status", ""), r.value("error", ""), b, "odin exec " + mode);
    }
  }
  // The executions of a session's agent, oldest first: "id|tool|status".
  std::vector<std::string> Executions(const std::string& agent_like = "%") {
    return Rows(
        "SELECT s.execution_id, s.tool, e.status FROM execution_starts s JOIN execution_ends e "
        "ON e.execution_id = s.execution_id WHERE s.agent_id LIKE ? AND s.tool IN ('ExecuteCommand', 'Read') "
        "ORDER BY s.seq",
        agent_like);
  }

  TempWorkspace ws_;
  std::string marker_ = UniqueMarker();
  json config_ = json::object();
  std::string remote_before_;
  Ran last_;
};

// ---- finding 8: the review's bypasses ------------------------------------------

TEST_F(OdinRulesTest, OdinToolRefusesTheReviewsBypassesInEditMode) { ToolRefusesEach("edit"); }

TEST_F(OdinRulesTest, OdinToolRefusesTheReviewsBypassesInAskMode) { ToolRefusesEach("ask"); }

TEST_F(OdinRulesTest, OdinExecRefusesTheReviewsBypassesInEditMode) { ExecRefusesEach("edit"); }

TEST_F(OdinRulesTest, OdinExecRefusesTheReviewsBypassesInAskMode) { ExecRefusesEach("ask"); }

TEST_F(OdinRulesTest, AnAgentSessionIsRefusedEachBypassAndGoesOn) {
  std::vector<json> calls;
  for (const Bypass& b : ReviewBypasses()) calls.push_back(Call("ExecuteCommand", {{"command", b.command}}));
  FakeLlm llm(json({{"responses", {Turn(calls), Text("done")}}}).dump());
  json r = Run({"-p", "clean up", "--output-format", "json"}, &llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  // The model hears of each refusal, in order, and the ledger has them.
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), ReviewBypasses().size());
  for (size_t i = 0; i < results.size(); ++i) {
    const Bypass& b = ReviewBypasses()[i];
    ExpectRefused(results[i]["execution_id"], results[i]["status"], results[i]["summary"], b, "agent");
  }
}

// ---- finding 6: input nested too deep ------------------------------------------

class OdinDeepInputTest : public OdinRulesTest, public ::testing::WithParamInterface<bool> {};

// A model returns tool arguments nested 60,000 deep (arrays, then objects)
// and a command with 15,000 nested $( ): each call is refused with one line,
// the session goes on to the model's answer, and the ledger's readers cope.
TEST_P(OdinDeepInputTest, ASessionRefusesDeepInputAndEndsNormally) {
  bool anthropic = GetParam();
  std::string deep_arrays = "{\"command\":" + Nested(60000, false) + "}";
  std::string deep_objects = "{\"file_path\":" + Nested(60000, true) + "}";
  json calls = {{{"name", "ExecuteCommand"}, {"arguments_raw", deep_arrays}},
                {{"name", "Read"}, {"arguments_raw", deep_objects}},
                Call("ExecuteCommand", {{"command", DeepCommand()}}),
                Call("ExecuteCommand", {{"command", DeepCommand(5000)}}),
                Call("ExecuteCommand", {{"command", Repeated("[[ ( ", 40000)}}),
                Call("ExecuteCommand", {{"command", "echo alive > alive.txt"}})};
  FakeLlm llm(json({{"responses", {{{"tool_calls", calls}}, Text("done")}}}).dump());
  // stream-json prints each call's arguments as it starts.
  last_ = RunOdin(ws_.path(), {"-p", "go", "--output-format", "stream-json"}, Env(&llm, anthropic));
  EXPECT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_NE(last_.out.find(R"("type":"tool_call_start")"), std::string::npos);
  EXPECT_EQ(Get("alive.txt"), "alive\n") << "the call after the refusals ran";
  ASSERT_EQ(RequestsOf(llm).size(), 2u) << "the session went on to the model's answer";

  std::vector<std::string> ex = Executions();
  ASSERT_EQ(ex.size(), 6u);
  const char* reasons[] = {"ExecuteCommand: JSON arguments: nested more than 64 levels deep",
                           "Read: JSON arguments: nested more than 64 levels deep",
                           "the command is longer than 16384 bytes: too long to check",
                           "nests substitutions, subshells or blocks more than 64 levels deep: too deep to check",
                           "the command is longer than 16384 bytes: too long to check"};
  for (size_t i = 0; i < 5; ++i) {
    std::string id = ex[i].substr(0, ex[i].find('|'));
    EXPECT_NE(ex[i].find("|rejected"), std::string::npos) << ex[i];
    json shown = Shown(id);
    EXPECT_EQ(shown["status"], "rejected");
    std::string error = shown.dump();
    EXPECT_NE(error.find(reasons[i]), std::string::npos) << error.substr(0, 500);
  }
  EXPECT_NE(ex[5].find("|ok"), std::string::npos) << ex[5];
  // The deep arguments are on record as text.
  std::string id0 = ex[0].substr(0, ex[0].find('|'));
  EXPECT_EQ(Rows("SELECT args_json FROM execution_starts WHERE execution_id = ?", id0)[0], json(deep_arrays).dump());
  // The ledger's readers read them.
  Ran log = RunOdin(ws_.path(), {"log", "--json"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(RunOdin(ws_.path(), {"log"}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(BothWireFormats, OdinDeepInputTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Anthropic" : "OpenAi"; });

TEST_F(OdinRulesTest, ASubagentsDeepArgumentsAreRefusedToo) {
  config_["agent"] = {{"subagent_concurrency", 1}};
  Put("odinconfig.json", config_.dump(2));
  json agents = {{"deep task",
                  {{{"tool_calls",
                     {{{"name", "ExecuteCommand"}, {"arguments_raw", "{\"command\":" + Nested(60000, true) + "}"}},
                      Call("ExecuteCommand", {{"command", DeepCommand()}})}}},
                   Text("sub done")}}};
  FakeLlm llm(json({{"responses",
                     {Turn({Call("AgentTool", {{"description", "deep"}, {"prompt", "deep task"}, {"mode", "ask"}})}),
                      Text("done")}},
                    {"agents", agents}})
                  .dump());
  json r = Run({"-p", "go", "--output-format", "json"}, &llm, /*anthropic=*/true);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  std::vector<std::string> sub = Executions("sub_%");
  ASSERT_EQ(sub.size(), 2u);
  for (const std::string& row : sub) EXPECT_NE(row.find("|rejected"), std::string::npos) << row;
  std::vector<std::string> agent_tool = Rows(
      "SELECT e.status FROM execution_starts s JOIN execution_ends e ON e.execution_id = s.execution_id "
      "WHERE s.tool = 'AgentTool'");
  ASSERT_EQ(agent_tool.size(), 1u);
  EXPECT_EQ(agent_tool[0], "ok") << "the subagent finished its task";
}

TEST_F(OdinRulesTest, OdinToolRefusesInputItCannotRead) {
  json r = Run({"tool", "ExecuteCommand", "{\"command\":" + Nested(60000, false) + "}", "--json"});
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_EQ(r["error"], "ExecuteCommand: JSON arguments: nested more than 64 levels deep");
  json c = Run({"tool", "ExecuteCommand", json({{"command", DeepCommand()}}).dump(), "--json"});
  EXPECT_EQ(c["status"], "rejected");
  EXPECT_NE(c["error"].get<std::string>().find("too long to check"), std::string::npos) << c["error"];
  json d = Run({"tool", "ExecuteCommand", json({{"command", DeepCommand(5000)}}).dump(), "--json"});
  EXPECT_EQ(d["status"], "rejected");
  EXPECT_NE(d["error"].get<std::string>().find("too deep to check"), std::string::npos) << d["error"];
  // 100 KB of ${ made libtree-sitter 0.20.7 free an invalid pointer (odin
  // died of SIGABRT): nothing that long is parsed.
  json e = Run({"tool", "ExecuteCommand", json({{"command", Repeated("${", 50000)}}).dump(), "--json"});
  EXPECT_EQ(e["status"], "rejected");
  EXPECT_NE(e["error"].get<std::string>().find("too long to check"), std::string::npos) << e["error"];
}

}  // namespace
}  // namespace odin::testing
