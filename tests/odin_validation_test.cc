// The verification core loop end to end: the real odin, sandbox, workers, lsp
// host and language servers (clangd, pyright; the scripted fake_lsp_server
// for the behaviours real servers cannot be made to show), against
// tests/fake_llm_server.
//
// These start language servers, which take seconds on a loaded machine: the
// ctest entry holds the language_servers lock and a generous timeout.

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

bool Installed(const std::string& name) {
  const char* path = getenv("PATH");
  if (!SearchPath(name, path ? path : "").empty()) return true;
  return access((BinDir() + "/../lsp/node_modules/.bin/" + name).c_str(), X_OK) == 0;
}

class OdinValidationTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok()); }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }

  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  json Tool(const std::string& name, const json& args, const std::string& session = "") {
    std::vector<std::string> argv = {"tool", name, args.dump(), "--json"};
    if (!session.empty()) argv.insert(argv.end(), {"--session", session});
    Ran r = RunOdin(ws_.path(), argv,
                    {{"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << r.out << "\nstderr: " << r.err;
    return j;
  }
  // The requests the model server received, parsed.
  static std::vector<json> Requests(const FakeLlm& llm) { return ScriptRequestsOf(llm); }
  // The newest message of a request: a tool result (parsed) or the runtime's words.
  static json Last(const json& request) {
    const json& m = LastMessageOf(request);
    if (m["role"] == "tool") return json::parse(m["content"].get<std::string>());
    return m;
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }
  // One column of the ledger: the first row of sql with one text parameter.
  std::string Query(const std::string& sql, const std::string& param) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open_v2(ws_.Join(".odin/odin.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, param.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr) {
          out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        }
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
  }
  // The user's odinconfig.json: language servers and longer timeouts are not
  // a workspace's to set until it is trusted.
  void Config(const json& config) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump(2)).ok());
  }
  // Real language servers on a loaded 2-core machine can take far longer
  // than the defaults (45 s to start, 5 s per file) allow.
  void RealServerConfig(json config = json::object()) {
    config["validation"]["start_timeout_ms"] = 240000;
    config["validation"]["file_timeout_ms"] = 120000;
    Config(config);
  }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
  Ran last_;
};

// An edit that breaks the build is validated as errors by clangd, completion
// is refused, the fix validates clean, completion is accepted, and the report
// names the executions behind it all.
TEST_F(OdinValidationTest, CompileErrorBlocksCompletionUntilAFixValidatesClean) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("twice.cc", "int twice(int x) {\n  return x * 2;\n}\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"twice.cc"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"twice.cc","old_string":"x * 2","new_string":"y * 2"}}]},
    {"text":"Done: twice now uses y."},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"twice.cc","old_string":"y * 2","new_string":"x + x"}}]},
    {"text":"Fixed: twice adds x to itself."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(Get("twice.cc"), "int twice(int x) {\n  return x + x;\n}\n");

  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 5u);
  // The broken edit's record carries clangd's verdict.
  json broken = Last(requests[2]);
  EXPECT_EQ(broken["tool"], "EditTool");
  EXPECT_EQ(broken["status"], "ok");
  ASSERT_EQ(broken["validation"]["status"], "errors") << broken.dump();
  EXPECT_EQ(broken["validation"]["validator"], "clangd");
  EXPECT_EQ(broken["validation"]["new_errors"], 1);
  EXPECT_NE(broken["validation"]["errors"].get<std::string>().find("twice.cc:2:10"), std::string::npos);
  EXPECT_NE(broken["validation"]["errors"].get<std::string>().find("'y'"), std::string::npos);
  std::string edit1 = broken["execution_id"], check1 = broken["validation"]["execution_id"];
  // Completion is refused, naming the write, its lsp_check and the error.
  json refusal = Last(requests[3]);
  ASSERT_EQ(refusal["role"], "user");
  std::string text = refusal["content"];
  EXPECT_NE(text.find("Completion refused"), std::string::npos) << text;
  EXPECT_NE(text.find(edit1), std::string::npos) << text;
  EXPECT_NE(text.find(check1), std::string::npos) << text;
  EXPECT_NE(text.find("'y'"), std::string::npos) << text;
  // The fix validates clean.
  json fixed = Last(requests[4]);
  ASSERT_EQ(fixed["validation"]["status"], "clean") << fixed.dump();
  std::string edit2 = fixed["execution_id"], check2 = fixed["validation"]["execution_id"];

  // The report, from the ledger.
  EXPECT_EQ(r["result"], "Fixed: twice adds x to itself.");
  const json& report = r["report"];
  EXPECT_EQ(report["status"], "done");
  ASSERT_EQ(report["files"].size(), 1u);
  EXPECT_EQ(report["files"][0]["path"], "twice.cc");
  EXPECT_EQ(report["files"][0]["execution_ids"], json::array({edit1, edit2}));
  EXPECT_EQ(report["files"][0]["validation"]["status"], "clean");
  EXPECT_EQ(report["files"][0]["validation"]["execution_id"], check2);
  EXPECT_EQ(report["validations"], 2);
  EXPECT_EQ(report["tool_calls"], 3);
  EXPECT_EQ(report["checks"][0]["status"], "not_applicable");

  // The ledger links each lsp_check to its write and keeps the diagnostics.
  EXPECT_EQ(Query("SELECT parent_id FROM execution_starts WHERE execution_id = ?", check1), edit1);
  EXPECT_EQ(Query("SELECT parent_id FROM execution_starts WHERE execution_id = ?", check2), edit2);
  EXPECT_EQ(Query("SELECT status FROM validations WHERE execution_id = ?", check1), "errors");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM diagnostics WHERE execution_id = ? AND is_new = 1 AND severity = 1", check1),
            "1");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM diagnostics WHERE execution_id = ?", check2), "0");
  EXPECT_EQ(Query("SELECT kind FROM gate_events WHERE execution_id = ?", check1), "completion_refused");
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}).exit_code, 0);
}

