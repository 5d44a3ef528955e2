#include "mcp/mcp_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace odin {
namespace {

using nlohmann::json;

class McpClientTest : public ::testing::Test {
 protected:
  McpClientTest()
      : client_("odin", "1.0",
                {[this] { ++ready_; },
                 [this](uint64_t call, double p, double t, const std::string& m) {
                   progress_.push_back(std::to_string(call) + " " + std::to_string(static_cast<int>(p)) + "/" +
                                       std::to_string(static_cast<int>(t)) + " " + m);
                 },
                 [this](uint64_t call, const McpCallResult& r) { results_[call] = r; },
                 [this](const std::string& why) { failure_ = why; }}) {}

  // What the client sent since the last look, parsed.
  std::vector<json> Sent() {
    std::vector<json> out;
    std::string text = client_.TakeOutput();
    for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      out.push_back(json::parse(text.substr(start, nl - start)));
    }
    return out;
  }
  void Answer(uint64_t id, const json& result) {
    client_.Feed(json({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}).dump() + "\n");
  }
  // initialize and one page of tools.
  void Handshake(const json& tools, const std::string& version = "2025-06-18") {
    client_.Start();
    std::vector<json> sent = Sent();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0]["method"], "initialize");
    EXPECT_EQ(sent[0]["params"]["protocolVersion"], "2025-06-18");
    Answer(sent[0]["id"], {{"protocolVersion", version},
                           {"capabilities", {{"tools", json::object()}}},
                           {"serverInfo", {{"name", "everything"}, {"version", "1"}}}});
    sent = Sent();
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0]["method"], "notifications/initialized");
    EXPECT_FALSE(sent[0].contains("id"));
    EXPECT_EQ(sent[1]["method"], "tools/list");
    Answer(sent[1]["id"], {{"tools", tools}});
  }

  McpClient client_;
  int ready_ = 0;
  std::vector<std::string> progress_;
  std::map<uint64_t, McpCallResult> results_;
  std::string failure_;
};

const json kTools = json::array({{{"name", "echo"},
                                  {"description", "Echoes"},
                                  {"inputSchema", {{"type", "object"}}},
                                  {"annotations", {{"readOnlyHint", true}}}},
                                 {{"name", "write"}, {"inputSchema", {{"type", "object"}}}}});

TEST_F(McpClientTest, HandshakeListsToolsWithTheirHints) {
  Handshake(kTools);
  ASSERT_EQ(ready_, 1);
  ASSERT_TRUE(client_.ready());
  EXPECT_EQ(client_.server_name(), "everything");
  ASSERT_EQ(client_.tools().size(), 2u);
  EXPECT_EQ(client_.tools()[0].name, "echo");
  EXPECT_TRUE(client_.tools()[0].read_only);
  EXPECT_FALSE(client_.tools()[1].read_only);  // no annotation: not read-only
  EXPECT_TRUE(client_.tools()[1].destructive);
}

TEST_F(McpClientTest, AnOlderRevisionIsAcceptedAnUnknownOneFails) {
  Handshake(kTools, "2024-11-05");
  EXPECT_TRUE(client_.ready());
  EXPECT_EQ(client_.protocol_version(), "2024-11-05");

  McpClient other("odin", "1", {nullptr, nullptr, nullptr, [this](const std::string& why) { failure_ = why; }});
  other.Start();
  json init = json::parse(other.TakeOutput());
  other.Feed(json({{"jsonrpc", "2.0"}, {"id", init["id"]}, {"result", {{"protocolVersion", "1999-01-01"}}}}).dump() +
             "\n");
  EXPECT_TRUE(other.failed());
  EXPECT_NE(failure_.find("1999-01-01"), std::string::npos);
}

TEST_F(McpClientTest, ToolsListFollowsCursors) {
  client_.Start();
  json init = Sent()[0];
  Answer(init["id"], {{"protocolVersion", "2025-03-26"}});
  json list = Sent()[1];
  Answer(list["id"], {{"tools", {kTools[0]}}, {"nextCursor", "page2"}});
  std::vector<json> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["params"]["cursor"], "page2");
  EXPECT_FALSE(client_.ready());
  Answer(sent[0]["id"], {{"tools", {kTools[1]}}});
  EXPECT_TRUE(client_.ready());
  EXPECT_EQ(client_.tools().size(), 2u);
}

