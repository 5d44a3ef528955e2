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

}  // namespace
}  // namespace odin::testing