// The same through the shell: a command that writes broken C is validated
// by clangd like an edit, completion is refused, and a command that fixes
// it validates clean (every change is a mutation).
TEST_F(OdinValidationTest, ACommandThatBreaksTheBuildBlocksUntilACommandFixesIt) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("calc.c", "int twice(int x) {\n  return x * 2;\n}\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"printf 'int twice(int x) {\\n  return y * 2;\\n}\\n' > calc.c"}}]},
    {"text":"Done."},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sed -i 's/y \\* 2/x + x/' calc.c"}}]},
    {"text":"Fixed."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(Get("calc.c"), "int twice(int x) {\n  return x + x;\n}\n");
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  json broken = Last(requests[1]);
  EXPECT_EQ(broken["tool"], "ExecuteCommand");
  EXPECT_EQ(broken["changes"], json::array({{{"path", "calc.c"}, {"change", "modified"}}})) << broken.dump();
  ASSERT_EQ(broken["validations"].size(), 1u) << broken.dump();
  EXPECT_EQ(broken["validations"][0]["status"], "errors");
  EXPECT_EQ(broken["validations"][0]["blocking"], true);
  EXPECT_NE(broken["validations"][0]["errors"].get<std::string>().find("'y'"), std::string::npos);
  std::string command1 = broken["execution_id"], check1 = broken["validations"][0]["execution_id"];
  json refusal = Last(requests[2]);
  ASSERT_EQ(refusal["role"], "user");
  std::string text = refusal["content"];
  EXPECT_NE(text.find("Completion refused"), std::string::npos) << text;
  EXPECT_NE(text.find(command1), std::string::npos) << text;
  json fixed = Last(requests[3]);
  ASSERT_EQ(fixed["validations"][0]["status"], "clean") << fixed.dump();
  std::string command2 = fixed["execution_id"];

  const json& report = r["report"];
  ASSERT_EQ(report["files"].size(), 1u);
  EXPECT_EQ(report["files"][0]["path"], "calc.c");
  EXPECT_EQ(report["files"][0]["by_command"], true);
  EXPECT_EQ(report["files"][0]["execution_ids"], json::array({command1, command2}));
  EXPECT_EQ(report["files"][0]["validation"]["status"], "clean");
  EXPECT_EQ(Query("SELECT parent_id FROM execution_starts WHERE execution_id = ?", check1), command1);
  EXPECT_EQ(Query("SELECT mutation_id FROM validations WHERE execution_id = ?", check1), command1);
  EXPECT_EQ(r["changed_files"], json::array({"calc.c"}));
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}).exit_code, 0);
}

// odin killed while a command that broke the build ran: the resume lands
// what it wrote (docs/sessions.md), clangd validates it like any command's
// change before the model is asked again, and the resumed message's
// completion is refused until a fix validates clean.
TEST_F(OdinValidationTest, WhatAnInterruptedCommandBrokeBlocksTheResumedSession) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  const std::string good = "int twice(int x) {\n  return x * 2;\n}\n";
  Put("calc.c", good);
  std::string sleeper = "sleep 64." + std::to_string(getpid());
  json broken = {{"command", "printf 'int twice(int x) {\\n  return y * 2;\\n}\\n' > calc.c && " + sleeper}};
  json fix = {{"command", "sed -i 's/y \\* 2/x + x/' calc.c"}};
  FakeLlm llm(json({{"responses",
                     {{{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", broken}}}}},
                      {{"text", "Done."}},
                      {{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", fix}}}}},
                      {{"text", "Fixed."}}}}})
                  .dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "do the task", "--output-format", "json"}, &out, Env(llm));
  auto command = [&] { return Query("SELECT execution_id FROM execution_starts WHERE tool = ?", "ExecuteCommand"); };
  bool overlay = WaitUntil(
      [&] {
        // Written, not only made (the kill must not fall between the two).
        StatusOr<std::string> written = ReadFileToString(ws_.Join(".odin/overlay/" + command() + "/u/calc.c"));
        return !command().empty() && written.ok() && written->find("y * 2") != std::string::npos;
      },
      std::chrono::seconds(30));
  kill(odin, SIGKILL);
  Wait(odin);
  close(out);
  if (!overlay) GTEST_SKIP() << "commands ran without the workspace overlay here";
  std::string id = command();
  EXPECT_EQ(Get("calc.c"), good);

  json r = Prompt(llm, {"-c"});
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(Get("calc.c"), "int twice(int x) {\n  return x + x;\n}\n");
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_NE(requests[1]["body"].dump().find("What " + id + " wrote before it ended was applied now"),
            std::string::npos);
  json refusal = Last(requests[2]);
  ASSERT_EQ(refusal["role"], "user") << refusal.dump();
  std::string text = refusal["content"];
  EXPECT_NE(text.find("Completion refused"), std::string::npos) << text;
  EXPECT_NE(text.find("calc.c"), std::string::npos) << text;
  json fixed = Last(requests[3]);
  ASSERT_EQ(fixed["validations"][0]["status"], "clean") << fixed.dump();
  EXPECT_EQ(Query("SELECT status FROM validations WHERE mutation_id = ?", id), "errors");
  EXPECT_EQ(Query("SELECT source FROM mutations WHERE execution_id = ?", id), "command");
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}).exit_code, 0);
}

