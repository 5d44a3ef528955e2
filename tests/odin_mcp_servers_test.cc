// MCP servers end to end, through the real odin, sandbox, MCP workers and
// ledger, against the reference servers from npm (server-everything,
// server-filesystem, pinned and installed by the setup beside the binaries)
// and a scripted server for the faults the reference servers cannot show
// (a crash, a server that never answers initialize, a call that hangs).

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/mcp_fixture.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinMcpServersTest : public McpFixture {};

// The server starts in the background; its tools reach the model with their
// schemas; a call runs in the server's own worker, its result marked as
// untrusted content, and both the start and the call are executions.
TEST_F(OdinMcpServersTest, ToolsAreListedCalledAndRecordedAsUntrustedContent) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__everything__echo","arguments":{"message":"hello from the test"}},
                   {"name":"mcp__everything__get-sum","arguments":{"a":2,"b":40}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["status"], "ok") << results[0].dump();
  EXPECT_NE(results[0]["output"].get<std::string>().find("hello from the test"), std::string::npos);
  EXPECT_EQ(results[0]["authority"], "untrusted_content");
  EXPECT_TRUE(results[0].contains("untrusted_content"));
  EXPECT_EQ(results[1]["status"], "ok") << results[1].dump();
  EXPECT_NE(results[1]["output"].get<std::string>().find("42"), std::string::npos) << results[1].dump();
  // The second request offers the server's tools with their schemas.
  bool echo_offered = false;
  for (const json& t : requests[1]["body"]["tools"]) {
    if (t["function"]["name"] != "mcp__everything__echo") continue;
    echo_offered = true;
    EXPECT_TRUE(t["function"]["parameters"]["properties"].contains("message")) << t.dump();
    EXPECT_NE(t["function"]["description"].get<std::string>().find("untrusted"), std::string::npos);
  }
  EXPECT_TRUE(echo_offered);
  std::vector<std::string> calls = Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0], "McpListTools|ok");
  EXPECT_EQ(calls[1], "mcp__everything__echo|ok");
  EXPECT_EQ(calls[2], "mcp__everything__get-sum|ok");
  std::vector<std::string> listing = Rows(
      "SELECT result_json FROM execution_ends e JOIN execution_starts s "
      "USING (execution_id) WHERE s.tool = 'McpListTools'");
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_NE(listing[0].find("trigger-long-running-operation"), std::string::npos);
  EXPECT_NE(last_.err.find("MCP server everything ready"), std::string::npos) << last_.err;
}