TEST_F(McpClientTest, ACallWithProgressAndItsResult) {
  Handshake(kTools);
  Sent();
  uint64_t call = client_.CallTool("echo", R"({"message":"hi"})");
  json sent = Sent()[0];
  EXPECT_EQ(sent["method"], "tools/call");
  EXPECT_EQ(sent["params"]["name"], "echo");
  EXPECT_EQ(sent["params"]["arguments"]["message"], "hi");
  EXPECT_EQ(sent["params"]["_meta"]["progressToken"], call);
  // Progress, split across reads, and a line with \r\n.
  std::string note = json({{"jsonrpc", "2.0"},
                           {"method", "notifications/progress"},
                           {"params", {{"progressToken", call}, {"progress", 1}, {"total", 3}, {"message", "step"}}}})
                         .dump();
  client_.Feed(note.substr(0, 10));
  client_.Feed(note.substr(10) + "\r\n");
  ASSERT_EQ(progress_.size(), 1u);
  EXPECT_EQ(progress_[0], std::to_string(call) + " 1/3 step");
  Answer(
      call,
      {{"content",
        {{{"type", "text"}, {"text", "Echo: hi"}}, {{"type", "image"}, {"mimeType", "image/png"}, {"data", "AAAA"}}}}});
  ASSERT_EQ(results_.count(call), 1u);
  EXPECT_FALSE(results_[call].is_error);
  EXPECT_EQ(results_[call].text, "Echo: hi\n[image image/png, 4 bytes base64]");
}

TEST_F(McpClientTest, ACallsArgumentsPassThroughAsTheirTextUnparsed) {
  Handshake(kTools);
  Sent();
  // Bytes a parse and a dump would change (1.50, the escape) arrive as given.
  uint64_t call = client_.CallTool("echo", R"({"n":1.50,"s":"a\u0041"})");
  std::string line = client_.TakeOutput();
  EXPECT_NE(line.find(R"("arguments":{"n":1.50,"s":"a\u0041"})"), std::string::npos) << line;
  json sent = json::parse(line);
  EXPECT_EQ(sent["id"], call);
  EXPECT_EQ(sent["params"]["name"], "echo");
  EXPECT_EQ(sent["params"]["arguments"]["s"], "aA");
  // What is not one line of an object goes as {}: the request stays one line.
  client_.CallTool("echo", "{\n}");
  std::string second = client_.TakeOutput();
  EXPECT_EQ(std::count(second.begin(), second.end(), '\n'), 1) << second;
  EXPECT_EQ(json::parse(second)["params"]["arguments"], json::object());
}

TEST_F(McpClientTest, ToolErrorsAndProtocolErrorsAreResultsNotFailures) {
  Handshake(kTools);
  Sent();
  uint64_t a = client_.CallTool("write", "{}");
  uint64_t b = client_.CallTool("nope", "{}");
  Sent();
  Answer(a, {{"content", {{{"type", "text"}, {"text", "disk full"}}}}, {"isError", true}});
  client_.Feed(
      json({{"jsonrpc", "2.0"}, {"id", b}, {"error", {{"code", -32602}, {"message", "Unknown tool: nope"}}}}).dump() +
      "\n");
  EXPECT_TRUE(results_[a].is_error);
  EXPECT_EQ(results_[a].text, "disk full");
  EXPECT_TRUE(results_[b].is_error);
  EXPECT_EQ(results_[b].error, "Unknown tool: nope (code -32602)");
  EXPECT_FALSE(client_.failed());
}

TEST_F(McpClientTest, CancelSendsANotificationAndDropsTheResult) {
  Handshake(kTools);
  Sent();
  uint64_t call = client_.CallTool("echo", "{}");
  Sent();
  client_.Cancel(call, "timed out");
  json cancelled = Sent()[0];
  EXPECT_EQ(cancelled["method"], "notifications/cancelled");
  EXPECT_EQ(cancelled["params"]["requestId"], call);
  Answer(call, {{"content", json::array()}});
  EXPECT_EQ(results_.count(call), 0u);
}

TEST_F(McpClientTest, TheServersRequestsAreAnswered) {
  Handshake(kTools);
  Sent();
  client_.Feed(R"({"jsonrpc":"2.0","id":"p1","method":"ping"})"
               "\n"
               R"({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}})"
               "\n");
  std::vector<json> sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0]["id"], "p1");
  EXPECT_TRUE(sent[0]["result"].is_object());
  EXPECT_EQ(sent[1]["id"], 7);
  EXPECT_EQ(sent[1]["error"]["code"], -32601);
}

