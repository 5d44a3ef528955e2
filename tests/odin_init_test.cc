// `odin init` (headless /init) and InitTool end to end: the model is told
// what Odin detected of the project, writes ODIN.md with InitTool through
// the write gates, and nothing else may write ODIN.md.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinInitTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  Ran Odin(const FakeLlm& llm, std::vector<std::string> args) {
    last_ = RunOdin(ws_.path(), args, FakeModelEnv(llm, marker_, user_));
    return last_;
  }
  std::string FirstUserMessage(const FakeLlm& llm) {
    std::vector<json> requests = RequestsOf(llm);
    if (requests.empty()) return "";
    for (const json& m : requests[0]["body"]["messages"]) {
      if (m["role"] == "user") return m["content"];
    }
    return "";
  }
  static std::vector<std::string> ToolNames(const json& request) {
    std::vector<std::string> names;
    for (const json& t : request["body"]["tools"]) names.push_back(t["function"]["name"]);
    return names;
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// On a CMake project: the model is told the build and test commands Odin
// detected, reads the build file, and writes ODIN.md with InitTool; the
// write is a mutation like any, and ODIN.md names the real commands.
TEST_F(OdinInitTest, OnACMakeProjectTheModelWritesOdinMdNamingItsBuildAndTestCommands) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("CMakeLists.txt"),
                              "cmake_minimum_required(VERSION 3.20)\nproject(calc C)\nenable_testing()\n"
                              "add_executable(calc calc.c)\nadd_test(NAME calc COMMAND calc)\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("calc.c"), "int main(void) { return 0; }\n").ok());
  std::string odin_md =
      "# calc\n\n## Commands\n- build: `cmake --build build`\n- test: `ctest --test-dir build`\n\n## Layout\n"
      "- calc.c: the program\n";
  FakeLlm llm(json({{"responses",
                     {Turn({Call("Read", {{"file_path", "CMakeLists.txt"}})}),
                      Turn({Call("InitTool", {{"content", odin_md}})}), Text("Wrote ODIN.md.")}}})
                  .dump());
  Ran r = Odin(llm, {"init", "--output-format", "json", "--profile", "fast"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string asked = FirstUserMessage(llm);
  EXPECT_NE(asked.find("Write ODIN.md"), std::string::npos) << asked;
  EXPECT_NE(asked.find("cmake --build build"), std::string::npos) << asked;
  EXPECT_NE(asked.find("ctest"), std::string::npos) << asked;
  EXPECT_NE(asked.find("(from CMakeLists.txt)"), std::string::npos) << asked;
  StatusOr<std::string> written = ReadFileToString(ws_.Join("ODIN.md"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, odin_md);
  // Offered for this message: InitTool is in the request's tools.
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_FALSE(requests.empty());
  std::vector<std::string> tools = ToolNames(requests[0]);
  EXPECT_NE(std::find(tools.begin(), tools.end(), "InitTool"), tools.end());
  EXPECT_EQ(Rows("SELECT e.status FROM execution_ends e JOIN execution_starts s USING (execution_id) "
                 "WHERE s.tool = 'InitTool'"),
            std::vector<std::string>{"ok"});
  std::vector<std::string> mutations = Rows("SELECT path || '|' || change || '|' || source FROM mutations");
  ASSERT_EQ(mutations.size(), 1u);
  EXPECT_NE(mutations[0].find("ODIN.md|created|"), std::string::npos) << mutations[0];
  json result = json::parse(r.out);
  EXPECT_EQ(result["changed_files"], json::array({"ODIN.md"})) << r.out;
}

// Issue 47, item 2: a claim that ODIN.md was written is refused while it
// was not; and ODIN.md alone is not judged by the project's checks (here a
// test that fails before and after).
TEST_F(OdinInitTest, AClaimWithoutOdinMdIsRefusedAndOdinMdAloneIsNotJudgedByTheTests) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("Makefile"), "test:\n\t@echo FAIL; exit 1\n").ok());
  std::string odin_md = "# calc\n\n- test: `make test` (fails today)\n";
  FakeLlm llm(
      json({{"responses",
             {Text("Wrote ODIN.md."), Turn({Call("InitTool", {{"content", odin_md}})}), Text("Wrote it now.")}}})
          .dump());
  Ran r = Odin(llm, {"init", "--output-format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json result = json::parse(r.out);
  EXPECT_EQ(result["status"], "done");
  EXPECT_EQ(result["result"], "Wrote it now.");
  EXPECT_EQ(*ReadFileToString(ws_.Join("ODIN.md")), odin_md);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[1]["body"]["messages"].dump().find("/init writes ODIN.md with InitTool, and ODIN.md was not "
                                                        "written"),
            std::string::npos);
  EXPECT_TRUE(result["report"]["checks"].empty()) << result["report"].dump();
}

// On a Python project the detected test command is pytest's.
TEST_F(OdinInitTest, OnAPythonProjectTheModelIsToldItsTestCommand) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("pyproject.toml"), "[project]\nname = \"calc\"\n").ok());
  ASSERT_TRUE(MakeDirs(ws_.Join("tests")).ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("tests/test_calc.py"), "def test_add():\n    assert 1 + 1 == 2\n").ok());
  std::string odin_md = "# calc\n\n- test: `python3 -m pytest -q`\n";
  FakeLlm llm(json({{"responses", {Turn({Call("InitTool", {{"content", odin_md}})}), Text("Wrote ODIN.md.")}}}).dump());
  Ran r = Odin(llm, {"init", "--profile", "fast"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(FirstUserMessage(llm).find("python3 -m pytest -q"), std::string::npos) << FirstUserMessage(llm);
  StatusOr<std::string> written = ReadFileToString(ws_.Join("ODIN.md"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, odin_md);
}

// An existing ODIN.md: odin init refuses without --force; with it, the
// model must read the file before InitTool replaces it (read-before-edit).
TEST_F(OdinInitTest, AnExistingOdinMdIsUpdatedOnlyWithForceAndAfterItIsRead) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("ODIN.md"), "# old\n").ok());
  FakeLlm refused(R"({"responses":[{"text":"should not run"}]})");
  Ran r = Odin(refused, {"init"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ODIN.md exists; `odin init --force` updates it"), std::string::npos) << r.err;
  EXPECT_TRUE(RequestsOf(refused).empty());

  FakeLlm llm(json({{"responses",
                     {Turn({Call("InitTool", {{"content", "# new, unread\n"}})}),
                      Turn({Call("Read", {{"file_path", "ODIN.md"}})}),
                      Turn({Call("InitTool", {{"content", "# old\n\n# and more\n"}})}), Text("Updated.")}}})
                  .dump());
  r = Odin(llm, {"init", "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  json first = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(first["status"], "rejected") << first.dump();
  EXPECT_NE(first.dump().find("you have not read ODIN.md"), std::string::npos) << first.dump();
  EXPECT_NE(FirstUserMessage(llm).find("Update ODIN.md"), std::string::npos);
  StatusOr<std::string> written = ReadFileToString(ws_.Join("ODIN.md"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, "# old\n\n# and more\n");
}

// Outside /init, InitTool is neither offered nor run, and ODIN.md stays a
// protected path for WriteFile, EditTool and commands.
TEST_F(OdinInitTest, OutsideInitNothingMayWriteOdinMd) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("ODIN.md"), "# rules\n").ok());
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("InitTool", {{"content", "# mine now\n"}})}), Turn({Call("Read", {{"file_path", "ODIN.md"}})}),
              Turn({Call("WriteFile", {{"file_path", "ODIN.md"}, {"content", "# mine now\n"}})}),
              Turn({Call("ExecuteCommand", {{"command", "echo '# mine now' > ODIN.md"}})}), Text("Done.")}}})
          .dump());
  Ran r = Odin(llm, {"-p", "rewrite the rules", "--approval", "allow"});
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 5u) << r.err;
  std::vector<std::string> tools = ToolNames(requests[0]);
  EXPECT_EQ(std::find(tools.begin(), tools.end(), "InitTool"), tools.end()) << "InitTool is offered only by /init";
  json init = ToolResultsOf(requests[1]).back();
  EXPECT_EQ(init["status"], "rejected") << init.dump();
  EXPECT_NE(init.dump().find("offered only during /init"), std::string::npos) << init.dump();
  json write = ToolResultsOf(requests[3]).back();
  EXPECT_EQ(write["status"], "rejected") << write.dump();
  EXPECT_NE(write.dump().find("protected path"), std::string::npos) << write.dump();
  StatusOr<std::string> now = ReadFileToString(ws_.Join("ODIN.md"));
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, "# rules\n") << "the command's change was put back, too";
}

}  // namespace
}  // namespace odin::testing
