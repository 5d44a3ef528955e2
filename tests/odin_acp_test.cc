// odin acp end to end: the official ACP TypeScript SDK's client
// (tests/acp/acp_client.mjs, the SDK pinned and installed beside the
// binaries by scripts/install-language-servers.sh) drives the real odin
// acp, its workers, sandbox, validation and ledger, against the scripted
// fake model.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinAcpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sdk_ = BinDir() + "/../lsp/node_modules/@agentclientprotocol/sdk";
    if (!PathExists(sdk_ + "/dist/acp.js")) {
      GTEST_SKIP() << "the ACP SDK is not installed (scripts/install-language-servers.sh installs it)";
    }
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  // Runs the client's scenario against odin acp; what it saw.
  json Client(const FakeLlm& llm, const std::string& scenario) {
    std::string script = std::string(ODIN_SOURCE_DIR) + "/tests/acp/acp_client.mjs";
    Ran ran =
        RunOdinWrapped({"node", script, sdk_}, ws_.path(), {ws_.path(), scenario}, FakeModelEnv(llm, marker_, user_));
    json seen = json::parse(ran.out, nullptr, false);
    EXPECT_TRUE(seen.is_object()) << "stdout: " << ran.out << "\nstderr: " << ran.err;
    if (!seen.is_object()) return json::object();
    EXPECT_FALSE(seen.contains("failure")) << seen.value("failure", "") << "\nstderr: " << ran.err;
    EXPECT_FALSE(seen.contains("timedOut")) << ran.err;
    return seen;
  }
  // The updates of one part of the scenario, of one kind.
  static std::vector<json> Updates(const json& seen, const std::string& part, const std::string& kind) {
    std::vector<json> out;
    if (!seen.contains("updates") || !seen["updates"].contains(part)) return out;
    for (const json& u : seen["updates"][part]) {
      if (u.value("sessionUpdate", "") == kind) out.push_back(u);
    }
    return out;
  }
  static std::string Texts(const std::vector<json>& chunks) {
    std::string text;
    for (const json& c : chunks) text += c["content"].value("text", "");
    return text;
  }

  std::string sdk_;
  TempWorkspace ws_, user_;
  std::string marker_ = UniqueMarker();
};

