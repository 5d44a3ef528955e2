#include "ledger/report.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "ledger/ledger.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr char kSession[] = "ses_1";
constexpr char kMessage[] = "msg_1";

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("odin-report-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    StatusOr<std::string> real = RealPath(*dir);
    ASSERT_TRUE(real.ok());
    ws_ = *real;
    auto ledger = Ledger::Open(JoinPath(ws_, "odin.db"), Redactor());
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_ = std::move(*ledger);
    ASSERT_TRUE(ledger_->AddSession({kSession, "agent", ws_, 1000}).ok());
  }
  void TearDown() override {
    ledger_.reset();
    RemoveTree(ws_);
  }

  void Start(const std::string& id, const std::string& tool, const std::string& args_json,
             const std::string& parent = "", const std::string& session = kSession) {
    ExecutionStart s{id, session, "main", tool, args_json, "edit", "w-1", 2000, parent};
    ASSERT_TRUE(ledger_->AddExecutionStart(s).ok()) << id;
  }

  ExecutionEnd End(const std::string& id, const std::string& status) {
    ExecutionEnd e;
    e.execution_id = id;
    e.status = status;
    e.exit_reason = "normal";
    e.finished_at_ms = 2001;
    return e;
  }

  // A write of file (relative to the workspace) that changed added/removed lines.
  void AddWrite(const std::string& id, const std::string& tool, const std::string& file, int added, int removed,
                const std::string& status = "ok", const std::string& parent = "",
                const std::string& session = kSession) {
    json args = tool == "WriteFile" ? json{{"file_path", file}, {"content", "x\n"}}
                                    : json{{"file_path", file}, {"old_string", "a"}, {"new_string", "b"}};
    Start(id, tool, args.dump(), parent, session);
    ExecutionEnd e = End(id, status);
    if (status == "ok") {
      e.result_json = json{{"file", file}, {"lines_added", added}, {"lines_removed", removed}}.dump();
    }
    ASSERT_TRUE(ledger_->AddExecutionEnd(e, {}).ok()) << id;
  }

  // An lsp_check of file serving write.
  void AddCheck(const std::string& id, const std::string& write, const std::string& file, const std::string& status,
                int64_t new_errors = 0, const std::string& summary = "", const std::string& reason = "") {
    Start(id, "lsp_check", json{{"file_path", file}}.dump(), write);
    ValidationRecord v;
    v.execution_id = id;
    v.session_id = kSession;
    v.agent_id = "main";
    v.mutation_id = write;
    v.path = JoinPath(ws_, file);
    v.status = status;
    v.validator = status == "no_validator" ? "" : "clangd";
    v.new_errors = new_errors;
    v.summary = summary;
    v.reason = reason;
    std::vector<DiagnosticRecord> diagnostics;
    if (status == "errors") diagnostics.push_back({id, v.path, 1, 1, 1, "c", "bad", "clang", true});
    ASSERT_TRUE(ledger_->AddExecutionEnd(End(id, "ok"), {}, &v, diagnostics).ok()) << id;
  }

  void AddCheckEvent(const std::string& id, const std::string& message, const std::string& detail_json,
                     const std::string& kind = "check") {
    GateEvent g{"gate_" + std::to_string(++events_), kSession, "main", message, kind, id, detail_json, 3000};
    ASSERT_TRUE(ledger_->AddGateEvent(g).ok());
  }

  void AddLlmCall(const std::string& session, int64_t started_at_ms, int64_t in, int64_t out, int64_t cost) {
    LlmCallRecord c;
    c.id = "llm_" + std::to_string(++llm_calls_);
    c.session_id = session;
    c.agent_id = "main";
    c.role = "planner";
    c.provider = "demo";
    c.model = "m";
    c.started_at_ms = started_at_ms;
    c.input_tokens = in;
    c.output_tokens = out;
    c.cost_microusd = cost;
    c.status = "ok";
    ASSERT_TRUE(ledger_->AddLlmCall(c).ok());
  }

  ReportInput Input(std::vector<std::string> call_ids) {
    ReportInput in;
    in.session_id = kSession;
    in.agent_id = "main";
    in.message_id = kMessage;
    in.workspace = ws_;
    in.status = "done";
    in.profile = "safe";
    in.call_ids = std::move(call_ids);
    in.started_at_ms = 1500;
    in.wall_ms = 4500;
    return in;
  }

  Report Build(const ReportInput& in) {
    StatusOr<Report> r = BuildReport(ledger_.get(), in);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Report();
  }

  std::string ws_;
  std::unique_ptr<Ledger> ledger_;
  int events_ = 0;
  int llm_calls_ = 0;
};