// A file that changes again while its validation runs: two commands in
// one turn, the second (which fixes what the first broke) runs as soon as
// the first ends, while clangd still checks the first's version. Each
// version gets its own verdict; the file as it is now decides.
TEST_F(OdinValidationTest, AFileThatChangesWhileItIsBeingValidated) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("calc.c", "int twice(int x) {\n  return x * 2;\n}\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[
      {"id":"break","name":"ExecuteCommand","arguments":{"command":"printf 'int twice(int x) {\\n  return y * 2;\\n}\\n' > calc.c"}},
      {"id":"fix","name":"ExecuteCommand","arguments":{"command":"sed -i 's/y \\* 2/x + x/' calc.c"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(Get("calc.c"), "int twice(int x) {\n  return x + x;\n}\n");
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0]["validations"].size(), 1u) << results[0].dump();
  EXPECT_EQ(results[0]["validations"][0]["status"], "errors") << results[0].dump();
  ASSERT_EQ(results[1]["validations"].size(), 1u) << results[1].dump();
  EXPECT_EQ(results[1]["validations"][0]["status"], "clean") << results[1].dump();
  EXPECT_EQ(r["report"]["files"][0]["validation"]["status"], "clean") << r["report"].dump();
  // The premise: the fix started before the check of the broken version ended.
  std::string check1 = results[0]["validations"][0]["execution_id"];
  std::string fix_started = Query("SELECT started_at_ms FROM execution_starts WHERE execution_id = ?",
                                  results[1]["execution_id"].get<std::string>());
  std::string check1_ended = Query("SELECT finished_at_ms FROM execution_ends WHERE execution_id = ?", check1);
  EXPECT_LE(std::stoll(fix_started), std::stoll(check1_ended));
}

// Validating a file whose text the server has already (the model's
// lsp_check after an edit, twice) gives a verdict, not a timeout: the
// document is reopened so the server diagnoses it again.
TEST_F(OdinValidationTest, RevalidatingAnUnchangedFileGivesAVerdict) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("same.cc", "int same() { return 1; }\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"same.cc"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"same.cc","old_string":"return 1","new_string":"return 2"}}]},
    {"tool_calls":[{"name":"lsp_check","arguments":{"file_path":"same.cc"}}]},
    {"tool_calls":[{"name":"lsp_check","arguments":{"file_path":"same.cc"}}]},
    {"text":"Checked."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 5u);
  for (int i : {2, 3, 4}) EXPECT_EQ(Last(requests[i])["validation"]["status"], "clean") << Last(requests[i]).dump();
}

// Errors the file had before the session are the baseline: an edit elsewhere
// in it is clean, with the old error on a line the edit moved.
TEST_F(OdinValidationTest, PreexistingErrorsAreTheBaselineEvenWhenTheirLinesMove) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("old.cc", "int a() { return 1; }\nint b() { return missing; }\n");
  json read = Tool("Read", {{"file_path", "old.cc"}});
  std::string session = read["session_id"];
  json edit = Tool("EditTool",
                   {{"file_path", "old.cc"},
                    {"old_string", "int a() { return 1; }"},
                    {"new_string", "// a comment\nint a() { return 1; }"}},
                   session);
  EXPECT_EQ(edit["status"], "ok");
  EXPECT_EQ(edit["validation"]["status"], "clean") << edit.dump();
  // The old error is still there, recorded, and not new.
  std::string check = edit["validation"]["execution_id"];
  EXPECT_NE(Query("SELECT COUNT(*) FROM diagnostics WHERE execution_id = ? AND is_new = 0 AND line = 3", check), "0");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM diagnostics WHERE execution_id = ? AND is_new = 1", check), "0");
}

// A span edit (EditSymbol) that breaks the build is caught by the
// validation gate like any write: its verdict is errors, and the session is
// blocked on the file.
TEST_F(OdinValidationTest, ASpanEditThatBreaksTheBuildIsCaught) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("calc.cc", "int add(int a, int b) { return a + b; }\nint twice(int x) { return add(x, x); }\n");
  json found = Tool("symbols", {{"query", "add"}});
  ASSERT_EQ(found["status"], "ok") << found.dump();
  json add = json::parse(found["output"].get<std::string>())["matches"][0];
  json edit = Tool("EditSymbol", {{"symbol_id", add["id"]},
                                  {"span_sha256", add["span_sha256"]},
                                  {"operation", "replace"},
                                  {"content", "int add(int a) { return a + undefined_name; }"}});
  EXPECT_EQ(edit["status"], "ok") << edit.dump();
  EXPECT_EQ(edit["validation"]["status"], "errors") << edit.dump();
  EXPECT_GE(edit["validation"]["new_errors"].get<int>(), 1) << edit.dump();
}

TEST_F(OdinValidationTest, PyrightErrorThenFix) {
  if (!Installed("pyright-langserver"))
    GTEST_SKIP() << "pyright is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"calc.py","content":"def half(n: int) -> float:\n    return m / 2\n"}}]},
    {"text":"Created calc.py."},
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"calc.py","content":"def half(n: int) -> float:\n    return n / 2\n"}}]},
    {"text":"Created calc.py, fixed."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  json broken = Last(requests[1]);
  ASSERT_EQ(broken["validation"]["status"], "errors") << broken.dump();
  EXPECT_EQ(broken["validation"]["validator"], "pyright");
  EXPECT_NE(broken["validation"]["errors"].get<std::string>().find("calc.py:2:12"), std::string::npos);
  EXPECT_NE(Last(requests[2])["content"].get<std::string>().find("Completion refused"), std::string::npos);
  json fixed = Last(requests[3]);
  EXPECT_EQ(fixed["validation"]["status"], "clean") << fixed.dump();
  EXPECT_EQ(r["report"]["files"][0]["validation"]["execution_id"], fixed["validation"]["execution_id"]);
  EXPECT_TRUE(r["report"]["checks"].empty());  // fast: no checks
}

