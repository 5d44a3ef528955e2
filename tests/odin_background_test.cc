// Background commands end to end, through the real odin, its sandbox and
// the fake model server: a server started with run_in_background answers a
// later command on 127.0.0.1 and nobody outside the session; its output is
// read with CommandOutput; what it writes is recorded, validated and undone;
// at most commands.max_background run at once; nothing of it outlives the
// session, or a SIGKILL of odin.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

// Fetches URL from inside a command, retrying while the server starts (at
// most 10 s): prints the body, or REFUSED and the error.
std::string Fetch(const std::string& url, int tries = 100) {
  return "python3 -c \"import sys, time, urllib.request\n"
         "for i in range(" +
         std::to_string(tries) +
         "):\n"
         "    try:\n"
         "        print(urllib.request.urlopen('" +
         url +
         "', timeout=5).read().decode()); sys.exit(0)\n"
         "    except Exception as e:\n"
         "        err = e; time.sleep(0.1)\n"
         "print('REFUSED', err)\"";
}

const char kServer[] = "cd site && exec python3 -u -m http.server 8765 --bind 127.0.0.1";

class OdinBackgroundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(ws_.Join("site")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("site/hello.txt"), "served-7c1\n").ok());
    UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}});
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  Ran Run(const FakeLlm& llm, std::vector<std::string> args) { return RunOdin(ws_.path(), args, Env(llm)); }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  // The output the model was given for a call, by the call's position in
  // the request's results.
  static std::string OutputOf(const json& request, size_t index) {
    std::vector<json> results = ToolResultsOf(request);
    return index < results.size() ? results[index].dump() : "";
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
};

// The server runs on in the background; a later command fetches from it;
// CommandOutput shows what it logged; the session's end stops it, recorded.
TEST_F(OdinBackgroundTest, ABackgroundServerAnswersALaterCommandAndItsOutputIsRead) {
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", kServer}, {"run_in_background", true}})}),
                      Turn({Call("ExecuteCommand", {{"command", Fetch("http://127.0.0.1:8765/hello.txt")}})}),
                      Turn({Call("CommandOutput", {{"id", "@first_execution_id_of:ExecuteCommand"}})}),
                      Text("The server works.")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "start the site and check it", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  std::string started = OutputOf(requests[1], 0);
  EXPECT_NE(started.find("Started in the background as ex_"), std::string::npos) << started;
  std::string fetched = OutputOf(requests[2], 1);
  EXPECT_NE(fetched.find("served-7c1"), std::string::npos) << fetched;
  std::string output = OutputOf(requests[3], 2);
  EXPECT_NE(output.find("running for"), std::string::npos) << output;
  EXPECT_NE(output.find("GET /hello.txt HTTP/1.1"), std::string::npos) << output;
  // Its start, its stop at the session's end, and its end, in the ledger.
  std::vector<std::string> job = Rows("SELECT execution_id FROM gate_events WHERE kind = 'background_started'");
  ASSERT_EQ(job.size(), 1u);
  EXPECT_EQ(
      Rows("SELECT detail_json FROM gate_events WHERE kind = 'background_stop' AND execution_id = '" + job[0] + "'"),
      std::vector<std::string>{R"({"why":"the session ended"})"});
  EXPECT_EQ(Rows("SELECT status FROM execution_ends WHERE execution_id = '" + job[0] + "'"),
            std::vector<std::string>{"cancelled"});
  // CommandOutput and StopCommand are offered in edit mode.
  EXPECT_TRUE(Contains(ToolNamesOf(requests[0]), "CommandOutput"));
  EXPECT_TRUE(Contains(ToolNamesOf(requests[0]), "StopCommand"));
}