// A tool's own error is the call's error; a tool the server does not have
// is refused by gate 1, naming what the server has not.
TEST_F(OdinMcpServersTest, AToolErrorAndAnUnknownToolAreErrorsTheModelReads) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__everything__get-sum","arguments":{"a":"two","b":40}}]},
    {"tool_calls":[{"name":"mcp__everything__no-such-tool","arguments":{}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u) << last_.err;
  json bad_args = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(bad_args["status"], "error") << bad_args.dump();
  json unknown = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(unknown["status"], "rejected") << unknown.dump();
  EXPECT_NE(unknown.dump().find("has no tool 'no-such-tool'"), std::string::npos) << unknown.dump();
}

// A long-running tool's progress notifications reach the session's event
// stream; a call past the server's timeout is cancelled: the server is sent
// notifications/cancelled and the call ends timed_out.
TEST_F(OdinMcpServersTest, ProgressIsStreamedAndATimeoutCancelsTheCall) {
  UserConfig({{"mcpServers",
               {{"everything", Everything()},
                // Unsandboxed (the user's own config may say so), so it can
                // log what it reads where the test sees it; a writable
                // server would be stopped right after the call, before it
                // read the cancellation.
                {"slow", Scripted("hang", {{"args", {ws_.Join("scripted.js"), "hang", user_.Join("slow.log")}},
                                           {"timeout", 2},
                                           {"sandbox", false}})}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__everything__trigger-long-running-operation","arguments":{"duration":2,"steps":4}}]},
    {"tool_calls":[{"name":"mcp__slow__work","arguments":{"n":1}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sleep 2"}}]},
    {"text":"Done."}]})");
  // (The sleep gives the server time to read the cancellation, which is in
  // its pipe when the call ends, before the session's end kills it.)
  last_ =
      RunOdin(ws_.path(), {"-p", "do the task", "--output-format", "stream-json"}, FakeModelEnv(llm, marker_, user_));
  int progress = 0;
  for (size_t at = 0; (at = last_.out.find("\"type\":\"tool_progress\"", at)) != std::string::npos; ++at) ++progress;
  EXPECT_GE(progress, 2) << last_.out;
  EXPECT_NE(last_.out.find("\"total\":4"), std::string::npos) << last_.out;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u) << last_.err;
  EXPECT_EQ(ToolResultsOf(requests[1]).back()["status"], "ok");
  json timed_out = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(timed_out["status"], "timed_out") << timed_out.dump();
  StatusOr<std::string> log = ReadFileToString(user_.Join("slow.log"));
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("notifications/cancelled"), std::string::npos) << *log;
}

// Two calls of one turn to a server that only reads run at once: each
// one's progress arrives before either ends. A server configured with
// "concurrency": 1 gets them one after the other.
TEST_F(OdinMcpServersTest, CallsToAServerRunAtOnceUnlessItsConcurrencyIsOne) {
  json serial = Everything();
  serial["concurrency"] = 1;
  UserConfig({{"mcpServers", {{"everything", Everything()}, {"serial", serial}}}});
  json op = {{"duration", 2}, {"steps", 2}};
  json script = {{"responses",
                  {Turn({Call("mcp__everything__trigger-long-running-operation", op),
                         Call("mcp__everything__trigger-long-running-operation", op)}),
                   Turn({Call("mcp__serial__trigger-long-running-operation", op),
                         Call("mcp__serial__trigger-long-running-operation", op)}),
                   Text("Done.")}}};
  FakeLlm llm(script.dump());
  last_ =
      RunOdin(ws_.path(), {"-p", "do the task", "--output-format", "stream-json"}, FakeModelEnv(llm, marker_, user_));
  // Per server, in the order the events came: "progress ID" and "end ID".
  std::map<std::string, std::vector<std::string>> events;
  std::map<std::string, std::string> server_of;
  for (const std::string& line : SplitLines(last_.out)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;
    std::string type = e.value("type", ""), id = e.value("execution_id", "");
    if (type == "tool_call_start" && e.value("tool", "").find("trigger-long") != std::string::npos) {
      server_of[id] = e["tool"].get<std::string>().substr(5, e["tool"].get<std::string>().find("__", 5) - 5);
    }
    if (server_of.count(id) == 0) continue;
    if (type == "tool_progress") events[server_of[id]].push_back("progress " + id);
    if (type == "tool_call_end") {
      EXPECT_EQ(e["status"], "ok") << line;
      events[server_of[id]].push_back("end " + id);
    }
  }
  // The calls each made progress before the first of them ended.
  auto progressed_before_first_end = [&](const std::string& server) {
    std::set<std::string> progressed;
    for (const std::string& e : events[server]) {
      if (e.rfind("end ", 0) == 0) break;
      progressed.insert(e.substr(9));
    }
    return progressed.size();
  };
  ASSERT_EQ(server_of.size(), 4u) << last_.out << last_.err;
  EXPECT_EQ(progressed_before_first_end("everything"), 2u) << json(events["everything"]).dump();
  EXPECT_EQ(progressed_before_first_end("serial"), 1u) << json(events["serial"]).dump();
}

// A result larger than the model's share is capped like command output;
// the whole of it is an artifact in the ledger.
TEST_F(OdinMcpServersTest, ALargeResultIsCappedAndKeptAsAnArtifact) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  std::string big(300 * 1024, 'x');
  json script = {
      {"responses", {Turn({Call("mcp__everything__echo", {{"message", "BEGIN" + big + "END"}})}), Text("Done.")}}};
  FakeLlm llm(script.dump());
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  json result = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(result["status"], "ok");
  std::string output = result["output"];
  EXPECT_LT(output.size(), 100u * 1024);
  EXPECT_NE(output.find("BEGIN"), std::string::npos);
  EXPECT_NE(output.find("END"), std::string::npos);
  EXPECT_NE(output.find("not shown"), std::string::npos);
  std::vector<std::string> artifacts = Rows(
      "SELECT a.size FROM artifacts a JOIN execution_starts s USING (execution_id) WHERE s.tool = "
      "'mcp__everything__echo' AND a.kind = 'output'");
  ASSERT_EQ(artifacts.size(), 1u);
  EXPECT_GT(std::stoll(artifacts[0]), 300 * 1024);
}

// A server that dies during a call: the call ends crashed with the server's
// last words, the server is started again once (the next call works), and
// a second death leaves it down.
TEST_F(OdinMcpServersTest, AServerThatCrashesIsRecordedRestartedOnceThenLeftDown) {
  UserConfig({{"mcpServers", {{"flaky", Scripted("crash")}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__flaky__work","arguments":{"n":1}}]},
    {"tool_calls":[{"name":"mcp__flaky__work","arguments":{"n":2}}]},
    {"tool_calls":[{"name":"mcp__flaky__work","arguments":{"n":3}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u) << last_.err;
  json first = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(first["status"], "crashed") << first.dump();
  EXPECT_NE(first.dump().find("exited with status 3"), std::string::npos) << first.dump();
  EXPECT_NE(first.dump().find("scripted: giving up"), std::string::npos) << first.dump();
  json second = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(second["status"], "crashed") << second.dump();
  json third = ToolResultsOf(requests[3]).back();
  EXPECT_NE(third.dump().find("died twice"), std::string::npos) << third.dump();
  EXPECT_NE(third["status"], "ok");
}

// A server that never answers initialize fails at its startup timeout; the
// session goes on without it, and a call of its tools is refused saying why.
TEST_F(OdinMcpServersTest, AServerThatNeverAnswersInitializeFailsAndItsToolsAreRefused) {
  UserConfig({{"mcpServers", {{"mute", Scripted("silent", {{"startup_timeout", 2}})}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__mute__work","arguments":{"n":1}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  json refused = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(refused["status"], "rejected") << refused.dump();
  EXPECT_NE(refused.dump().find("MCP server mute failed"), std::string::npos) << refused.dump();
  EXPECT_NE(last_.err.find("odin: MCP server mute failed"), std::string::npos) << last_.err;
  EXPECT_EQ(Calls()[0], "McpListTools|timed_out");
}

// Ask mode offers and runs only tools annotated readOnlyHint from servers
// that are not writable; the rest are refused by gate 1.
TEST_F(OdinMcpServersTest, AskModeRunsOnlyReadOnlyToolsOfServersThatAreNotWritable) {
  UserConfig({{"mcpServers",
               {{"everything", Everything()},
                {"fs", {{"command", filesystem_}, {"args", {ws_.path()}}, {"writable", true}}}}}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("notes.txt"), "a note\n").ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__everything__toggle-simulated-logging","arguments":{}}]},
    {"tool_calls":[{"name":"mcp__fs__read_text_file","arguments":{"path":"notes.txt"}}]},
    {"tool_calls":[{"name":"mcp__everything__echo","arguments":{"message":"read-only is fine"}}]},
    {"text":"Done."}]})");
  Prompt(llm, {"--mode", "ask"});
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u) << last_.err;
  json not_read_only = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(not_read_only["status"], "rejected") << not_read_only.dump();
  EXPECT_NE(not_read_only.dump().find("not annotated readOnlyHint"), std::string::npos) << not_read_only.dump();
  json writable = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(writable["status"], "rejected") << writable.dump();
  EXPECT_NE(writable.dump().find("is writable"), std::string::npos) << writable.dump();
  EXPECT_EQ(ToolResultsOf(requests[3]).back()["status"], "ok");
  std::vector<std::string> offered = ToolNamesOf(requests[3]);
  EXPECT_TRUE(Contains(offered, "mcp__everything__echo"));
  EXPECT_FALSE(Contains(offered, "mcp__everything__toggle-simulated-logging"));
  EXPECT_FALSE(Contains(offered, "mcp__fs__read_text_file"));
}

// The filesystem server in edit mode, writable: what it writes is a
// mutation of the call, like a command's change.
TEST_F(OdinMcpServersTest, AWritableServersChangeIsAMutationOfTheCall) {
  UserConfig({{"mcpServers", {{"fs", {{"command", filesystem_}, {"args", {ws_.path()}}, {"writable", true}}}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__fs__write_file","arguments":{"path":"made.txt","content":"by the server\n"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(*ReadFileToString(ws_.Join("made.txt")), "by the server\n");
  std::vector<std::string> mutations = Rows(
      "SELECT m.source, s.tool FROM mutations m JOIN execution_starts s USING (execution_id) WHERE m.path LIKE "
      "'%made.txt'");
  ASSERT_EQ(mutations.size(), 1u);
  EXPECT_EQ(mutations[0], "mcp|mcp__fs__write_file");
}

// A writable server changes the workspace only while one of its calls runs:
// between calls its processes are stopped, so a write it schedules for
// later never lands behind the coordinator's back.
TEST_F(OdinMcpServersTest, AWritableServerIsStoppedBetweenItsCalls) {
  UserConfig({{"mcpServers", {{"late", Scripted("late", {{"writable", true}})}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__late__work","arguments":{"n":1}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sleep 1"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(ToolResultsOf(RequestsOf(llm)[1]).back()["status"], "ok");
  EXPECT_FALSE(PathExists(ws_.Join("late.txt"))) << "the server wrote between its calls";
}

// permissions.deny names MCP tools as Claude Code does: a whole server or
// one tool.
TEST_F(OdinMcpServersTest, ADenyRuleRefusesAnMcpTool) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}, {"permissions", {{"deny", {"mcp__everything__echo"}}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__everything__echo","arguments":{"message":"no"}},
                   {"name":"mcp__everything__get-sum","arguments":{"a":1,"b":1}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  std::vector<json> results = ToolResultsOf(requests[1]);
  EXPECT_EQ(results[0]["status"], "rejected") << results[0].dump();
  EXPECT_NE(results[0].dump().find("permissions.deny"), std::string::npos) << results[0].dump();
  EXPECT_EQ(results[1]["status"], "ok") << results[1].dump();
  EXPECT_EQ(Rows("SELECT kind FROM gate_events WHERE kind = 'tool_rule'").size(), 1u);
}

// A workspace's .mcp.json starts nothing until the workspace is trusted.
TEST_F(OdinMcpServersTest, AnUntrustedWorkspacesMcpJsonStartsNothing) {
  json mcp = {{"mcpServers",
               {{"repo", Scripted("ok", {{"args", {ws_.Join("scripted.js"), "ok", ws_.Join("ran.log")}},
                                         {"writable", true}})}}}};
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".mcp.json"), mcp.dump()).ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__repo__work","arguments":{"n":1}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  EXPECT_EQ(ToolResultsOf(requests[1]).back()["status"], "rejected");
  EXPECT_FALSE(PathExists(ws_.Join("ran.log"))) << "the untrusted server ran";
  EXPECT_EQ(Rows("SELECT tool FROM execution_starts WHERE tool = 'McpListTools'").size(), 0u);
  EXPECT_NE(last_.err.find("odin trust"), std::string::npos) << last_.err;

  // Trusted, it runs.
  Ran trusted = RunOdin(ws_.path(), {"trust"}, FakeModelEnv(llm, marker_, user_));
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  FakeLlm again(R"({"responses":[
    {"tool_calls":[{"name":"mcp__repo__work","arguments":{"n":7}}]},
    {"text":"Done."}]})");
  Prompt(again);
  std::vector<json> after = RequestsOf(again);
  ASSERT_EQ(after.size(), 2u) << last_.err;
  json ran = ToolResultsOf(after[1]).back();
  EXPECT_EQ(ran["status"], "ok") << ran.dump() << last_.err;
  EXPECT_NE(ran["output"].get<std::string>().find("worked 7"), std::string::npos);
}

// /mcp and odin doctor list the servers with their state and tools; the
// model cannot run the coordinator's own McpListTools.
TEST_F(OdinMcpServersTest, ServersAreListedWithStateAndToolsAndTheListingIsNotTheModels) {
  UserConfig({{"mcpServers", {{"everything", Everything()}, {"mute", Scripted("silent", {{"startup_timeout", 1}})}}}});
  Ran doctor = RunOdin(ws_.path(), {"doctor", "--json"}, FakeModelEnv(FakeLlm(R"({"responses":[]})"), marker_, user_));
  json d = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(d.contains("mcp_servers")) << doctor.out << doctor.err;
  ASSERT_EQ(d["mcp_servers"].size(), 2u);
  EXPECT_EQ(d["mcp_servers"][0]["name"], "everything");
  EXPECT_EQ(d["mcp_servers"][0]["state"], "ready");
  EXPECT_GT(d["mcp_servers"][0]["tools"].size(), 5u);
  EXPECT_EQ(d["mcp_servers"][1]["state"], "failed");

  // The echo waits for its server: by the answer, the server is ready.
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"McpListTools","arguments":{"server":"everything"}},
                   {"name":"mcp__everything__echo","arguments":{"message":"hi"}}]},
    {"text":"Done."}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, FakeModelEnv(llm, marker_, user_));
  std::string line = "do it\n";
  ASSERT_EQ(write(in, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  ReadUntil(out, "Done.");
  line = "/mcp\n";
  ASSERT_EQ(write(in, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  std::string seen = ReadUntil(out, "edit mode only");
  EXPECT_NE(seen.find("everything  stdio  ready  15 tools: echo"), std::string::npos) << seen;
  EXPECT_NE(seen.find("toggle-simulated-logging*"), std::string::npos) << seen;
  EXPECT_NE(seen.find("mute  stdio  "), std::string::npos) << seen;
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["status"], "rejected") << results[0].dump();
  EXPECT_EQ(results[1]["status"], "ok") << results[1].dump();
}

// A subagent is offered and may run the servers' tools its mode allows;
// its calls go through the same gates; a PreToolUse hook matches an MCP
// tool by its name.
TEST_F(OdinMcpServersTest, SubagentsAndHooksMeetMcpToolsByName) {
  std::string hook = ws_.Join("no-echo.sh");
  ASSERT_TRUE(WriteFileAtomic(hook, "#!/bin/sh\necho 'no echo today' >&2\nexit 2\n").ok());
  chmod(hook.c_str(), 0755);
  UserConfig({{"mcpServers", {{"everything", Everything()}}},
              {"hooks",
               {{"PreToolUse",
                 {{{"matcher", "mcp__everything__echo"},
                   {"hooks", {{{"type", "command"}, {"command", hook}, {"timeout", 30}}}}}}}}}});
  json agents = {{"look around",
                  {Turn({Call("mcp__everything__get-sum", {{"a", 1}, {"b", 2}}),
                         Call("mcp__everything__toggle-simulated-logging", json::object())}),
                   Text("The sum is 3.")}}};
  json script = {{"responses",
                  {Turn({Call("AgentTool", {{"description", "look"}, {"prompt", "look around"}, {"mode", "ask"}})}),
                   Turn({Call("mcp__everything__echo", {{"message", "hi"}})}), Text("Done.")}},
                 {"agents", agents}};
  FakeLlm llm(script.dump());
  Prompt(llm);
  std::vector<json> sub, parent;
  for (const json& r : RequestsOf(llm)) (r["n"].get<int64_t>() >= 1000000 ? sub : parent).push_back(r);
  ASSERT_EQ(sub.size(), 2u) << last_.err;
  // By its second request the server has listed its tools (the calls waited for it).
  std::vector<std::string> offered = ToolNamesOf(sub[1]);
  EXPECT_TRUE(Contains(offered, "mcp__everything__get-sum"));
  EXPECT_FALSE(Contains(offered, "mcp__everything__toggle-simulated-logging"));
  std::vector<json> results = ToolResultsOf(sub[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["status"], "ok") << results[0].dump();
  EXPECT_EQ(results[1]["status"], "rejected") << results[1].dump();
  ASSERT_EQ(parent.size(), 3u);
  json echo = ToolResultsOf(parent[2]).back();
  EXPECT_EQ(echo["status"], "rejected") << echo.dump();
  EXPECT_NE(echo.dump().find("no echo today"), std::string::npos) << echo.dump();
}

// server-everything over streamable HTTP: the session, a call with its
// progress streamed as SSE, and the Authorization header from ${VAR}.
TEST_F(OdinMcpServersTest, AStreamableHttpServerIsListedAndCalled) {
  int port = 0;
  pid_t server = StartEverythingHttp(&port);
  ASSERT_GT(server, 0);
  UserConfig({{"mcpServers",
               {{"remote",
                 {{"type", "http"},
                  {"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"},
                  {"headers", {{"Authorization", "Bearer ${REMOTE_TOKEN:-none}"}}}}}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__remote__echo","arguments":{"message":"over http"}}]},
    {"tool_calls":[{"name":"mcp__remote__trigger-long-running-operation","arguments":{"duration":1,"steps":2}}]},
    {"text":"Done."}]})");
  last_ =
      RunOdin(ws_.path(), {"-p", "do the task", "--output-format", "stream-json"}, FakeModelEnv(llm, marker_, user_));
  StopServer(server);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u) << last_.out << last_.err;
  json echo = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(echo["status"], "ok") << echo.dump() << last_.err;
  EXPECT_NE(echo["output"].get<std::string>().find("over http"), std::string::npos) << echo.dump();
  json slow = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(slow["status"], "ok") << slow.dump();
  EXPECT_NE(last_.out.find("\"type\":\"tool_progress\""), std::string::npos) << last_.out;
}

// Odin as an MCP server, driven by Odin's own MCP client: a read, a write
// whose validation finds errors (the result says so, as an error), and a
// command a deny rule refuses, all recorded in the served workspace's
// ledger.
TEST_F(OdinMcpServersTest, OdinServedOverMcpKeepsItsGatesValidationAndLedger) {
  const char* path = getenv("PATH");
  if (SearchPath("clangd", path ? path : "").empty()) {
    GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  }
  TempWorkspace served;
  ASSERT_TRUE(MakeDirs(served.Join(".git")).ok());
  ASSERT_TRUE(WriteFileAtomic(served.Join("calc.c"), "int add(int a, int b) { return a + b; }\n").ok());
  // The served odin sandboxes its own workers; its own process runs on the host.
  UserConfig({{"mcpServers",
               {{"odin",
                 {{"command", BinDir() + "/odin"},
                  {"args", {"-C", served.path(), "mcp", "serve", "--mode", "edit"}},
                  {"sandbox", false}}}}},
              {"permissions", {{"deny", {"rm"}}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"mcp__odin__Read","arguments":{"file_path":"calc.c"}}]},
    {"tool_calls":[{"name":"mcp__odin__WriteFile","arguments":{"file_path":"calc.c",
                    "content":"int add(int a, int b) { return a + undefined_name; }\n"}}]},
    {"tool_calls":[{"name":"mcp__odin__ExecuteCommand","arguments":{"command":"rm calc.c"}}]},
    {"text":"Done."}]})");
  Prompt(llm);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u) << last_.err;
  json read = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(read["status"], "ok") << read.dump();
  EXPECT_NE(read["output"].get<std::string>().find("return a + b"), std::string::npos) << read.dump();
  json write = ToolResultsOf(requests[2]).back();
  EXPECT_EQ(write["status"], "error") << write.dump();  // isError: the file has errors now
  EXPECT_NE(write["output"].get<std::string>().find("undefined_name"), std::string::npos) << write.dump();
  EXPECT_NE(write["output"].get<std::string>().find(R"("status":"errors")"), std::string::npos) << write.dump();
  json rm = ToolResultsOf(requests[3]).back();
  EXPECT_EQ(rm["status"], "error") << rm.dump();
  EXPECT_NE(rm["output"].get<std::string>().find("permissions.deny"), std::string::npos) << rm.dump();
  EXPECT_TRUE(PathExists(served.Join("calc.c")));

  // The served workspace's ledger holds the calls, under the "mcp" agent.
  std::vector<std::string> calls = LedgerRows(
      served.Join(".odin/odin.db"),
      "SELECT s.tool, s.agent_id, e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) "
      "ORDER BY s.rowid");
  ASSERT_GE(calls.size(), 4u);
  EXPECT_EQ(calls[0], "Read|mcp|ok");
  EXPECT_EQ(calls[1], "WriteFile|mcp|ok");
  EXPECT_EQ(calls[2], "lsp_check|mcp|ok");
  EXPECT_EQ(calls.back(), "ExecuteCommand|mcp|rejected");
  std::vector<std::string> verdicts = LedgerRows(served.Join(".odin/odin.db"), "SELECT status FROM validations");
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0], "errors");
  EXPECT_EQ(LedgerRows(served.Join(".odin/odin.db"), "SELECT kind FROM sessions").at(0), "mcp");
}

// Bad input to odin mcp serve: one line, a non-zero exit; a malformed
// message gets a JSON-RPC error and the server goes on.
TEST_F(OdinMcpServersTest, McpServeRefusesBadFlagsAndAnswersGarbageWithAnError) {
  Ran bad = RunOdin(ws_.path(), {"mcp", "serve", "--mode", "yolo"},
                    FakeModelEnv(FakeLlm(R"({"responses":[]})"), marker_, user_));
  EXPECT_NE(bad.exit_code, 0);
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {"mcp", "serve"}, &in, &out,
                             FakeModelEnv(FakeLlm(R"({"responses":[]})"), marker_, user_));
  std::string lines =
      "this is not json\n"
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"WriteFile","arguments":{"file_path":"x","content":"y"}}})"
      "\n"
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5,"arguments":[]}})"
      "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})"
      "\n";
  ASSERT_EQ(write(in, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  std::string seen = ReadUntil(out, R"("id":3)");
  EXPECT_NE(seen.find("-32700"), std::string::npos) << seen;
  EXPECT_NE(seen.find(R"("protocolVersion":"2024-11-05")"), std::string::npos) << seen;
  // Ask mode, the default: WriteFile is not Odin's to offer here.
  EXPECT_NE(seen.find("not available in ask mode"), std::string::npos) << seen;
  EXPECT_NE(seen.find("-32601"), std::string::npos) << seen;
  EXPECT_NE(seen.find("unknown tool"), std::string::npos) << seen;  // a name that is not a string
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_FALSE(PathExists(ws_.Join("x")));
}

// The MCP TypeScript SDK's own client drives odin mcp serve
// (tests/mcp/mcp_serve_client.mjs): honest annotations, an outputSchema per
// tool that the SDK checks each structuredContent against, the verdict in
// it, and progress notifications while a command prints.
TEST_F(OdinMcpServersTest, TheSdksClientGetsStructuredResultsAndProgress) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.py"), "def one() -> int:\n    return 1\n").ok());
  FakeLlm llm(R"({"responses":[]})");
  std::string output;
  json seen = json::parse(RunClientScript({"node", std::string(ODIN_SOURCE_DIR) + "/tests/mcp/mcp_serve_client.mjs",
                                           BinDir() + "/../lsp/node_modules", BinDir() + "/odin", ws_.path()},
                                          FakeModelEnv(llm, marker_, user_), &output),
                          nullptr, false);
  ASSERT_TRUE(seen.is_object()) << output;
  ASSERT_FALSE(seen.contains("failure")) << seen["failure"].get<std::string>();
  for (const char* tool : {"WriteFile", "EditTool", "ExecuteCommand"}) {
    EXPECT_EQ(seen["tools"][tool]["annotations"]["readOnlyHint"], false) << tool;
    EXPECT_EQ(seen["tools"][tool]["annotations"]["destructiveHint"], true) << tool;
  }
  EXPECT_EQ(seen["tools"]["Read"]["annotations"]["readOnlyHint"], true);
  for (const auto& [name, tool] : seen["tools"].items()) EXPECT_EQ(tool["outputSchema"], true) << name;
  EXPECT_EQ(seen["read"]["structured"]["status"], "ok") << seen["read"];
  EXPECT_NE(seen["read"]["structured"]["output"].get<std::string>().find("return 1"), std::string::npos);
  EXPECT_EQ(seen["edit"]["structured"]["status"], "ok") << seen["edit"];
  EXPECT_FALSE(seen["edit"]["structured"]["validation"]["status"].get<std::string>().empty()) << seen["edit"];
  EXPECT_EQ(seen["command"]["status"], "ok");
  ASSERT_GE(seen["progress"].size(), 2u) << seen["progress"];
  for (size_t i = 1; i < seen["progress"].size(); ++i) {
    EXPECT_GT(seen["progress"][i]["progress"], seen["progress"][i - 1]["progress"]);
  }
}

// A call that needs approval is asked of a client that declares
// elicitation (the SDK's client, tests/mcp/mcp_serve_elicit.mjs): allowed
// once, it runs; declined, it is refused and nothing runs. The answers are
// in the ledger.
TEST_F(OdinMcpServersTest, ApprovalsAreAskedOfAClientThatTakesForms) {
  UserConfig({{"permissions", {{"ask", {"touch *"}}}}});
  FakeLlm llm(R"({"responses":[]})");
  std::string output;
  json seen = json::parse(RunClientScript({"node", std::string(ODIN_SOURCE_DIR) + "/tests/mcp/mcp_serve_elicit.mjs",
                                           BinDir() + "/../lsp/node_modules", BinDir() + "/odin", ws_.path()},
                                          FakeModelEnv(llm, marker_, user_), &output),
                          nullptr, false);
  ASSERT_TRUE(seen.is_object()) << output;
  ASSERT_FALSE(seen.contains("failure")) << seen["failure"].get<std::string>();
  ASSERT_EQ(seen["asked"].size(), 2u) << seen.dump();
  EXPECT_NE(seen["asked"][0]["message"].get<std::string>().find("touch approved.txt"), std::string::npos)
      << seen["asked"][0];
  EXPECT_EQ(seen["asked"][0]["schema"]["properties"]["decision"]["enum"], json({"once", "session", "deny"}));
  EXPECT_EQ(seen["first"]["status"], "ok") << seen["first"];
  EXPECT_EQ(seen["second"]["status"], "rejected") << seen["second"];
  EXPECT_EQ(seen["second"]["isError"], true);
  EXPECT_TRUE(PathExists(ws_.Join("approved.txt")));
  EXPECT_FALSE(PathExists(ws_.Join("denied.txt")));
  std::vector<std::string> answers =
      Rows("SELECT json_extract(detail_json, '$.approval') FROM gate_events WHERE kind = 'approval' ORDER BY seq");
  EXPECT_EQ(answers, (std::vector<std::string>{"allowed once by the user", "denied by the user"}));
}

// The JSON-RPC edges odin mcp serve answers per the revision agreed
// (docs/hooks-and-mcp.md's table): a duplicate id in flight, an id that is
// no integer, batches on 2025-03-26 and not on 2025-06-18.
TEST_F(OdinMcpServersTest, McpServeAnswersTheJsonRpcEdgesPerRevision) {
  FakeLlm llm(R"({"responses":[]})");
  auto session = [&](const std::string& version, const std::string& rest, const std::string& until) {
    int in, out;
    pid_t pid = StartOdinPiped(ws_.path(), {"mcp", "serve"}, &in, &out, FakeModelEnv(llm, marker_, user_));
    std::string lines = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")" + version +
                        "\"}}\n" + rest + R"({"jsonrpc":"2.0","id":"end","method":"ping"})" + "\n";
    EXPECT_EQ(write(in, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
    std::string seen = ReadUntil(out, until);
    close(in);
    close(out);
    EXPECT_EQ(Wait(pid), 0);
    return seen;
  };
  // Two requests under one id while the first runs: the second is refused.
  std::string dup = session("2025-06-18",
                            R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ExecuteCommand",)"
                            R"("arguments":{"command":"sleep 1; echo first"}}})"
                            "\n"
                            R"({"jsonrpc":"2.0","id":7,"method":"ping"})"
                            "\n"
                            R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})"
                            "\n"
                            R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"
                            "\n"
                            R"([{"jsonrpc":"2.0","id":8,"method":"ping"}])"
                            "\n",
                            R"("id":7,"jsonrpc":"2.0","result")");
  EXPECT_NE(dup.find(R"("id":7,"jsonrpc":"2.0")"), std::string::npos) << dup;
  EXPECT_NE(dup.find("is in flight already"), std::string::npos) << dup;
  EXPECT_NE(
      dup.find(
          R"({"error":{"code":-32600,"message":"invalid request: an id must be a string or an integer"},"id":1.5)"),
      std::string::npos)
      << dup;
  EXPECT_NE(dup.find(R"("id":null)"), std::string::npos) << dup;
  EXPECT_NE(dup.find("batches are not part of MCP 2025-06-18"), std::string::npos) << dup;
  // 2025-03-26 takes a batch, answered as one array once all of it is.
  std::string batch = session("2025-03-26",
                              R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
                              R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
                              R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read",)"
                              R"("arguments":{"file_path":"nothing-here"}}},)"
                              R"({"jsonrpc":"2.0","id":3,"method":"nope"}])"
                              "\n"
                              "[]\n",
                              "}]\n");
  size_t array = batch.find("[{");
  ASSERT_NE(array, std::string::npos) << batch;
  json answers = json::parse(batch.substr(array, batch.find('\n', array) - array), nullptr, false);
  ASSERT_TRUE(answers.is_array()) << batch;
  std::set<json> ids;
  for (const json& a : answers) ids.insert(a["id"]);
  EXPECT_EQ(ids, (std::set<json>{1, 2, 3})) << answers;
  EXPECT_NE(batch.find("an empty batch"), std::string::npos) << batch;
  // Each member is answered by one rule: a refused tool, a malformed member
  // are; a response and a notification are not; a batch's answer is never
  // found by an id a later request reuses; initialize comes once.
  std::string members =
      session("2025-03-26",
              R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Nope"}},)"
              R"({"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":9,"result":{}},)"
              R"({"jsonrpc":"2.0","method":"initialize"},{"jsonrpc":"2.0","id":4,"method":5},{"jsonrpc":"2.0"}])"
              "\n"
              R"([{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ExecuteCommand",)"
              R"("arguments":{"command":"sleep 1"}}}])"
              "\n"
              R"({"jsonrpc":"2.0","id":7,"method":"ping"})"
              "\n"
              R"({"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
              "\n",
              R"([{"id":7,)");
  size_t first = members.find("[{");
  ASSERT_NE(first, std::string::npos) << members;
  json answers1 = json::parse(members.substr(first, members.find('\n', first) - first), nullptr, false);
  ASSERT_TRUE(answers1.is_array()) << members;
  std::vector<json> ids1;
  for (const json& a : answers1) ids1.push_back(a["id"]);
  EXPECT_EQ(ids1, (std::vector<json>{1, 2, 4, nullptr})) << answers1;
  EXPECT_NE(
      members.find(R"({"error":{"code":-32600,"message":"invalid request: request 7 is in flight already"},"id":7,)"),
      std::string::npos)
      << members;
  EXPECT_NE(members.find("the session is initialized already"), std::string::npos) << members;
}

// A client that sends and never reads: odin mcp serve does not stall on
// it; past the bound its calls are cancelled and it ends, saying why.
TEST_F(OdinMcpServersTest, McpServeEndsRatherThanStallOnAClientThatStopsReading) {
  FakeLlm llm(R"({"responses":[]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {"mcp", "serve"}, &in, &out, FakeModelEnv(llm, marker_, user_));
  std::string lines = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
                      "\n";
  // Each tools/list answer is some 10 KB: 64 MiB of them is past the bound.
  for (int i = 1; i <= 9000; ++i) {
    lines += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"tools/list"})" + "\n";
  }
  // Its end may come while we still write: a closed pipe, not a signal.
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
  size_t done = 0;
  while (done < lines.size()) {
    ssize_t n = write(in, lines.data() + done, lines.size() - done);
    if (n <= 0) break;  // it ended, as it should, before reading everything
    done += static_cast<size_t>(n);
  }
  close(in);
  sigaction(SIGPIPE, &before, nullptr);
  // It ends without anyone reading its output.
  int code = Wait(pid);
  close(out);
  EXPECT_EQ(code, 1);
}

}  // namespace
}  // namespace odin::testing