// Issue 47, item 1: typescript-language-server publishes nothing when a
// file's diagnostics were empty and stay empty, so every correct edit after
// the first was blocked as "published no diagnostics". Odin asks the server
// for the file's diagnostics instead of waiting for a publish: correct edits
// validate clean, one after another, and a type error that only another
// file's declaration shows is caught.
TEST_F(OdinValidationTest, TypeScriptCorrectEditsInARowValidateCleanAndACrossFileErrorIsCaught) {
  if (!Installed("typescript-language-server"))
    GTEST_SKIP() << "typescript-language-server is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("tsconfig.json", R"({"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"},
  "include": ["src"]})");
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  Put("src/slug.ts", "export function slug(s: string): string {\n  return s.toLowerCase();\n}\n");
  Put("src/slug.test.ts",
      "import { slug } from \"./slug\";\nconst out: string = slug(\"Hello World\");\n"
      "if (out !== \"hello-world\") throw new Error(out);\n");
  FakeLlm llm(R"js({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"src/slug.ts"}},{"name":"Read","arguments":{"file_path":"src/slug.test.ts"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/slug.ts","old_string":"s.toLowerCase()","new_string":"s.trim().toLowerCase()"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/slug.ts","old_string":"s.trim().toLowerCase()","new_string":"s.trim().toLowerCase().replace(/\\s+/g, \"-\")"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/slug.test.ts","old_string":"slug(\"Hello World\")","new_string":"slug(42)"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/slug.test.ts","old_string":"slug(42)","new_string":"slug(\"Hello World\")"}}]},
    {"text":"slug now trims and joins words with dashes."}]})js");
  json r = Prompt(llm, {"--profile", "fast"});
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_EQ(last_.exit_code, 0);
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 6u);
  for (size_t i : {2u, 3u, 5u}) {
    json v = Last(requests[i])["validation"];
    EXPECT_EQ(v["status"], "clean") << "edit " << i << ": " << Last(requests[i]).dump();
    EXPECT_EQ(v["validator"], "typescript") << v.dump();
  }
  json broken = Last(requests[4])["validation"];
  ASSERT_EQ(broken["status"], "errors") << broken.dump();
  EXPECT_NE(broken["errors"].get<std::string>().find("slug.test.ts:2:26"), std::string::npos) << broken.dump();
  EXPECT_NE(broken["errors"].get<std::string>().find("not assignable to parameter of type 'string'"), std::string::npos)
      << broken.dump();
  EXPECT_EQ(Get("src/slug.ts"),
            "export function slug(s: string): string {\n  return s.trim().toLowerCase().replace(/\\s+/g, \"-\");\n}\n");
}