using Ids = std::vector<std::string>;

// BuildReport

TEST_F(ReportTest, ChangedFilesWithTheirLineCountsAndChanges) {
  AddWrite("ex_w1", "EditTool", "src/a.cc", 3, 1);
  AddWrite("ex_w2", "WriteFile", "b.cc", 10, 0);
  AddWrite("ex_w3", "EditTool", "src/a.cc", 2, 4);
  Report r = Build(Input({"ex_w1", "ex_w2", "ex_w3"}));
  EXPECT_EQ(r.session_id, kSession);
  EXPECT_EQ(r.status, "done");
  EXPECT_EQ(r.profile, "safe");
  EXPECT_EQ(r.wall_ms, 4500);
  EXPECT_EQ(r.tool_calls, 3);
  ASSERT_EQ(r.files.size(), 2u);
  // Sorted by path.
  EXPECT_EQ(r.files[0].path, "b.cc");
  EXPECT_EQ(r.files[0].added, 10);
  EXPECT_EQ(r.files[0].removed, 0);
  EXPECT_EQ(r.files[0].change_ids, (Ids{"ex_w2"}));
  EXPECT_EQ(r.files[1].path, "src/a.cc");
  EXPECT_EQ(r.files[1].added, 5);
  EXPECT_EQ(r.files[1].removed, 5);
  EXPECT_EQ(r.files[1].change_ids, (Ids{"ex_w1", "ex_w3"}));
}

// Where the tracker could not watch the tree (the watch limit, a tree past
// its entries), the report says so: changes made outside Odin were looked
// for by a look at the whole tree between calls, never silently missed.
TEST_F(ReportTest, ATreeThatWasNotWatchedIsSaid) {
  EXPECT_EQ(Build(Input({})).unwatched, "");
  EXPECT_EQ(RenderReport(Build(Input({}))).find("External changes"), std::string::npos);
  AddCheckEvent("", "", R"j({"why": "the inotify watch limit was reached (fs.inotify.max_user_watches = 8192)"})j",
                "external_changes_unwatched");
  Report r = Build(Input({}));
  EXPECT_EQ(r.unwatched, "the inotify watch limit was reached (fs.inotify.max_user_watches = 8192)");
  EXPECT_NE(RenderReport(r).find("External changes: not watched (the inotify watch limit was reached "
                                 "(fs.inotify.max_user_watches = 8192)); the whole tree was looked at between calls"),
            std::string::npos)
      << RenderReport(r);
}

