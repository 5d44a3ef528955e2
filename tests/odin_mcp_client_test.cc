// Odin as an MCP client beyond tools, end to end through the real odin, its
// MCP workers and ledger, against the reference server from npm
// (server-everything), over stdio and streamable HTTP: roots, and the HTTP
// session's ends (the server's own stream, DELETE).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/mcp_fixture.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinMcpClientTest : public McpFixture {
 protected:
  // The text of the model's last tool result in request n.
  static std::string ResultText(const std::vector<json>& requests, size_t n) {
    if (n >= requests.size()) return "";
    json r = ToolResultsOf(requests[n]).back();
    return r.value("status", "") + ": " + r.value("output", "");
  }
};

// The workspace is the session's root: server-everything, which offers its
// get-roots-list tool only to a client that declares roots, lists it. A
// server configured with "roots": false is offered none and learns no path.
TEST_F(OdinMcpClientTest, TheWorkspaceIsTheRootUnlessTheServerIsToldNone) {
  json hidden = Everything();
  hidden["roots"] = false;
  UserConfig({{"mcpServers", {{"everything", Everything()}, {"hidden", hidden}}}});
  // The calls wait for their servers, so the next request knows both.
  FakeLlm llm(json({{"responses",
                     {Turn({Call("mcp__everything__get-roots-list", json::object()),
                            Call("mcp__hidden__echo", {{"message", "hi"}})}),
                      Text("Done.")}}})
                  .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  std::vector<std::string> offered = ToolNamesOf(requests[1]);
  EXPECT_TRUE(Contains(offered, "mcp__everything__get-roots-list"));
  EXPECT_TRUE(Contains(offered, "mcp__hidden__echo"));
  EXPECT_FALSE(Contains(offered, "mcp__hidden__get-roots-list"));
  std::string text = ToolResultsOf(requests[1])[0].value("output", "");
  EXPECT_EQ(ToolResultsOf(requests[1])[0]["status"], "ok");
  EXPECT_NE(text.find("Current MCP Roots (1 total)"), std::string::npos) << text;
  EXPECT_NE(text.find("URI: file://" + ws_.path() + "\n"), std::string::npos) << text;
}

// Over streamable HTTP, the server's requests that belong to no call of
// Odin's (server-everything asks for the roots 350 ms after the session
// starts, and again when the tool runs) come only on the stream Odin opens
// with GET; the session ends with a DELETE of its id.
TEST_F(OdinMcpClientTest, AnHttpSessionOpensTheServersStreamAndEndsWithDelete) {
  int port = 0;
  std::string log = user_.Join("server.log");
  pid_t server = StartEverythingHttp(&port, log);
  ASSERT_GT(server, 0);
  UserConfig(
      {{"mcpServers", {{"remote", {{"type", "http"}, {"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"}}}}}});
  FakeLlm llm(
      json({{"responses", {Turn({Call("mcp__remote__get-roots-list", json::object())}), Text("Done.")}}}).dump());
  json r = Prompt(llm);
  StopServer(server);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  std::string text = ResultText(requests, 1);
  EXPECT_NE(text.find("ok: Current MCP Roots (1 total)"), std::string::npos) << text;
  EXPECT_NE(text.find("URI: file://" + ws_.path() + "\n"), std::string::npos) << text;
  StatusOr<std::string> read = ReadFileToString(log);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const std::string& said = *read;
  const std::string started = "Session initialized with ID: ";
  size_t at = said.find(started);
  ASSERT_NE(at, std::string::npos) << said;
  std::string id = said.substr(at + started.size(), said.find('\n', at) - at - started.size());
  EXPECT_NE(said.find("Establishing new SSE stream for session " + id), std::string::npos) << said;
  EXPECT_NE(said.find("Received session termination request for session " + id), std::string::npos) << said;
}

// A server's resources are offered to the model as two tools of Odin's:
// listed (resources and templates), and read by URI (a text, a blob of text
// decoded), in ask mode too; an unknown URI is the server's error. Nothing
// of them is in the system prompt.
TEST_F(OdinMcpClientTest, ResourcesAreListedAndReadThroughTwoTools) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  auto read = [](const std::string& uri) { return Call("ReadMcpResource", {{"server", "everything"}, {"uri", uri}}); };
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ListMcpResources", json::object())}), Turn({read("demo://resource/dynamic/text/3")}),
                      Turn({read("demo://resource/dynamic/blob/2")}), Turn({read("demo://no/such/resource")}),
                      Turn({Call("ReadMcpResource", {{"server", "nobody"}, {"uri", "demo://x"}})}), Text("Done.")}}})
                  .dump());
  json r = Prompt(llm, {"--mode", "ask"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 6u) << last_.err;
  // The listing waited for the server, which started in the background.
  std::vector<std::string> offered = ToolNamesOf(requests[1]);
  EXPECT_TRUE(Contains(offered, "ListMcpResources"));
  EXPECT_TRUE(Contains(offered, "ReadMcpResource"));
  std::string listed = ResultText(requests, 1);
  EXPECT_NE(listed.find("ok: MCP server everything"), std::string::npos) << listed;
  EXPECT_NE(listed.find("demo://resource/static/document/"), std::string::npos) << listed;
  EXPECT_NE(listed.find("template demo://resource/dynamic/text/{resourceId}"), std::string::npos) << listed;
  std::string text = ResultText(requests, 2);
  EXPECT_NE(text.find("ok: <resource uri=\"demo://resource/dynamic/text/3\""), std::string::npos) << text;
  EXPECT_NE(text.find("Resource 3: This is a plaintext resource"), std::string::npos) << text;
  std::string blob = ResultText(requests, 3);
  EXPECT_NE(blob.find("Resource 2: This is a base64 blob"), std::string::npos) << blob;
  json missing = ToolResultsOf(requests[4]).back();
  EXPECT_EQ(missing["status"], "error") << missing.dump();
  json nobody = ToolResultsOf(requests[5]).back();
  EXPECT_NE(nobody["status"], "ok") << nobody.dump();
  EXPECT_NE(nobody.dump().find("no MCP server is named 'nobody'"), std::string::npos) << nobody.dump();
  // What a server says is untrusted, and stays out of the system prompt.
  EXPECT_EQ(ToolResultsOf(requests[2]).back()["authority"], "untrusted_content");
  for (const json& q : requests) {
    for (const json& m : q["body"]["messages"]) {
      if (m["role"] == "system") EXPECT_EQ(m.dump().find("demo://"), std::string::npos);
    }
  }
  EXPECT_EQ(Rows("SELECT s.tool || '|' || e.status FROM execution_starts s JOIN execution_ends e USING "
                 "(execution_id) WHERE s.tool LIKE '%McpResource%' ORDER BY s.rowid"),
            (std::vector<std::string>{"ListMcpResources|ok", "ReadMcpResource|ok", "ReadMcpResource|ok",
                                      "ReadMcpResource|error", "ReadMcpResource|rejected"}));
}