// Issue 47: a change to what a file exports that breaks the files importing
// it is caught by the file's validation, naming the importer; an error an
// importer had before the session does not block a correct change.
TEST_F(OdinValidationTest, TypeScriptErrorsAChangeCausesInImportingFilesAreCaught) {
  if (!Installed("typescript-language-server"))
    GTEST_SKIP() << "typescript-language-server is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("tsconfig.json", R"({"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"},
  "include": ["src"]})");
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  Put("src/shape.ts", "export function area(w: number, h: number): number {\n  return w * h;\n}\n");
  Put("src/use.ts", "import { area } from \"./shape\";\nexport const a: number = area(2, 3);\n");
  Put("src/old.ts", "import { area } from \"./shape\";\nexport const broken: string = area(1, 1);\n");
  FakeLlm llm(R"js({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"src/shape.ts"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/shape.ts","old_string":"return w * h;","new_string":"const product = w * h;\n  return product;"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/shape.ts","old_string":"h: number)","new_string":"h: number, d: number)"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/shape.ts","old_string":"h: number, d: number)","new_string":"h: number)"}}]},
    {"text":"area keeps its signature."}]})js");
  json r = Prompt(llm, {"--profile", "fast"});
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 5u);
  for (size_t i : {2u, 4u}) {
    json v = Last(requests[i])["validation"];
    EXPECT_EQ(v["status"], "clean") << "edit " << i << ": " << Last(requests[i]).dump();
  }
  json broken = Last(requests[3])["validation"];
  ASSERT_EQ(broken["status"], "errors") << broken.dump();
  std::string errors = broken["errors"];
  EXPECT_NE(errors.find("src/use.ts:2:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("Expected 3 arguments, but got 2"), std::string::npos) << errors;
  // old.ts's own error, there before the session, is not counted as new.
  EXPECT_EQ(errors.find("not assignable to type 'string'"), std::string::npos) << errors;
}

// Issue 47: where no rust-analyzer runs (Debian 12 ships none), cargo check
// validates each .rs change on a copy of its crate: a correct edit is clean,
// a changed signature is caught in the file that calls it, and the
// workspace's own target/ is never written.
TEST_F(OdinValidationTest, RustChangesAreCheckedByCargoOnACopyOfTheCrate) {
  if (!Installed("cargo")) GTEST_SKIP() << "cargo is not installed (scripts/install-deps.sh installs it)";
  // No language server: the check command is what is under test.
  RealServerConfig({{"validation", {{"servers", {{"rust-analyzer", {{"command", json::array()}}}}}}}});
  Put("Cargo.toml", "[package]\nname = \"ver\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  Put("src/version.rs",
      "pub struct Version(pub usize, pub usize);\n\nimpl Version {\n"
      "    pub fn new(major: usize, minor: usize) -> Self {\n        Version(major, minor)\n    }\n}\n");
  Put("src/lib.rs",
      "mod version;\npub use version::Version;\n\npub fn at_least(v: &Version, major: usize) -> bool {\n"
      "    v.0 >= Version::new(major, 0).0\n}\n");
  FakeLlm llm(R"js({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"src/lib.rs"}},{"name":"Read","arguments":{"file_path":"src/version.rs"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/lib.rs","old_string":"    v.0 >= Version::new(major, 0).0","new_string":"    let wanted = Version::new(major, 0);\n    v.0 >= wanted.0"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/version.rs","old_string":"minor: usize)","new_string":"minor: usize, _patch: usize)"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"src/version.rs","old_string":"minor: usize, _patch: usize)","new_string":"minor: usize)"}}]},
    {"text":"at_least names what it wants."}]})js");
  json r = Prompt(llm, {"--profile", "fast"});
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 5u);
  for (size_t i : {2u, 4u}) {
    json v = Last(requests[i])["validation"];
    EXPECT_EQ(v["status"], "clean") << "edit " << i << ": " << Last(requests[i]).dump();
    EXPECT_NE(v["validator"].get<std::string>().find("cargo check"), std::string::npos) << v.dump();
  }
  json broken = Last(requests[3])["validation"];
  ASSERT_EQ(broken["status"], "errors") << broken.dump();
  std::string errors = broken["errors"];
  EXPECT_NE(errors.find("src/lib.rs:5:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("[E0061]"), std::string::npos) << errors;
  EXPECT_NE(errors.find("takes 3 arguments but 2 arguments were supplied"), std::string::npos) << errors;
  EXPECT_FALSE(PathExists(ws_.Join("target"))) << "cargo check wrote into the workspace";
  EXPECT_FALSE(PathExists(ws_.Join("Cargo.lock"))) << "cargo check wrote into the workspace";

  // A file nothing cargo check builds reads (an integration test): not
  // checked, so not clean, even with an error in it.
  json test_file = Tool("WriteFile", {{"file_path", "tests/t.rs"}, {"content", "fn f() -> u8 { \"no\" }\n"}});
  EXPECT_EQ(test_file["validation"]["status"], "no_validator") << test_file.dump();
  EXPECT_NE(test_file["validation"]["reason"].get<std::string>().find("cargo check built nothing that includes"),
            std::string::npos)
      << test_file.dump();

  // A crate that depends on a broken one is never built: not checked.
  Put("Cargo.toml",
      "[package]\nname = \"ver\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n"
      "[dependencies]\nbroken = { path = \"broken\" }\n");
  ASSERT_TRUE(MakeDirs(ws_.Join("broken/src")).ok());
  Put("broken/Cargo.toml", "[package]\nname = \"broken\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
  Put("broken/src/lib.rs", "pub fn g() -> u8 { \"no\" }\n");
  std::string session = Tool("Read", {{"file_path", "src/version.rs"}})["session_id"];
  json behind = Tool("EditTool",
                     {{"file_path", "src/version.rs"},
                      {"old_string", "Version(major, minor)"},
                      {"new_string", "Version(minor, major)"}},
                     session);
  EXPECT_EQ(behind["validation"]["status"], "no_validator") << behind.dump();
  EXPECT_NE(behind["validation"]["reason"].get<std::string>().find("stopped at errors in other crates before it built"),
            std::string::npos)
      << behind.dump();
  EXPECT_NE(behind["validation"]["reason"].get<std::string>().find(ws_.Join("broken/src/lib.rs") + ":1:"),
            std::string::npos)
      << behind.dump();

  // A crate cargo cannot build here (a dependency this machine does not
  // have, and no network): not checked, which is not clean.
  Put("Cargo.toml",
      "[package]\nname = \"ver\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n"
      "[dependencies]\nodin-no-such-crate = \"1\"\n");
  json unchecked = Tool("WriteFile", {{"file_path", "src/extra.rs"}, {"content", "pub fn x() {}\n"}});
  EXPECT_EQ(unchecked["validation"]["status"], "no_validator") << unchecked.dump();
  EXPECT_NE(unchecked["validation"]["reason"].get<std::string>().find("cargo check could not check"), std::string::npos)
      << unchecked.dump();
  EXPECT_NE(unchecked["validation"]["reason"].get<std::string>().find("odin-no-such-crate"), std::string::npos)
      << unchecked.dump();
}

// A project whose test fails: under the auto profile the test runs when the
// model claims completion, the failure's output goes back to the model, and
// completion is accepted once the test passes.
const char kFailingTestProject[] = "test:\n\t@sh ./check.sh\n";
const char kCheckScript[] =
    "if grep -q '^answer = 42$' answer.txt; then echo PASS; else echo \"FAIL: expected answer = 42, got $(cat "
    "answer.txt)\"; exit 1; fi\n";

TEST_F(OdinValidationTest, FailingTestUnderAutoIsInjectedAndTheFixIsAccepted) {
  Put("Makefile", kFailingTestProject);
  Put("check.sh", kCheckScript);
  Put("answer.txt", "answer = 41\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"answer.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"answer.txt","old_string":"41","new_string":"40"}}]},
    {"text":"Done."},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"answer.txt","old_string":"40","new_string":"42"}}]},
    {"text":"Done, the test passes now."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(last_.exit_code, 0);
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 5u);
  json refusal = Last(requests[3]);
  ASSERT_EQ(refusal["role"], "user");
  std::string text = refusal["content"];
  EXPECT_NE(text.find("The tests check (`make test`"), std::string::npos) << text;
  EXPECT_NE(text.find("exited with 2"), std::string::npos) << text;  // make's status for a failed recipe
  EXPECT_NE(text.find("FAIL: expected answer = 42, got answer = 40"), std::string::npos) << text;
  const json& checks = r["report"]["checks"];
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0]["name"], "lint");
  EXPECT_EQ(checks[0]["status"], "not_applicable");
  EXPECT_EQ(checks[1]["name"], "tests");
  EXPECT_EQ(checks[1]["status"], "passed");
  EXPECT_EQ(checks[1]["command"], "make test");
  // The passing run is a recorded execution of its own.
  std::string id = checks[1]["execution_id"];
  EXPECT_EQ(Query("SELECT status FROM execution_ends WHERE execution_id = ?", id), "ok");
  EXPECT_EQ(Query("SELECT tool FROM execution_starts WHERE execution_id = ?", id), "ExecuteCommand");
}