TEST_F(ReportTest, AbsoluteAndRelativePathsOfOneFileAreOneEntry) {
  AddWrite("ex_w1", "EditTool", "a.cc", 1, 0);
  AddWrite("ex_w2", "EditTool", JoinPath(ws_, "a.cc"), 1, 0);
  Report r = Build(Input({"ex_w1", "ex_w2"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].path, "a.cc");
  EXPECT_EQ(r.files[0].change_ids, (Ids{"ex_w1", "ex_w2"}));
}

TEST_F(ReportTest, OnlyTheMessagesSuccessfulWritesCount) {
  AddWrite("ex_old", "EditTool", "old.cc", 1, 1);  // an earlier message's
  AddWrite("ex_err", "EditTool", "a.cc", 0, 0, "error");
  AddWrite("ex_rej", "WriteFile", "b.cc", 0, 0, "rejected");
  Start("ex_cmd", "ExecuteCommand", R"({"command":"make"})");
  ASSERT_TRUE(ledger_->AddExecutionEnd(End("ex_cmd", "ok"), {}).ok());
  Start("ex_open", "EditTool", json{{"file_path", "c.cc"}, {"old_string", "a"}, {"new_string", "b"}}.dump());
  AddWrite("ex_ok", "EditTool", "d.cc", 1, 2);
  Report r = Build(Input({"ex_err", "ex_rej", "ex_cmd", "ex_open", "ex_ok"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].path, "d.cc");
  EXPECT_EQ(r.tool_calls, 5);
}

TEST_F(ReportTest, NoChangesMeansNoFiles) {
  Report r = Build(Input({}));
  EXPECT_TRUE(r.files.empty());
  EXPECT_TRUE(r.checks.empty());
  EXPECT_EQ(r.tool_calls, 0);
  EXPECT_EQ(r.validations, 0);
}

TEST_F(ReportTest, TheLatestValidationOfEachFileWins) {
  AddWrite("ex_w1", "EditTool", "a.cc", 1, 0);
  AddCheck("ex_v1", "ex_w1", "a.cc", "errors", 2, "a.cc:1:1 [c] bad\n");
  AddWrite("ex_w2", "EditTool", "a.cc", 1, 1);
  AddCheck("ex_v2", "ex_w2", "a.cc", "clean");
  AddWrite("ex_w3", "EditTool", "b.cc", 1, 1);
  AddCheck("ex_v3", "ex_w3", "b.cc", "errors", 1, "b.cc:3:1 [c] bad\n");
  Report r = Build(Input({"ex_w1", "ex_w2", "ex_w3"}));
  EXPECT_EQ(r.validations, 3);
  EXPECT_EQ(r.tool_calls, 3);  // lsp_checks are the runtime's, not the model's
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].path, "a.cc");
  EXPECT_EQ(r.files[0].validation, "clean");
  EXPECT_EQ(r.files[0].check_id, "ex_v2");
  EXPECT_EQ(r.files[0].validator, "clangd");
  EXPECT_EQ(r.files[0].new_errors, 0);
  EXPECT_EQ(r.files[0].detail, "");
  EXPECT_EQ(r.files[1].validation, "errors");
  EXPECT_EQ(r.files[1].check_id, "ex_v3");
  EXPECT_EQ(r.files[1].new_errors, 1);
  EXPECT_EQ(r.files[1].detail, "b.cc:3:1 [c] bad\n");
}