// A server that says its lists changed mid-session: the next request offers
// its tools as they are now (a removed one is refused), the resources' tools
// appear with its first resource, and the model hears what changed once, in
// the tool result that came with it; the ledger records it.
TEST_F(OdinMcpClientTest, AListChangedMidSessionIsWhatTheModelIsOfferedAndTold) {
  UserConfig({{"mcpServers", {{"scripted", Scripted("changing")}}}});
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("mcp__scripted__grow", json::object())}), Turn({Call("mcp__scripted__late", {{"n", 1}})}),
              Turn({Call("mcp__scripted__work", {{"n", 2}})}),
              Turn({Call("ReadMcpResource", {{"server", "scripted"}, {"uri", "mem://late"}})}), Text("Done.")}}})
          .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 5u) << last_.err;
  // (The first request went before the server was ready; grow waited.)
  std::vector<std::string> after = ToolNamesOf(requests[1]);
  EXPECT_TRUE(Contains(after, "mcp__scripted__late"));
  EXPECT_FALSE(Contains(after, "mcp__scripted__work"));
  EXPECT_TRUE(Contains(after, "ReadMcpResource"));
  json grown = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(grown["status"], "ok") << grown.dump();
  EXPECT_EQ(grown.value("mcp_news", ""),
            "[runtime] MCP server scripted changed (its words, untrusted): tools +late -work; resources +mem://late")
      << grown.dump();
  EXPECT_EQ(ToolResultsOf(requests[2]).back()["status"], "ok");
  EXPECT_FALSE(ToolResultsOf(requests[2]).back().contains("mcp_news")) << "told once";
  json gone = ToolResultsOf(requests[3]).back();
  EXPECT_EQ(gone["status"], "rejected") << gone.dump();
  EXPECT_NE(gone.dump().find("has no tool 'work'"), std::string::npos) << gone.dump();
  EXPECT_NE(ResultText(requests, 4).find("the late resource"), std::string::npos) << ResultText(requests, 4);
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.change') FROM gate_events WHERE kind = 'mcp_listing'"),
            std::vector<std::string>{"tools +late -work; resources +mem://late"});
}