TEST_F(OdinAcpTest, AnEditorReadsEditsAsksIsCancelledAndLoadsTheSessionAgain) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.py"), "def one() -> int:\n    return 1\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"),
                              R"({"permissions":{"ask":["touch"]},"checks":{"build":"","lint":"","tests":""}})")
                  .ok());
  json script = {
      {"responses",
       {Turn({Call("TodoWrite", {{"todos", {{{"id", "1"}, {"content", "Fix a.py"}, {"status", "in_progress"}}}}}),
              Call("Read", {{"file_path", "a.py"}})}),
        Turn({Call("EditTool", {{"file_path", "a.py"}, {"old_string", "return 1"}, {"new_string", "return 2"}})}),
        Turn({Call("ExecuteCommand", {{"command", "touch approved"}})}),
        Turn({Call("ExecuteCommand", {{"command", "touch refused"}})}), Text("fixed"),
        Turn({Call("ExecuteCommand", {{"command", "sleep 60"}})}), Text("resumed")}}};
  FakeLlm llm(script.dump());
  json seen = Client(llm, "session");
  ASSERT_TRUE(seen.contains("init"));

  EXPECT_EQ(seen["init"]["protocolVersion"], 1);
  EXPECT_EQ(seen["init"]["agentCapabilities"]["loadSession"], true);
  // Too broad a directory is refused as on the command line; a relative one is no path.
  EXPECT_NE(seen["errors"].value("root", "").find("not a project"), std::string::npos) << seen["errors"];
  EXPECT_NE(seen["errors"].value("home", "").find("not a project"), std::string::npos) << seen["errors"];
  EXPECT_NE(seen["errors"].value("relative", "").find("absolute"), std::string::npos) << seen["errors"];
  EXPECT_EQ(seen["modes"]["currentModeId"], "edit");
  ASSERT_EQ(seen["modes"]["availableModes"].size(), 3u);

  // The plan comes from TodoWrite.
  std::vector<json> plans = Updates(seen, "first", "plan");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0]["entries"][0]["content"], "Fix a.py");
  EXPECT_EQ(plans[0]["entries"][0]["status"], "in_progress");

  // Each call is a tool call, its end an update with what the ledger says.
  std::vector<json> calls = Updates(seen, "first", "tool_call");
  std::map<std::string, json> by_kind;
  for (const json& c : calls) by_kind[c["kind"]] = c;
  ASSERT_TRUE(by_kind.count("read")) << json(calls);
  EXPECT_EQ(by_kind["read"]["locations"][0]["path"], ws_.Join("a.py"));
  ASSERT_TRUE(by_kind.count("edit"));
  std::string edit_id = by_kind["edit"]["toolCallId"];
  std::vector<json> ends = Updates(seen, "first", "tool_call_update");
  json edit_end;
  std::vector<std::string> command_ends;
  for (const json& u : ends) {
    if (!u.contains("rawOutput")) continue;
    if (u["toolCallId"] == edit_id) edit_end = u;
    if (u["rawOutput"]["summary"].get<std::string>().find("touch") != std::string::npos ||
        u.value("status", "") == "failed") {
      command_ends.push_back(u["status"]);
    }
  }
  ASSERT_TRUE(edit_end.is_object()) << json(ends);
  EXPECT_EQ(edit_end["status"], "completed");
  json diff;
  for (const json& c : edit_end["content"]) {
    if (c["type"] == "diff") diff = c;
  }
  ASSERT_TRUE(diff.is_object()) << edit_end;
  EXPECT_EQ(diff["path"], ws_.Join("a.py"));
  EXPECT_NE(diff["oldText"].get<std::string>().find("return 1"), std::string::npos) << diff;
  EXPECT_NE(diff["newText"].get<std::string>().find("return 2"), std::string::npos) << diff;
  // The validation verdict arrives with it.
  EXPECT_FALSE(edit_end["rawOutput"].value("validation", "").empty()) << edit_end;
  // Odin never has the editor write: the file is the worker's write.
  EXPECT_FALSE(seen.contains("fsWrites")) << seen["fsWrites"];
  EXPECT_EQ(*ReadFileToString(ws_.Join("a.py")), "def one() -> int:\n    return 2\n");
  // A session open here is not loaded again, by its id or a prefix of it.
  EXPECT_NE(seen["errors"].value("loadOpen", "").find("is open already"), std::string::npos) << seen["errors"];
  EXPECT_NE(seen["errors"].value("loadPrefix", "").find("no session"), std::string::npos) << seen["errors"];
  // The read was compared with the editor's buffer, which held unsaved
  // changes: the model hears so before its next message.
  EXPECT_EQ(seen["fsReads"], json::array({ws_.Join("a.py")}));
  bool told = false;
  for (const std::string& line : llm.LogLines()) {
    told = told || line.find("unsaved changes to a.py") != std::string::npos;
  }
  EXPECT_TRUE(told) << "no request told the model of the editor's unsaved changes";

  // Two approvals: granted once, denied once.
  ASSERT_EQ(seen["permissions"].size(), 2u) << seen["permissions"];
  EXPECT_EQ(seen["permissions"][0]["title"], "touch approved");
  EXPECT_EQ(seen["permissions"][1]["title"], "touch refused");
  EXPECT_EQ(seen["permissions"][0]["options"][0], "allow_once");
  EXPECT_TRUE(PathExists(ws_.Join("approved")));
  EXPECT_FALSE(PathExists(ws_.Join("refused")));
  EXPECT_EQ(seen["stops"]["first"]["stopReason"], "end_turn");
  EXPECT_EQ(seen["stops"]["first"]["_meta"]["odin"]["status"], "done");
  EXPECT_NE(Texts(Updates(seen, "first", "agent_message_chunk")).find("fixed"), std::string::npos);

  // Cancelled mid-command.
  EXPECT_EQ(seen["stops"]["second"]["stopReason"], "cancelled");
  EXPECT_NE(seen["errors"].value("badMode", "").find("must be ask"), std::string::npos) << seen["errors"];
  EXPECT_EQ(seen["firstExit"], 0);

  // Loaded again in a second odin acp: the conversation is replayed, and it goes on.
  EXPECT_FALSE(seen["errors"]["unknownLoad"].is_null());
  std::string replayed = Texts(Updates(seen, "loaded", "user_message_chunk"));
  EXPECT_NE(replayed.find("fix a.py"), std::string::npos) << replayed;
  EXPECT_NE(replayed.find("wait"), std::string::npos) << replayed;
  EXPECT_NE(Texts(Updates(seen, "loaded", "agent_message_chunk")).find("fixed"), std::string::npos);
  EXPECT_EQ(seen["stops"]["third"]["stopReason"], "end_turn");
  EXPECT_NE(Texts(Updates(seen, "after_load", "agent_message_chunk")).find("resumed"), std::string::npos);
  EXPECT_EQ(seen["secondExit"], 0);

  // One session in the ledger, of kind acp, with the edit's mutation.
  std::string db = ws_.Join(".odin/odin.db");
  EXPECT_EQ(LedgerRows(db, "SELECT kind FROM sessions"), (std::vector<std::string>{"acp"}));
  EXPECT_EQ(
      LedgerRows(db, "SELECT substr(path, length(?) + 2) || '|' || source FROM mutations ORDER BY rowid", ws_.path()),
      (std::vector<std::string>{"a.py|file_tool", "approved|command"}));
  EXPECT_EQ(LedgerRows(db,
                       "SELECT s.tool, e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) "
                       "WHERE s.tool = 'ExecuteCommand' ORDER BY s.rowid"),
            (std::vector<std::string>{"ExecuteCommand|ok", "ExecuteCommand|rejected", "ExecuteCommand|cancelled"}));
}

}  // namespace
}  // namespace odin::testing