TEST_F(ReportTest, ATimedOutValidationShowsItsReason) {
  AddWrite("ex_w1", "EditTool", "a.cc", 1, 0);
  AddCheck("ex_v1", "ex_w1", "a.cc", "timed_out", 0, "", "clangd did not answer in 5000 ms");
  Report r = Build(Input({"ex_w1"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].validation, "timed_out");
  EXPECT_EQ(r.files[0].detail, "clangd did not answer in 5000 ms");
}

TEST_F(ReportTest, AFileNeverValidatedHasNoValidation) {
  AddWrite("ex_w1", "EditTool", "notes.txt", 1, 0);
  Report r = Build(Input({"ex_w1"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].validation, "");
  EXPECT_EQ(r.files[0].check_id, "");
}

TEST_F(ReportTest, AValidationOfAFileTheMessageDidNotChangeIsNotReported) {
  AddWrite("ex_w1", "EditTool", "a.cc", 1, 0);
  Start("ex_v9", "lsp_check", R"({"file_path":"other.cc"})");
  ValidationRecord v{"ex_v9", kSession, "main", "", JoinPath(ws_, "other.cc"), "clean", "clangd"};
  ASSERT_TRUE(ledger_->AddExecutionEnd(End("ex_v9", "ok"), {}, &v).ok());
  Report r = Build(Input({"ex_w1", "ex_v9"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].path, "a.cc");
  EXPECT_EQ(r.files[0].validation, "");
  EXPECT_EQ(r.validations, 1);  // the model's own lsp_check counts
}

TEST_F(ReportTest, ARollbackIsOneOfTheFilesChanges) {
  // The write brought errors; its lsp_check rolled it back with a WriteFile.
  AddWrite("ex_w1", "EditTool", "a.cc", 3, 1);
  AddCheck("ex_v1", "ex_w1", "a.cc", "errors", 1, "a.cc:1:1 [c] bad\n");
  AddWrite("ex_r1", "WriteFile", "a.cc", 1, 3, "ok", "ex_v1");
  Report r = Build(Input({"ex_w1"}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].change_ids, (Ids{"ex_w1", "ex_r1"}));
  EXPECT_EQ(r.files[0].added, 4);
  EXPECT_EQ(r.files[0].removed, 4);
  EXPECT_EQ(r.validations, 1);
}

TEST_F(ReportTest, ChildrenOfOtherMessagesCallsAreNotIncluded) {
  AddWrite("ex_old", "EditTool", "a.cc", 1, 0);
  AddCheck("ex_vold", "ex_old", "a.cc", "clean");
  AddWrite("ex_w1", "EditTool", "b.cc", 1, 0);
  Report r = Build(Input({"ex_w1"}));
  EXPECT_EQ(r.validations, 0);
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].path, "b.cc");
}

TEST_F(ReportTest, ChecksAreTheLastRunOfEachInFirstRunOrder) {
  AddCheckEvent("ex_k1", kMessage, R"({"name":"build","status":"passed","command":"make","exit_code":0})");
  AddCheckEvent("", kMessage, R"({"name":"lint","status":"not_applicable"})");
  AddCheckEvent("ex_k2", kMessage, R"({"name":"tests","status":"failed","command":"make test","exit_code":2})");
  AddCheckEvent("ex_k3", kMessage, R"({"name":"build","status":"passed","command":"make","exit_code":0})");
  AddCheckEvent("ex_k4", kMessage, R"({"name":"tests","status":"not_run","command":"make test"})");
  Report r = Build(Input({}));
  ASSERT_EQ(r.checks.size(), 3u);
  EXPECT_EQ(r.checks[0].name, "build");
  EXPECT_EQ(r.checks[0].execution_id, "ex_k3");
  EXPECT_EQ(r.checks[0].status, "passed");
  EXPECT_EQ(r.checks[0].command, "make");
  EXPECT_EQ(r.checks[0].exit_code, 0);
  EXPECT_EQ(r.checks[1].name, "lint");
  EXPECT_EQ(r.checks[1].status, "not_applicable");
  EXPECT_EQ(r.checks[1].command, "");
  EXPECT_EQ(r.checks[1].execution_id, "");
  EXPECT_EQ(r.checks[1].exit_code, -1);
  EXPECT_EQ(r.checks[2].name, "tests");
  EXPECT_EQ(r.checks[2].execution_id, "ex_k4");
  EXPECT_EQ(r.checks[2].status, "not_run");
  EXPECT_EQ(r.checks[2].exit_code, -1);
}

TEST_F(ReportTest, OnlyThisMessagesCheckEventsCount) {
  AddCheckEvent("ex_k1", "msg_0", R"({"name":"build","status":"failed","command":"make","exit_code":1})");
  AddCheckEvent("", kMessage, R"({"reason":"blocked"})", "completion_refused");
  AddCheckEvent("ex_k2", kMessage, "not json");
  AddCheckEvent("ex_k3", kMessage, R"({"name":"tests","status":"passed","command":"ctest","exit_code":0})");
  Report r = Build(Input({}));
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].name, "tests");
  EXPECT_EQ(r.checks[0].execution_id, "ex_k3");
}

TEST_F(ReportTest, UsageCountsTheSessionsModelCallsSinceTheMessageStarted) {
  AddLlmCall(kSession, 1000, 999, 999, 999);  // before the message (started at 1500)
  AddLlmCall(kSession, 1500, 1000, 200, 10000);
  AddLlmCall(kSession, 2500, 200, 140, 2345);
  AddLlmCall("ses_other", 2500, 5000, 5000, 5000);
  Report r = Build(Input({}));
  EXPECT_EQ(r.llm_calls, 2);
  EXPECT_EQ(r.input_tokens, 1200);
  EXPECT_EQ(r.output_tokens, 340);
  EXPECT_EQ(r.cost_microusd, 12345);
}

// RenderReport