// Roots are declared only when offered, and roots/list answers them; with
// none, roots/list is a method the client does not have.
TEST_F(McpClientTest, RootsAreDeclaredAndListedOnlyWhenOffered) {
  for (bool offered : {false, true}) {
    SCOPED_TRACE(offered);
    McpClient client("odin", "1.0", {});
    if (offered) client.OfferRoots({{"file:///w/my%20project", "my project"}});
    client.Start();
    json init = json::parse(client.TakeOutput());
    EXPECT_EQ(init["params"]["capabilities"].contains("roots"), offered) << init.dump();
    client.Feed(R"({"jsonrpc":"2.0","id":"r","method":"roots/list","params":{}})"
                "\n");
    json answer = json::parse(client.TakeOutput());
    EXPECT_EQ(answer["id"], "r");
    if (offered) {
      EXPECT_EQ(answer["result"], json({{"roots", {{{"uri", "file:///w/my%20project"}, {"name", "my project"}}}}}));
    } else {
      EXPECT_EQ(answer["error"]["code"], -32601);
    }
  }
}

// A server that declares resources: after the tools, its resources and
// templates are listed (pages followed) before the session is ready; a read
// answers as text, a blob of text decoded, any other blob described.
TEST_F(McpClientTest, ResourcesAreListedThenReadAsText) {
  client_.Start();
  std::vector<json> sent = Sent();
  Answer(sent[0]["id"], {{"protocolVersion", "2025-06-18"},
                         {"capabilities", {{"tools", json::object()}, {"resources", {{"listChanged", true}}}}}});
  sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  Answer(sent[1]["id"], {{"tools", kTools}});
  EXPECT_EQ(ready_, 0);
  sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["method"], "resources/list");
  Answer(sent[0]["id"], {{"resources", {{{"uri", "demo://a"}, {"name", "a"}, {"mimeType", "text/plain"}, {"size", 5}}}},
                         {"nextCursor", "2"}});
  sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["params"]["cursor"], "2");
  Answer(sent[0]["id"], {{"resources", {{{"uri", "demo://b"}}, {{"name", "no uri"}}}}});
  sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["method"], "resources/templates/list");
  Answer(sent[0]["id"], {{"resourceTemplates", {{{"uriTemplate", "demo://t/{id}"}, {"name", "t"}}}}});
  ASSERT_EQ(ready_, 1);
  ASSERT_EQ(client_.resources().size(), 2u);
  EXPECT_EQ(client_.resources()[0].size, 5);
  EXPECT_EQ(client_.resources()[1].uri, "demo://b");
  ASSERT_EQ(client_.resource_templates().size(), 1u);
  EXPECT_EQ(client_.resource_templates()[0].uri_template, "demo://t/{id}");

  uint64_t read = client_.ReadResource("demo://a");
  sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["method"], "resources/read");
  EXPECT_EQ(sent[0]["params"]["uri"], "demo://a");
  Answer(read, {{"contents",
                 {{{"uri", "demo://a"}, {"mimeType", "text/plain"}, {"text", "hello"}},
                  {{"uri", "demo://b"}, {"mimeType", "text/plain"}, {"blob", "aGk="}},
                  {{"uri", "demo://c"}, {"mimeType", "image/png"}, {"blob", "iVBORw=="}}}}});
  ASSERT_EQ(results_.count(read), 1u);
  EXPECT_EQ(results_[read].text,
            "<resource uri=\"demo://a\" mimeType=\"text/plain\">\nhello\n</resource>\n"
            "<resource uri=\"demo://b\" mimeType=\"text/plain\">\nhi\n</resource>\n"
            "<resource uri=\"demo://c\" mimeType=\"image/png\">\n[blob image/png, 4 bytes]\n</resource>");
}