TEST_F(OdinValidationTest, TheSameFailureAgainAndAgainEndsNotConverged) {
  Put("Makefile", kFailingTestProject);
  Put("check.sh", kCheckScript);
  Put("answer.txt", "answer = 41\n");
  Config({{"checks", {{"retry_cap", 2}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"answer.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"answer.txt","old_string":"41","new_string":"40"}}]},
    {"text":"Done."},
    {"text":"Really done."},
    {"text":"Unreachable."}]})");
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "not_converged") << last_.err;
  EXPECT_EQ(last_.exit_code, 3);
  EXPECT_EQ(Requests(llm).size(), 4u);  // the cap stopped it after the second refusal
  EXPECT_EQ(r["report"]["status"], "not_converged");
  EXPECT_EQ(r["report"]["checks"][1]["status"], "failed");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM gate_events WHERE kind = ?", "not_converged"), "1");
  // Issue 47, item 6: the report shows why the check failed, not only that.
  std::string tail = r["report"]["checks"][1].value("output_tail", "");
  EXPECT_EQ(tail.rfind("FAIL: expected answer = 42, got answer = 40\n", 0), 0u) << r["report"].dump();
}

// Issue 47, item 13: a run the stall detector stops while completion is
// refused tells the user what blocked, not the words it said to the model.
TEST_F(OdinValidationTest, AStallBehindARefusalNamesWhatBlocked) {
  Put("Makefile", kFailingTestProject);
  Put("check.sh", kCheckScript);
  Put("answer.txt", "answer = 41\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"answer.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"answer.txt","old_string":"41","new_string":"40"}}]},
    {"text":"Done."},{"text":"Done."},{"text":"Done."},{"text":"Done."},{"text":"Done."},{"text":"Done."},
    {"text":"Done."},{"text":"Done."}]})");
  last_ = RunOdin(ws_.path(), {"-p", "do the task"}, Env(llm));
  EXPECT_EQ(last_.exit_code, 5) << last_.out << last_.err;
  EXPECT_NE(
      last_.err.find(
          "odin: stalled: the model kept answering the same way while completion stayed refused (repeated_message). "
          "Completion refused: a check failed. The tests check (`make test`, ex_"),
      std::string::npos)
      << last_.err;
  EXPECT_NE(last_.err.find(") exited with 2.\n"), std::string::npos) << last_.err;
  EXPECT_EQ(last_.err.find("stalled: stalled"), std::string::npos) << last_.err;
  EXPECT_EQ(last_.err.find("you gave"), std::string::npos) << last_.err;
}

// A validator that never answers: the write is timed_out, never clean, and it
// blocks completion until the retry cap ends the run.
TEST_F(OdinValidationTest, AValidationTimeoutIsReportedAndBlocks) {
  Config({{"validation",
           {{"servers",
             {{"silent",
               {{"command", {BinDir() + "/fake_lsp_server", "--mode", "silent"}},
                {"extensions", {".fake"}},
                {"file_timeout_ms", 300}}}}}}},
          {"checks", {{"retry_cap", 2}}}});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"x.fake","content":"fine\n"}}]},
    {"text":"Done."},
    {"tool_calls":[{"name":"TodoWrite","arguments":{"todos":[{"id":"1","content":"more","status":"pending"}]}},{"name":"ExecuteCommand","arguments":{"command":"true"}},{"name":"lsp_check","arguments":{"file_path":"x.fake"}}]},
    {"text":"Done now."}]})");
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "not_converged") << last_.err;
  EXPECT_EQ(last_.exit_code, 3);
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  json write = Last(requests[1]);
  ASSERT_EQ(write["validation"]["status"], "timed_out") << write.dump();
  EXPECT_NE(write["validation"]["reason"].get<std::string>().find("published no diagnostics for version 1"),
            std::string::npos);
  EXPECT_NE(Last(requests[2])["content"].get<std::string>().find("timed_out"), std::string::npos);
  // While blocked, other work is refused; a command runs (what it changes is
  // validated like an edit, so it may be the fix), and lsp_check is allowed
  // (and times out again).
  std::vector<json> results;
  for (const json& m : requests[3]["body"]["messages"]) {
    if (m["role"] == "tool") results.push_back(json::parse(m["content"].get<std::string>()));
  }
  ASSERT_GE(results.size(), 4u);
  json todo = results[results.size() - 3], command = results[results.size() - 2], check = results.back();
  EXPECT_EQ(todo["status"], "rejected");
  EXPECT_NE(todo["summary"].get<std::string>().find("blocked"), std::string::npos);
  EXPECT_EQ(command["status"], "ok");
  EXPECT_EQ(check["tool"], "lsp_check");
  EXPECT_EQ(check["validation"]["status"], "timed_out");
  EXPECT_EQ(r["report"]["files"][0]["validation"]["status"], "timed_out");
}