Report SampleReport() {
  Report r;
  r.session_id = "ses_1";
  r.status = "done";
  r.profile = "safe";
  ReportFile a;
  a.path = "src/a.cc";
  a.added = 5;
  a.removed = 1;
  a.change_ids = {"ex_w1", "ex_w2"};
  a.validation = "errors";
  a.check_id = "ex_v2";
  a.validator = "clangd";
  a.new_errors = 2;
  a.detail = "src/a.cc:1:1 [c] bad\nsrc/a.cc:2:1 [c] worse\n";
  ReportFile b;
  b.path = "b.txt";
  b.added = 1;
  b.change_ids = {"ex_w3"};
  r.files = {a, b};
  r.checks = {{"build", "passed", "make", "ex_k1", 0},
              {"lint", "not_applicable", "", "", -1},
              {"tests", "failed", "make test", "ex_k2", 2, "FAILED test_a.py::test_add - assert 3 == 4\n1 failed"}};
  r.tool_calls = 4;
  r.validations = 2;
  r.llm_calls = 3;
  r.input_tokens = 1200;
  r.output_tokens = 340;
  r.cost_microusd = 12345;
  r.wall_ms = 4500;
  return r;
}

TEST(RenderReportTest, ListsFilesValidationsChecksAndUsage) {
  EXPECT_EQ(RenderReport(SampleReport()),
            "── Odin report (from the ledger, session ses_1) ──\n"
            "Changed files:\n"
            "  src/a.cc  +5 -1  (ex_w1, ex_w2)\n"
            "    validation: errors (lsp_check ex_v2, clangd), 2 new errors\n"
            "      src/a.cc:1:1 [c] bad\n"
            "      src/a.cc:2:1 [c] worse\n"
            "  b.txt  +1 -0  (ex_w3)\n"
            "    validation: not validated\n"
            "Checks (profile safe):\n"
            "  build: passed  `make` (ex_k1)\n"
            "  lint: not_applicable\n"
            "  tests: failed  `make test` exit 2 (ex_k2)\n"
            "    | FAILED test_a.py::test_add - assert 3 == 4\n"
            "    | 1 failed\n"
            "Used: 4 tool calls, 2 validations, 3 model calls, 1200 tokens in, 340 out, $0.0123, 4.5 s\n"
            "Status: done\n");
}

TEST(RenderReportTest, NothingChangedAndNoChecksRun) {
  Report r;
  r.session_id = "ses_9";
  r.status = "done";
  r.profile = "fast";
  EXPECT_EQ(RenderReport(r),
            "── Odin report (from the ledger, session ses_9) ──\n"
            "Changed files: none\n"
            "Checks (profile fast): none run\n"
            "Used: 0 tool calls, 0 validations, 0 model calls, 0 tokens in, 0 out, $0.0000, 0.0 s\n"
            "Status: done\n");
  r.profile = "";
  EXPECT_EQ(RenderReport(r).find("Checks"), std::string::npos);
}

