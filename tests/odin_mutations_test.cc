// Every change is a mutation, end to end: what a command changes in the
// workspace is recorded, staled, reported and counted like a file tool's
// write, through the real odin, sandbox, workers and ledger. (The
// validation of a command's changes, with clangd, is in
// odin_validation_test.cc.)

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinMutationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A real repository: its .gitignore decides what is summarised.
    StatusOr<CommandOutput> init =
        RunCommand({.argv = {"git", "init", "-q", ws_.path()}, .env = CurrentEnvironment()});
    ASSERT_TRUE(init.ok() && init->exit_code == 0);
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) {
    return {{"OPENAI_BASE_URL", llm.OpenAiUrl()},
            {"OPENAI_API_KEY", "test-key"},
            {"ANTHROPIC_BASE_URL", ""},
            {"ANTHROPIC_API_KEY", ""},
            {"ODIN_TEST_MARK", marker_},
            {"XDG_CONFIG_HOME", user_.Join("config")},
            {"XDG_STATE_HOME", user_.Join("state")}};
  }
  json Prompt(const FakeLlm& llm) {
    last_ = RunOdin(ws_.path(), {"-p", "do the task", "--output-format", "json"}, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  // The newest tool result a request carried, parsed.
  static json LastResult(const json& request) {
    std::vector<json> results = ToolResultsOf(request);
    return results.empty() ? json() : results.back();
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }
  std::vector<std::string> Rows(const std::string& sql, const std::string& bind = "") {
    return LedgerRows(ws_.Join(".odin/odin.db"), sql, bind);
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// A command's creations, modifications and deletions reach the model, the
// report, changed_files and the ledger; what git ignores is only counted.
TEST_F(OdinMutationsTest, ACommandsChangesAreRecordedReportedAndIgnoredOnesCounted) {
  Put(".gitignore", "node_modules/\n");
  Put("old.txt", "old\n");
  Put("keep.txt", "one\ntwo\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"mkdir -p node_modules/pkg && echo x > node_modules/pkg/index.js && echo hi > new.txt && rm old.txt && printf 'one\n2\n' > keep.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  json record = LastResult(requests[1]);
  std::string command = record["execution_id"];
  json expected = json::array({{{"path", "keep.txt"}, {"change", "modified"}},
                               {{"path", "new.txt"}, {"change", "created"}},
                               {{"path", "old.txt"}, {"change", "deleted"}}});
  EXPECT_EQ(record["changes"], expected) << record.dump();
  EXPECT_EQ(record["ignored_changes"]["node_modules"], 3) << record.dump();  // the two directories and the file

  EXPECT_EQ(r["changed_files"], json::array({"keep.txt", "new.txt", "old.txt"}));
  const json& files = r["report"]["files"];
  ASSERT_EQ(files.size(), 3u) << r["report"].dump();
  EXPECT_EQ(files[0]["path"], "keep.txt");
  EXPECT_EQ(files[0]["by_command"], true);
  EXPECT_EQ(files[0]["execution_ids"], json::array({command}));
  EXPECT_TRUE(files[0]["lines_added"].is_null());  // never read: its lines before are not known
  EXPECT_EQ(files[1]["change"], "created");
  EXPECT_EQ(files[1]["lines_added"], 1);
  EXPECT_EQ(files[2]["change"], "deleted");
  ASSERT_EQ(r["report"]["ignored_changes"].size(), 1u);
  EXPECT_EQ(r["report"]["ignored_changes"][0]["path"], "node_modules");
  EXPECT_EQ(r["report"]["ignored_changes"][0]["entries"], 3);

  // One record per path, chained like every other record.
  std::vector<std::string> rows = Rows(
      "SELECT substr(path, length(?) + 2), change, source, undoable FROM mutations WHERE execution_id = '" + command +
          "' ORDER BY path",
      ws_.path());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "keep.txt|modified|command|0");      // its bytes before were never seen
  EXPECT_EQ(rows[1], "new.txt|created|command|1");        // undone by deleting it
  EXPECT_EQ(rows[2], "node_modules|ignored|command|0");
  EXPECT_EQ(rows[3], "old.txt|deleted|command|0");
  EXPECT_EQ(Rows("SELECT after_sha256 FROM mutations WHERE path LIKE '%/new.txt'")[0],
            "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4");  // sha256("hi\n")
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// A file changed by a command since the model read it: an edit based on
// that Read is refused, naming the command; after a new Read it lands.
TEST_F(OdinMutationsTest, AnEditAfterACommandChangedTheFileWaitsForANewRead) {
  Put("a.txt", "one\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sed -i s/one/two/ a.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.txt","old_string":"one","new_string":"three"}}]},
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.txt","old_string":"two","new_string":"three"}}]},
    {"text":"a.txt says three."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("a.txt"), "three\n");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 6u);
  std::string sed = LastResult(requests[2])["execution_id"];
  json refused = LastResult(requests[3]);
  EXPECT_EQ(refused["status"], "rejected");
  EXPECT_NE(refused["output"].get<std::string>().find("changed since you read it (by " + sed + ")"),
            std::string::npos)
      << refused.dump();
  EXPECT_EQ(LastResult(requests[5])["status"], "ok");
  // The command's change had its before-image (the Read held the bytes):
  // counted in lines, and undoable.
  EXPECT_EQ(Rows("SELECT lines_added || '/' || lines_removed || '/' || undoable FROM mutations WHERE execution_id = ?",
                 sed),
            std::vector<std::string>{"1/1/1"});
  // The report lists both changes of the file, the command's and the edit's.
  const json& files = r["report"]["files"];
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0]["execution_ids"].size(), 2u);
  EXPECT_EQ(files[0]["execution_ids"][0], sed);
}

// odin exec in its own (writable) mode records what the command changed,
// and a read-only mode changes nothing.
TEST_F(OdinMutationsTest, OdinExecRecordsWhatItsCommandChanged) {
  Ran ran = RunOdin(ws_.path(), {"exec", "--json", "--", "sh", "-c", "echo made > made.txt"},
                    {{"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  json out = json::parse(ran.out);
  EXPECT_EQ(out["changed_files"], json::array({"made.txt"})) << ran.out;
  std::string id = out["execution_id"];
  EXPECT_EQ(Rows("SELECT change || '|' || source FROM mutations WHERE execution_id = ?", id),
            std::vector<std::string>{"created|command"});
}

}  // namespace
}  // namespace odin::testing