// The strict profile: after a failed validation the next edit needs a
// memory_query first; the rejection is a tool result and the loop goes on.
TEST_F(OdinValidationTest, StrictProfileForcesMemoryQueryAfterAFailure) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig();
  Put("f.cc", "int f() { return 1; }\n");
  // Strict's grounded edits too: each edit cites the outline of f.cc.
  FakeLlm llm(json({{"responses", json::parse(R"([
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"f.cc"}}]},
    {"tool_calls":[{"name":"outline","arguments":{"path":"f.cc"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"f.cc","old_string":"return 1","new_string":"return one","evidence":["@last_execution_id_of:outline"]}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"f.cc","old_string":"return one","new_string":"return 2","evidence":["@last_execution_id_of:outline"]}}]},
    {"tool_calls":[{"name":"memory_query","arguments":{"query":"failed_attempts","file_path":"f.cc"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"f.cc","old_string":"return one","new_string":"return 2","evidence":["@last_execution_id_of:outline"]}}]},
    {"text":"f returns 2."}])")},
                    {"by_system", PassingReviewers()}})
                  .dump());
  json r = Prompt(llm, {"--profile", "strict"});
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 7u);
  EXPECT_EQ(Last(requests[3])["status"], "ok") << Last(requests[3]).dump();  // the grounded edit
  json rejected = Last(requests[4]);
  EXPECT_EQ(rejected["status"], "rejected");
  EXPECT_NE(rejected["summary"].get<std::string>().find("memory_query"), std::string::npos);
  json memory = Last(requests[5]);
  EXPECT_EQ(memory["tool"], "memory_query");
  json answer = json::parse(memory["output"].get<std::string>());
  // Newest first: the rejected edit, then the one that left an error.
  ASSERT_EQ(answer["attempts"].size(), 2u) << answer.dump();
  EXPECT_EQ(answer["attempts"][0]["status"], "rejected");
  EXPECT_EQ(answer["attempts"][1]["status"], "ok");
  EXPECT_EQ(answer["attempts"][1]["validation"]["status"], "errors");
  EXPECT_EQ(Last(requests[6])["validation"]["status"], "clean");
  EXPECT_EQ(Get("f.cc"), "int f() { return 2; }\n");
}

// validation.revert_on_new_errors puts the file back and says so.
TEST_F(OdinValidationTest, RevertOnNewErrorsRollsTheEditBack) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  RealServerConfig({{"validation", {{"revert_on_new_errors", true}}}});
  Put("g.cc", "int g() { return 1; }\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"g.cc"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"g.cc","old_string":"return 1","new_string":"return nope"}}]},
    {"text":"Gave up."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;  // rolled back: nothing blocks
  EXPECT_EQ(Get("g.cc"), "int g() { return 1; }\n");
  json edit = Last(Requests(llm)[2]);
  EXPECT_EQ(edit["validation"]["status"], "errors");
  std::string revert = edit["validation"]["rolled_back_by"];
  EXPECT_EQ(Query("SELECT status FROM execution_ends WHERE execution_id = ?", revert), "ok");
  EXPECT_EQ(Query("SELECT parent_id FROM execution_starts WHERE execution_id = ?", revert),
            edit["validation"]["execution_id"].get<std::string>());
}

// ---- the lsp host's rules, with the scripted server -------------------------

json FakeServer(const std::string& mode, json extra = json::object()) {
  json server = {{"command", {BinDir() + "/fake_lsp_server", "--mode", mode}}, {"extensions", {".fake"}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) server[it.key()] = it.value();
  return {{"validation", {{"servers", {{"fake", server}}}}}};
}

TEST_F(OdinValidationTest, OnlyDiagnosticsForTheVersionSentCount) {
  // The server publishes for the previous version first (an error that is
  // no longer true), then for the version sent.
  Config(FakeServer("stale_first"));
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"a.fake","content":"line ERROR: first problem\n"}}]},
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"a.fake","content":"all good\n"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 3u);
  json first = Last(requests[1]);
  ASSERT_EQ(first["validation"]["status"], "errors") << first.dump();
  EXPECT_NE(first["validation"]["errors"].get<std::string>().find("first problem"), std::string::npos);
  EXPECT_EQ(first["validation"]["errors"].get<std::string>().find("stale"), std::string::npos);
  // Version 2: the stale publish for version 1 (with its error) is ignored.
  EXPECT_EQ(Last(requests[2])["validation"]["status"], "clean") << Last(requests[2]).dump();
}

TEST_F(OdinValidationTest, UnversionedServersGetASettle) {
  Config(FakeServer("unversioned"));
  // The server publishes an empty set first, then the real one: the settle
  // waits for the last.
  json r = Tool("WriteFile", {{"file_path", "a.fake"}, {"content", "ERROR: late news\n"}});
  EXPECT_EQ(r["validation"]["status"], "errors") << r.dump();
  EXPECT_NE(r["validation"]["summary"].get<std::string>().find("late news"), std::string::npos);
}

// A slow server's publish without a version that comes just in time keeps
// its settle past the file's deadline: an answer, not a timeout (the
// corpus's Go project, under the whole suite's load).
TEST_F(OdinValidationTest, AnUnversionedPublishInTimeIsTakenAfterItsSettleNotTimedOut) {
  Config(FakeServer("unversioned", {{"file_timeout_ms", 1000}}));
  // The fake server publishes 700 ms after each change: in time, with the
  // settle ending past the deadline.
  json server = FakeServer("unversioned", {{"file_timeout_ms", 1000}});
  server["validation"]["servers"]["fake"]["command"].push_back("--delay-ms");
  server["validation"]["servers"]["fake"]["command"].push_back("700");
  Config(server);
  json r = Tool("WriteFile", {{"file_path", "a.fake"}, {"content", "ERROR: slow news\n"}});
  EXPECT_EQ(r["validation"]["status"], "errors") << r.dump();
  EXPECT_NE(r["validation"]["summary"].get<std::string>().find("slow news"), std::string::npos) << r.dump();
}