// A server without resources is never asked for them; one that refuses the
// listing has none, and its session goes on.
TEST_F(McpClientTest, NoResourcesDeclaredOrRefusedMeansNone) {
  Handshake(kTools);
  EXPECT_EQ(ready_, 1);
  EXPECT_FALSE(client_.offers_resources());
  for (const json& m : Sent()) EXPECT_NE(m.value("method", ""), "resources/list");

  McpClient refused("odin", "1.0", {});
  refused.Start();
  json init = json::parse(refused.TakeOutput());
  refused.Feed(
      json({{"jsonrpc", "2.0"},
            {"id", init["id"]},
            {"result", {{"protocolVersion", "2025-06-18"}, {"capabilities", {{"resources", json::object()}}}}}})
          .dump() +
      "\n");
  std::string out = refused.TakeOutput();
  json list = json::parse(out.substr(out.find('\n') + 1));
  refused.Feed(json({{"jsonrpc", "2.0"}, {"id", list["id"]}, {"result", {{"tools", json::array()}}}}).dump() + "\n");
  json resources = json::parse(refused.TakeOutput());
  refused.Feed(
      json({{"jsonrpc", "2.0"}, {"id", resources["id"]}, {"error", {{"code", -32601}, {"message", "no"}}}}).dump() +
      "\n");
  json templates = json::parse(refused.TakeOutput());
  EXPECT_EQ(templates["method"], "resources/templates/list");
  refused.Feed(json({{"jsonrpc", "2.0"}, {"id", templates["id"]}, {"result", json::object()}}).dump() + "\n");
  EXPECT_TRUE(refused.ready());
  EXPECT_FALSE(refused.failed());
  EXPECT_TRUE(refused.resources().empty());
}

// list_changed: one listing at a time, notifications during it make one
// more, and each later listing is news; a server that never stops is
// followed a hundred times, then no more.
TEST_F(McpClientTest, ListChangedIsCoalescedAndBounded) {
  int changed = 0;
  McpClient::Callbacks cb;
  cb.on_listing_changed = [&changed] { ++changed; };
  McpClient client("odin", "1.0", cb);
  client.Start();
  auto answer = [&client](const json& request, const json& result) {
    client.Feed(json({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}).dump() + "\n");
  };
  auto sent = [&client] {
    std::vector<json> out;
    std::string text = client.TakeOutput();
    for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      out.push_back(json::parse(text.substr(start, nl - start)));
    }
    return out;
  };
  answer(sent()[0], {{"protocolVersion", "2025-06-18"}, {"capabilities", {{"tools", {{"listChanged", true}}}}}});
  answer(sent()[1], {{"tools", kTools}});
  ASSERT_TRUE(client.ready());
  const std::string note = R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})"
                           "\n";
  for (int i = 0; i < 50; ++i) client.Feed(note);
  std::vector<json> lists = sent();
  ASSERT_EQ(lists.size(), 1u) << "one listing for fifty notifications";
  answer(lists[0], {{"tools", kTools}});
  EXPECT_EQ(changed, 0) << "not news while another listing is under way";
  lists = sent();
  ASSERT_EQ(lists.size(), 1u) << "one more for those that came during it";
  answer(lists[0], {{"tools", kTools}});
  EXPECT_EQ(changed, 1);
  EXPECT_TRUE(sent().empty());
  int listings = 2;
  for (int i = 0; i < 200; ++i) {
    client.Feed(note);
    for (const json& l : sent()) {
      ++listings;
      answer(l, {{"tools", kTools}});
    }
  }
  EXPECT_EQ(listings, McpClient::kMaxRelists);
  EXPECT_EQ(changed, McpClient::kMaxRelists - 1);
}

// A listing that pages for ever is cut off at kMaxPages.
TEST_F(McpClientTest, AListingThatNeverEndsIsCutOff) {
  client_.Start();
  Answer(Sent()[0]["id"], {{"protocolVersion", "2025-06-18"}, {"capabilities", {{"tools", json::object()}}}});
  std::vector<json> sent = Sent();
  int pages = 0;
  json last = sent[1];
  while (!client_.ready() && pages < 1000) {
    ++pages;
    Answer(last["id"], {{"tools", json::array()}, {"nextCursor", "more"}});
    sent = Sent();
    if (!sent.empty()) last = sent[0];
  }
  EXPECT_TRUE(client_.ready());
  EXPECT_EQ(pages, McpClient::kMaxPages);
}

TEST_F(McpClientTest, GarbageFailsTheSessionAndEndsCallsInFlight) {
  Handshake(kTools);
  Sent();
  uint64_t call = client_.CallTool("echo", "{}");
  client_.Feed("this is not json\n");
  EXPECT_TRUE(client_.failed());
  EXPECT_FALSE(failure_.empty());
  ASSERT_EQ(results_.count(call), 1u);
  EXPECT_TRUE(results_[call].is_error);
  // Later input changes nothing.
  client_.Feed(R"({"jsonrpc":"2.0","id":1,"result":{}})"
               "\n");
  EXPECT_TRUE(client_.failed());
}

TEST_F(McpClientTest, DeepOrHugeInputFailsCleanly) {
  Handshake(kTools);
  Sent();
  client_.Feed(std::string(100000, '[') + "\n");
  EXPECT_TRUE(client_.failed());
}

}  // namespace
}  // namespace odin