// A server's prompts are slash commands, /mcp__SERVER__PROMPT, in odin -p
// as interactively: the arguments by name or in order, the message the
// prompt makes (an embedded resource in it), fetched as Odin's own call
// and recorded. A missing required argument or an unknown prompt is one
// line and no message; a custom command of the same name comes first.
TEST_F(OdinMcpClientTest, PromptsAreSlashCommands) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  auto first_message = [this](const std::string& line) {
    FakeLlm llm(json({{"responses", {Text("Done.")}}}).dump());
    last_ = RunOdin(ws_.path(), {"-p", line, "--output-format", "json"}, FakeModelEnv(llm, marker_, user_));
    std::vector<json> requests = RequestsOf(llm);
    return requests.empty() ? std::string() : requests[0]["body"]["messages"].dump();
  };
  EXPECT_NE(first_message("/mcp__everything__args-prompt Paris").find("What's weather in Paris?"), std::string::npos)
      << last_.err;
  EXPECT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_NE(first_message("/mcp__everything__args-prompt state=Rhone city=Lyon").find("What's weather in Lyon, Rhone?"),
            std::string::npos)
      << last_.err;
  std::string resource = first_message("/mcp__everything__resource-prompt Text 2");
  EXPECT_NE(resource.find("This prompt includes the Text resource with id: 2"), std::string::npos) << last_.err;
  EXPECT_NE(resource.find("Resource 2: This is a plaintext resource"), std::string::npos) << resource;
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM execution_starts s JOIN execution_ends e USING (execution_id) WHERE s.tool = "
                 "'McpGetPrompt' AND e.status = 'ok' AND s.agent_id = 'user'"),
            std::vector<std::string>{"3"});

  EXPECT_EQ(first_message("/mcp__everything__args-prompt"), "") << "nothing sent";
  EXPECT_NE(last_.exit_code, 0);
  EXPECT_NE(last_.err.find("/mcp__everything__args-prompt: missing city (required); nothing was sent"),
            std::string::npos)
      << last_.err;
  EXPECT_EQ(first_message("/mcp__everything__no-such-prompt"), "");
  EXPECT_NE(last_.err.find("MCP server everything has no prompt 'no-such-prompt'"), std::string::npos) << last_.err;

  ASSERT_TRUE(MakeDirs(user_.Join("claude/commands")).ok());
  ASSERT_TRUE(
      WriteFileAtomic(user_.Join("claude/commands/mcp__everything__simple-prompt.md"), "the custom one\n").ok());
  std::string custom = first_message("/mcp__everything__simple-prompt");
  EXPECT_NE(custom.find("the custom one"), std::string::npos) << custom << last_.err;
  EXPECT_EQ(custom.find("This is a simple prompt"), std::string::npos) << custom;
}