// Issue 47 (the corpus's Go case): gopls publishes what it finds on disk
// (the file as the write left it, with the new error) without a version
// right after a didOpen, and the version sent later. Taken as the baseline,
// the new error would not count as new: the first publish without a
// version waits long enough for the versioned one.
TEST_F(OdinValidationTest, AnUnversionedPublishOfTheDiskIsNotTakenAsTheBaseline) {
  Config(FakeServer("disk_first"));
  Put("a.fake", "all good\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.fake"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.fake","old_string":"all good","new_string":"ERROR: new problem"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.fake","old_string":"ERROR: new problem","new_string":"all good"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 4u);
  json broken = Last(requests[2])["validation"];
  ASSERT_EQ(broken["status"], "errors") << broken.dump();
  EXPECT_NE(broken["errors"].get<std::string>().find("new problem"), std::string::npos) << broken.dump();
  EXPECT_EQ(Last(requests[3])["validation"]["status"], "clean") << Last(requests[3]).dump();
}

TEST_F(OdinValidationTest, AServerThatCannotStartFallsBackToTheCheckCommand) {
  json config = FakeServer("no_init", {{"start_timeout_ms", 300}});
  config["validation"]["check_commands"] = {{".fake", {"/bin/sh", "-c", "grep -n ERROR {file} && exit 1; exit 0"}}};
  Config(config);
  // No answer to initialize in time: timed_out, never clean.
  json r = Tool("WriteFile", {{"file_path", "a.fake"}, {"content", "ERROR here\n"}});
  EXPECT_EQ(r["validation"]["status"], "timed_out") << r.dump();
  EXPECT_NE(r["validation"]["reason"].get<std::string>().find("did not start within 300 ms"), std::string::npos);
  // A server that exits at once is given up, and the check command validates.
  json crash = FakeServer("crash");
  crash["validation"]["servers"]["fake"]["command"] = {"/bin/sh", "-c", "exit 3"};
  crash["validation"]["check_commands"] = config["validation"]["check_commands"];
  Config(crash);
  json checked = Tool("WriteFile", {{"file_path", "b.fake"}, {"content", "ok\nERROR there\n"}});
  ASSERT_EQ(checked["validation"]["status"], "errors") << checked.dump();
  EXPECT_EQ(checked["validation"]["validator"], "/bin/sh -c grep -n ERROR {file} && exit 1; exit 0");
  // The verdict says why the check command stood in.
  EXPECT_NE(checked["validation"]["reason"].get<std::string>().find("fake exited while starting"), std::string::npos)
      << checked.dump();
}

TEST_F(OdinValidationTest, AServerThatCrashesMidCheckIsTimedOutNotClean) {
  json config = FakeServer("crash");
  config["checks"] = {{"retry_cap", 1}};
  Config(config);
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"a.fake","content":"fine\n"}}]},
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"a.fake","content":"fine too\n"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  std::vector<json> requests = Requests(llm);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(Last(requests[1])["validation"]["status"], "clean");
  // didChange makes it exit: unverified, so it blocks.
  json second = Last(requests[2]);
  ASSERT_EQ(second["validation"]["status"], "timed_out") << second.dump();
  EXPECT_NE(second["validation"]["reason"].get<std::string>().find("exited while diagnosing"), std::string::npos);
  EXPECT_EQ(r["status"], "not_converged");
  EXPECT_EQ(last_.exit_code, 3);
}

TEST_F(OdinValidationTest, PythonCheckCommandWhenNoServerServesTheFile) {
  RealServerConfig({{"validation", {{"servers", {{"pyright", {{"command", json::array()}}}}}}}});
  json r = Tool("WriteFile", {{"file_path", "s.py"}, {"content", "def f(:\n    pass\n"}});
  ASSERT_EQ(r["validation"]["status"], "errors") << r.dump();
  EXPECT_NE(r["validation"]["validator"].get<std::string>().find("py_compile"), std::string::npos);
  EXPECT_NE(r["validation"]["summary"].get<std::string>().find("s.py:1:1 [SyntaxError]"), std::string::npos)
      << r["validation"]["summary"];
  EXPECT_EQ(Tool("WriteFile", {{"file_path", "t.py"}, {"content", "x = 1\n"}})["validation"]["status"], "clean");
}

// A check command's output past its cap: what was cut may hold the new
// error, so the change is never clean on the part that was read.
TEST_F(OdinValidationTest, ACheckCommandsOutputPastItsCapIsNeverClean) {
  Config({{"validation",
           {{"check_commands", {{".txt", {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; exit 0"}}}}}}});
  json r = Tool("WriteFile", {{"file_path", "a.txt"}, {"content", "anything\n"}});
  ASSERT_EQ(r["validation"]["status"], "errors") << r.dump();
  EXPECT_NE(r["validation"]["summary"].get<std::string>().find(
                "printed more than 256 KiB; the diagnostics past that were cut"),
            std::string::npos)
      << r.dump();
}

TEST_F(OdinValidationTest, FilesNoValidatorServesAreNoValidatorAndDoNotBlock) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"notes.md","content":"# notes\n"}}]},
    {"text":"Wrote the notes."}]})");
  json r = Prompt(llm);
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(r["report"]["files"][0]["validation"]["status"], "no_validator");
}

}  // namespace
}  // namespace odin::testing