TEST(RenderReportTest, ACleanOrUnvalidatableFileShowsItsVerdictAndReason) {
  Report r;
  r.session_id = "s";
  r.status = "done";
  ReportFile clean;
  clean.path = "a.cc";
  clean.change_ids = {"ex_1"};
  clean.validation = "clean";
  clean.check_id = "ex_v1";
  clean.validator = "clangd";
  ReportFile none;
  none.path = "b.xyz";
  none.change_ids = {"ex_2"};
  none.validation = "no_validator";
  none.check_id = "ex_v2";
  none.detail = "no language server for b.xyz";
  r.files = {clean, none};
  std::string out = RenderReport(r);
  EXPECT_NE(out.find("    validation: clean (lsp_check ex_v1, clangd)\n  b.xyz"), std::string::npos) << out;
  EXPECT_NE(out.find("    validation: no_validator (lsp_check ex_v2)\n      no language server for b.xyz\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("new errors"), std::string::npos);
}

TEST(RenderReportTest, ShowsAtMostFiveLinesOfDetail) {
  Report r = SampleReport();
  r.files.resize(1);
  r.files[0].detail = "d1\nd2\nd3\nd4\nd5\nd6\nd7\n";
  std::string out = RenderReport(r);
  EXPECT_NE(out.find("      d5\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("d6"), std::string::npos) << out;
}

// ReportJson

TEST(RenderReportTest, TheWhyLineNamesTheEvidenceCited) {
  Report r = SampleReport();
  EXPECT_EQ(RenderReport(r).find("why:"), std::string::npos) << "nothing cited, no why";
  r.files[0].evidence = {"ex_q1", "ex_q2"};
  std::string out = RenderReport(r);
  EXPECT_NE(out.find("    why: the analysis it cited (ex_q1, ex_q2)\n"), std::string::npos) << out;
}

TEST(ReportJsonTest, HoldsEveryField) {
  Report sample = SampleReport();
  sample.files[0].evidence = {"ex_q1"};
  json j = json::parse(ReportJson(sample), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["session_id"], "ses_1");
  EXPECT_EQ(j["status"], "done");
  EXPECT_EQ(j["profile"], "safe");
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0], (json{{"path", "src/a.cc"},
                                 {"change", "modified"},
                                 {"by_command", false},
                                 {"lines_added", 5},
                                 {"lines_removed", 1},
                                 {"execution_ids", {"ex_w1", "ex_w2"}},
                                 {"evidence", {"ex_q1"}},
                                 {"validation",
                                  {{"status", "errors"},
                                   {"execution_id", "ex_v2"},
                                   {"validator", "clangd"},
                                   {"new_errors", 2},
                                   {"detail", "src/a.cc:1:1 [c] bad\nsrc/a.cc:2:1 [c] worse\n"}}}}));
  EXPECT_TRUE(j["files"][1]["validation"].is_null());
  ASSERT_EQ(j["checks"].size(), 3u);
  EXPECT_EQ(
      j["checks"][0],
      (json{
          {"name", "build"}, {"status", "passed"}, {"command", "make"}, {"execution_id", "ex_k1"}, {"exit_code", 0}}));
  EXPECT_FALSE(j["checks"][1].contains("exit_code"));
  EXPECT_EQ(j["checks"][2]["exit_code"], 2);
  EXPECT_EQ(j["tool_calls"], 4);
  EXPECT_EQ(j["validations"], 2);
  EXPECT_EQ(j["llm_calls"], 3);
  EXPECT_EQ(j["input_tokens"], 1200);
  EXPECT_EQ(j["output_tokens"], 340);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 0.012345);
  EXPECT_EQ(j["wall_ms"], 4500);
}

TEST(ReportJsonTest, InvalidUtf8IsReplacedNotThrown) {
  Report r = SampleReport();
  r.files[0].detail = "bad byte \xff here";
  json j = json::parse(ReportJson(r), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["files"][0]["validation"]["detail"], "bad byte \xEF\xBF\xBD here");
}

TEST_F(ReportTest, BuiltReportRendersAndSerializes) {
  AddWrite("ex_w1", "EditTool", "a.cc", 2, 1);
  AddCheck("ex_v1", "ex_w1", "a.cc", "clean");
  AddCheckEvent("ex_k1", kMessage, R"({"name":"tests","status":"passed","command":"ctest","exit_code":0})");
  AddLlmCall(kSession, 2000, 100, 20, 500);
  Report r = Build(Input({"ex_w1"}));
  EXPECT_EQ(RenderReport(r),
            "── Odin report (from the ledger, session ses_1) ──\n"
            "Changed files:\n"
            "  a.cc  +2 -1  (ex_w1)\n"
            "    validation: clean (lsp_check ex_v1, clangd)\n"
            "Checks (profile safe):\n"
            "  tests: passed  `ctest` (ex_k1)\n"
            "Used: 1 tool calls, 1 validations, 1 model calls, 100 tokens in, 20 out, $0.0005, 4.5 s\n"
            "Status: done\n");
  json j = json::parse(ReportJson(r), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["files"][0]["path"], "a.cc");
  EXPECT_EQ(j["files"][0]["validation"]["execution_id"], "ex_v1");
  EXPECT_EQ(j["checks"][0]["execution_id"], "ex_k1");
}

}  // namespace
}  // namespace odin