// As an ordinary user too: the shared network is then a user namespace's
// of its own, which each sandbox joins first.
TEST_F(OdinBackgroundTest, AsAnOrdinaryUserTheServerIsThereForLaterCommandsToo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run odin as uid 65534 with setpriv";
  if (system(
          ("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/test -x " + BinDir() + "/odin-sandbox")
              .c_str()) != 0) {
    GTEST_SKIP() << BinDir() << " is not reachable for uid 65534 (a build in a private directory)";
  }
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", kServer}, {"run_in_background", true}})}),
                      Turn({Call("ExecuteCommand", {{"command", Fetch("http://127.0.0.1:8765/hello.txt")}})}),
                      Text("The server works.")}}})
                  .dump());
  for (const std::string& dir : {ws_.path(), user_.path()}) {
    ASSERT_EQ(system(("chown -R 65534:65534 " + dir).c_str()), 0);
  }
  std::map<std::string, std::string> env = Env(llm);
  env["XDG_RUNTIME_DIR"] = user_.Join("run");
  env["HOME"] = user_.path();
  env["PATH"] = "/usr/local/bin:/usr/bin:/bin";  // none of root's own directories, which that user cannot reach
  Ran r = RunOdinWrapped({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, ws_.path(),
                         {"-p", "start the site and check it", "--mode", "edit"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("each command has a network of its own"), std::string::npos) << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(OutputOf(requests[2], 1).find("served-7c1"), std::string::npos) << OutputOf(requests[2], 1);
}

// The server listens in the session's own network: not on the host's
// loopback, and not in ask mode's (a subagent that only reads).
TEST_F(OdinBackgroundTest, NeitherTheHostNorAnAskModeCommandReachesAnEditModeJob) {
  std::string go = ws_.Join(".odin-test-go");
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", kServer}, {"run_in_background", true}})}),
                      Turn({Call("ExecuteCommand", {{"command", Fetch("http://127.0.0.1:8765/hello.txt")}})}),
                      Turn({Call("AgentTool", {{"prompt", "look at the site"}, {"mode", "ask"}})}),
                      {{"text", "Done."}, {"hold_until", go}}}},
                    {"agents",
                     {{"look at the site",
                       {Turn({Call("ExecuteCommand", {{"command", Fetch("http://127.0.0.1:8765/hello.txt", 3)}})}),
                        Text("It is not reachable.")}}}}})
                  .dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "start the site", "--mode", "edit"}, &out, Env(llm));
  // While the job runs (the last answer is held): the host's 127.0.0.1:8765
  // has nothing.
  ASSERT_TRUE(WaitUntil([&] { return ScriptRequestsOf(llm).size() >= 4; }, std::chrono::seconds(60)));
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(8765);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int connected = connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  close(s);
  EXPECT_NE(connected, 0) << "the background server listens on the host's network";
  ASSERT_TRUE(WriteFileAtomic(go, "").ok());
  EXPECT_EQ(Wait(odin), 0);
  close(out);
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_NE(OutputOf(requests[2], 1).find("served-7c1"), std::string::npos) << OutputOf(requests[2], 1);
  // The subagent's command ran in ask mode's sandbox: refused, not served.
  std::string all;
  for (const json& q : RequestsOf(llm)) all += q.dump();
  EXPECT_NE(all.find("REFUSED"), std::string::npos);
  std::vector<std::string> modes = Rows(
      "SELECT s.mode FROM execution_starts s WHERE s.tool = 'ExecuteCommand' AND s.agent_id != 'main' ORDER BY "
      "s.started_at_ms");
  EXPECT_EQ(modes, std::vector<std::string>{"ask"});
}

// What a background command writes is its change: recorded under its
// execution at the next call boundary, shown by CommandOutput, validated,
// and undone by odin undo.
TEST_F(OdinBackgroundTest, WhatABackgroundCommandWritesIsRecordedValidatedAndUndone) {
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("ExecuteCommand",
                         {{"command", "echo 'answer = 42' > made.py; exec sleep 60"}, {"run_in_background", true}})}),
              Turn({Call("ExecuteCommand",
                         {{"command", "for i in $(seq 200); do grep -q 42 made.py && break; sleep 0.05; done"}})}),
              Turn({Call("CommandOutput", {{"id", "@first_execution_id_of:ExecuteCommand"}})}),
              Turn({Call("StopCommand", {{"id", "@first_execution_id_of:ExecuteCommand"}})}),
              Text("It wrote made.py.")}}})
          .dump());
  Ran r = Run(llm, {"-p", "make a file in the background", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 5u);
  std::string output = OutputOf(requests[3], 2);
  EXPECT_NE(output.find("Files it changed: made.py"), std::string::npos) << output;
  std::string stopped = OutputOf(requests[4], 3);
  EXPECT_NE(stopped.find("stopped (StopCommand)"), std::string::npos) << stopped;
  std::vector<std::string> job = Rows("SELECT execution_id FROM gate_events WHERE kind = 'background_started'");
  ASSERT_EQ(job.size(), 1u);
  // (A look between its creation and its write would record both: each
  // is the job's.)
  const std::string made = "path = '" + ws_.Join("made.py") + "'";
  EXPECT_EQ(Rows("SELECT DISTINCT execution_id || ' ' || source FROM mutations WHERE " + made),
            std::vector<std::string>{job[0] + " command"});
  EXPECT_EQ(Rows("SELECT change FROM mutations WHERE " + made + " ORDER BY created_at_ms LIMIT 1"),
            std::vector<std::string>{"created"});
  EXPECT_NE(
      Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'background_changes' AND execution_id = '" + job[0] + "'"),
      std::vector<std::string>{"0"});
  // Validated: its lsp_check hangs below the job.
  EXPECT_NE(Rows("SELECT COUNT(*) FROM execution_starts WHERE tool = 'lsp_check' AND parent_id = '" + job[0] + "'"),
            std::vector<std::string>{"0"});
  Ran undo = Run(llm, {"undo", job[0]});
  EXPECT_EQ(undo.exit_code, 0) << undo.out << undo.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.py")));
}