// A server that asks the user something mid-call (elicitation) where
// nobody can answer (odin -p) is declined, and the ledger records the
// question: the server, its words, the fields it asked for.
TEST_F(OdinMcpClientTest, AnElicitationNobodyCanAnswerIsDeclinedAndRecorded) {
  UserConfig({{"mcpServers", {{"everything", Everything()}}}});
  FakeLlm llm(json({{"responses",
                     {Turn({Call("mcp__everything__trigger-elicitation-request", json::object())}), Text("Done.")}}})
                  .dump());
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u) << last_.err;
  std::string text = ResultText(requests, 1);
  EXPECT_NE(text.find("User declined to provide the requested information"), std::string::npos) << text;
  std::vector<std::string> asked = Rows(
      "SELECT json_extract(detail_json, '$.server') || '|' || json_extract(detail_json, '$.action') || '|' || "
      "json_extract(detail_json, '$.answered_by') || '|' || json_extract(detail_json, '$.message') || '|' || "
      "(SELECT group_concat(value) FROM json_each(detail_json, '$.fields')) FROM gate_events WHERE kind = "
      "'elicitation'");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].rfind("everything|decline|headless|Please provide inputs for the following fields:|", 0), 0u)
      << asked[0];
  EXPECT_NE(asked[0].find(",check,"), std::string::npos) << asked[0];
  EXPECT_NE(asked[0].find(",name,"), std::string::npos) << asked[0];
}

// The rules and modes that hold for a server's tools hold for its
// resources: a rule denying the server denies reading them (and hides them
// from the listing), ask mode reads nothing of a writable server, and a
// model's odd arguments get an error, never a crash.
TEST_F(OdinMcpClientTest, ResourcesMeetTheServersRulesAndModes) {
  json writable = Everything();
  writable["writable"] = true;
  UserConfig({{"mcpServers", {{"everything", Everything()}, {"vault", Everything()}, {"rw", writable}}},
              {"permissions", {{"deny", {"mcp__vault"}}}}});
  auto read = [](const std::string& server) {
    return Call("ReadMcpResource", {{"server", server}, {"uri", "demo://resource/dynamic/text/1"}});
  };
  FakeLlm llm(json({{"responses",
                     {Turn({Call("ListMcpResources", {{"server", nullptr}})}),
                      Turn({Call("ListMcpResources", {{"server", 1}})}), Turn({read("vault")}), Turn({read("rw")}),
                      Turn({read("everything")}), Text("Done.")}}})
                  .dump());
  json r = Prompt(llm, {"--mode", "ask"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 6u) << last_.err;
  std::string listed = ResultText(requests, 1);
  EXPECT_NE(listed.find("MCP server everything"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("MCP server vault"), std::string::npos) << listed;
  for (const json& t : requests[1]["body"]["tools"]) {
    if (t["function"]["name"] == "ListMcpResources") {
      EXPECT_EQ(t["function"]["description"].get<std::string>().find("vault"), std::string::npos) << t.dump();
    }
  }
  EXPECT_NE(ResultText(requests, 2).find("error: "), std::string::npos) << ResultText(requests, 2);
  EXPECT_NE(ResultText(requests, 2).find("server must be a string"), std::string::npos) << ResultText(requests, 2);
  json denied = ToolResultsOf(requests[3]).back();
  EXPECT_EQ(denied["status"], "rejected") << denied.dump();
  EXPECT_NE(denied.dump().find("rule 'mcp__vault'"), std::string::npos) << denied.dump();
  json ask = ToolResultsOf(requests[4]).back();
  EXPECT_EQ(ask["status"], "rejected") << ask.dump();
  EXPECT_NE(ask.dump().find("MCP server rw is writable"), std::string::npos) << ask.dump();
  EXPECT_EQ(ToolResultsOf(requests[5]).back()["status"], "ok");
}

}  // namespace
}  // namespace odin::testing