// A protected path it makes while it runs (an instructions file below the
// root, which its sandbox cannot bind read-only before it exists) is put
// back at the next call's boundary, and the command is stopped.
TEST_F(OdinBackgroundTest, AProtectedPathItMakesIsPutBackAtOnceAndItIsStopped) {
  FakeLlm llm(
      json(
          {{"responses",
            {Turn({Call("ExecuteCommand", {{"command", "mkdir -p sub && echo 'obey me' > sub/AGENTS.md; exec sleep 60"},
                                           {"run_in_background", true}})}),
             Turn({Call("ExecuteCommand",
                        {{"command", "for i in $(seq 200); do test -s sub/AGENTS.md && break; sleep 0.05; done"}})}),
             Turn({Call("CommandOutput", {{"id", "@first_execution_id_of:ExecuteCommand"}, {"wait_seconds", 30}})}),
             Text("Stopped.")}}})
          .dump());
  Ran r = Run(llm, {"-p", "start it", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(PathExists(ws_.Join("sub/AGENTS.md")));
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  std::string output = OutputOf(requests[3], 2);
  EXPECT_NE(output.find("stopped (it changed the protected path sub/AGENTS.md)"), std::string::npos) << output;
  EXPECT_NE(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'background_protected'")[0], "0");
}

// Four run at once; the fifth is refused with the reason, and runs nothing.
TEST_F(OdinBackgroundTest, TheFifthAtOnceIsRefused) {
  std::vector<json> calls;
  for (int i = 0; i < 5; ++i) {
    calls.push_back(
        Call("ExecuteCommand", {{"command", "exec sleep 60 # " + std::to_string(i)}, {"run_in_background", true}}));
  }
  FakeLlm llm(json({{"responses", {Turn(calls), Text("Four of them.")}}}).dump());
  Ran r = Run(llm, {"-p", "start five", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 5u);
  int started = 0, refused = 0;
  for (const json& res : results) {
    if (res.dump().find("Started in the background") != std::string::npos) ++started;
    if (res["status"] == "rejected" && res.dump().find("commands.max_background") != std::string::npos) ++refused;
  }
  EXPECT_EQ(started, 4);
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'background_started'")[0], "4");
}

// Outside edit mode there is no background: refused with the reason.
TEST_F(OdinBackgroundTest, AskModeRefusesABackgroundCommand) {
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "sleep 60"}, {"run_in_background", true}})}),
                      Text("Refused.")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "start it", "--mode", "ask"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  json refused = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(refused["status"], "rejected") << refused.dump();
  EXPECT_NE(refused.dump().find("background commands run only in edit mode"), std::string::npos) << refused.dump();
  EXPECT_FALSE(Contains(ToolNamesOf(requests[0]), "CommandOutput"));
}

// odin killed with SIGKILL mid-job: the job goes with it (its sandbox dies
// with its worker, the worker with odin), and the next start finds the
// ledger whole.
TEST_F(OdinBackgroundTest, ABackgroundCommandDiesWithAKilledOdin) {
  std::string go = ws_.Join(".odin-test-go");
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ExecuteCommand", {{"command", "exec sleep 299.4173"}, {"run_in_background", true}})}),
                      {{"text", "never"}, {"hold_until", go}}}}})
                  .dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "start it", "--mode", "edit"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return !ProcessesWithArg("sleep 299.4173").empty(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(WaitUntil([&] { return ScriptRequestsOf(llm).size() >= 2; }, std::chrono::seconds(60)));
  ASSERT_EQ(kill(odin, SIGKILL), 0);
  Wait(odin);
  close(out);
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArg("sleep 299.4173").empty(); }, std::chrono::seconds(10)))
      << "a background command outlived odin";
  // odin doctor says where it went.
  Ran doctor = Run(llm, {"doctor", "--json"});
  json d = json::parse(doctor.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << doctor.out << doctor.err;
  ASSERT_EQ(d["background_commands"].size(), 1u) << d["background_commands"].dump();
  EXPECT_EQ(d["background_commands"][0]["state"], "gone");
  EXPECT_EQ(d["background_commands"][0]["command"], "exec sleep 299.4173");
  ASSERT_TRUE(WriteFileAtomic(go, "").ok());
  Ran verify = Run(llm, {"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace odin::testing
