#include "ledger/memory_query.h"

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

class MemoryQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("odin-memory-query-test");
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

  std::string Abs(const std::string& rel) { return JoinPath(ws_, rel); }

  void Start(const std::string& id, const std::string& tool, const std::string& args_json,
             const std::string& parent = "", const std::string& session = kSession) {
    ExecutionStart s{id, session, "main", tool, args_json, "edit", "w-1", ++clock_ms_, parent};
    ASSERT_TRUE(ledger_->AddExecutionStart(s).ok()) << id;
  }

  ExecutionEnd End(const std::string& id, const std::string& status) {
    ExecutionEnd e;
    e.execution_id = id;
    e.status = status;
    e.exit_reason = "normal";
    e.finished_at_ms = ++clock_ms_;
    e.duration_us = 2500;
    return e;
  }

  // A write of file (relative) by tool ("WriteFile" or "EditTool"), ended with
  // status unless it is "started"; a diff artifact if diff is not empty.
  void AddWrite(const std::string& id, const std::string& tool, const std::string& file, const std::string& status,
                const std::string& diff = "", const std::string& session = kSession) {
    json args = tool == "WriteFile" ? json{{"file_path", file}, {"content", "int x;\n"}}
                                    : json{{"file_path", file}, {"old_string", "a"}, {"new_string", "b"}};
    Start(id, tool, args.dump(), "", session);
    if (status == "started") return;
    ExecutionEnd e = End(id, status);
    if (status != "ok") e.error = status + ": the write of " + file + " did not happen\nsecond line";
    std::vector<Artifact> artifacts;
    if (!diff.empty()) {
      artifacts.push_back({"art_" + id, id, "diff", diff, static_cast<int64_t>(diff.size()), false, ""});
    }
    ASSERT_TRUE(ledger_->AddExecutionEnd(e, artifacts).ok()) << id;
  }

  // The lsp_check of write (file relative), with its verdict and diagnostics.
  void AddCheck(const std::string& id, const std::string& write, const std::string& file, const std::string& status,
                int64_t new_errors = 0, std::vector<DiagnosticRecord> diagnostics = {},
                const std::string& session = kSession) {
    Start(id, "lsp_check", json{{"file_path", file}}.dump(), write, session);
    ValidationRecord v;
    v.execution_id = id;
    v.session_id = session;
    v.agent_id = "main";
    v.mutation_id = write;
    v.path = Abs(file);
    v.status = status;
    v.validator = "clangd";
    v.new_errors = new_errors;
    if (status == "errors") v.summary = file + ":1:1 [c] bad\n";
    if (status == "timed_out") v.reason = "clangd did not answer in 5000 ms";
    v.created_at_ms = ++clock_ms_;
    for (DiagnosticRecord& d : diagnostics) d.execution_id = id;
    ExecutionEnd e = End(id, "ok");
    e.output_head = status + ": something about " + file + "\nmore";
    ASSERT_TRUE(ledger_->AddExecutionEnd(e, {}, &v, diagnostics).ok()) << id;
  }

  void AddCommand(const std::string& id, const std::string& status, int exit_code) {
    Start(id, "ExecuteCommand", R"({"command":"make"})");
    ExecutionEnd e = End(id, status);
    e.exit_code = exit_code;
    e.output_head = "make: *** [all] Error 2\nmore output";
    ASSERT_TRUE(ledger_->AddExecutionEnd(e, {}).ok());
  }

  DiagnosticRecord Diagnostic(const std::string& file, int64_t line, int64_t severity, const std::string& code,
                              const std::string& message, bool is_new) {
    DiagnosticRecord d;
    d.path = Abs(file);
    d.line = line;
    d.column = 3;
    d.severity = severity;
    d.code = code;
    d.message = message;
    d.source = "clang";
    d.is_new = is_new;
    return d;
  }

  // Runs the query; fails the test if it does not succeed.
  json Query(const json& args) {
    StatusOr<std::string> out = RunMemoryQuery(ledger_.get(), kSession, ws_, args.dump());
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return json();
    json parsed = json::parse(*out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << *out;
    return parsed;
  }

  Status QueryError(const std::string& args_json) {
    return RunMemoryQuery(ledger_.get(), kSession, ws_, args_json).status();
  }

  static std::vector<std::string> IdsOf(const json& list) {
    std::vector<std::string> ids;
    for (const json& e : list) ids.push_back(e.value("execution_id", "?"));
    return ids;
  }

  std::string ws_;
  std::unique_ptr<Ledger> ledger_;
  int64_t clock_ms_ = 1000;
};

using Ids = std::vector<std::string>;

// last_edit

TEST_F(MemoryQueryTest, LastEditIsTheNewestSuccessfulWrite) {
  AddWrite("ex_w1", "WriteFile", "a.cc", "ok");
  AddWrite("ex_w2", "EditTool", "src/b.cc", "ok");
  AddWrite("ex_w3", "EditTool", "a.cc", "error");
  AddWrite("ex_w4", "WriteFile", "a.cc", "started");
  AddCommand("ex_c1", "ok", 0);
  json out = Query({{"query", "last_edit"}});
  EXPECT_EQ(out["query"], "last_edit");
  ASSERT_TRUE(out["edit"].is_object()) << out.dump();
  EXPECT_EQ(out["edit"]["execution_id"], "ex_w2");
  EXPECT_EQ(out["edit"]["tool"], "EditTool");
  EXPECT_EQ(out["edit"]["file"], "src/b.cc");
  EXPECT_EQ(out["edit"]["status"], "ok");
  EXPECT_EQ(out["edit"]["duration_ms"], 2);
}

TEST_F(MemoryQueryTest, LastEditOfAFile) {
  AddWrite("ex_w1", "WriteFile", "a.cc", "ok");
  AddWrite("ex_w2", "EditTool", "src/b.cc", "ok");
  AddWrite("ex_w3", "EditTool", "a.cc", "rejected");
  json out = Query({{"query", "last_edit"}, {"file_path", "a.cc"}});
  ASSERT_TRUE(out["edit"].is_object()) << out.dump();
  EXPECT_EQ(out["edit"]["execution_id"], "ex_w1");
  EXPECT_EQ(out["edit"]["file"], "a.cc");
  // An absolute path names the same file.
  EXPECT_EQ(Query({{"query", "last_edit"}, {"file_path", Abs("src/b.cc")}})["edit"]["execution_id"], "ex_w2");
}

TEST_F(MemoryQueryTest, LastEditCarriesItsDiffAndValidation) {
  std::string diff = "--- a/a.cc\n+++ b/a.cc\n@@ -1 +1 @@\n-a\n+b\n";
  AddWrite("ex_w1", "EditTool", "a.cc", "ok", diff);
  AddCheck("ex_v1", "ex_w1", "a.cc", "errors", 1);
  json edit = Query({{"query", "last_edit"}})["edit"];
  ASSERT_TRUE(edit.is_object());
  EXPECT_EQ(edit["diff"], diff);
  ASSERT_TRUE(edit["validation"].is_object()) << edit.dump();
  EXPECT_EQ(edit["validation"]["execution_id"], "ex_v1");
  EXPECT_EQ(edit["validation"]["validates"], "ex_w1");
  EXPECT_EQ(edit["validation"]["file"], "a.cc");
  EXPECT_EQ(edit["validation"]["status"], "errors");
  EXPECT_EQ(edit["validation"]["validator"], "clangd");
  EXPECT_EQ(edit["validation"]["new_errors"], 1);
  EXPECT_EQ(edit["validation"]["summary"], "a.cc:1:1 [c] bad\n");
}

TEST_F(MemoryQueryTest, LastEditWithoutDiffOrValidationHasNeither) {
  AddWrite("ex_w1", "WriteFile", "a.cc", "ok");
  json edit = Query({{"query", "last_edit"}})["edit"];
  ASSERT_TRUE(edit.is_object());
  EXPECT_FALSE(edit.contains("diff"));
  EXPECT_FALSE(edit.contains("validation"));
}

TEST_F(MemoryQueryTest, LastEditCutsALongDiff) {
  std::string diff = "--- a/a.cc\n+++ b/a.cc\n" + std::string(5000, 'x');
  AddWrite("ex_w1", "WriteFile", "a.cc", "ok", diff);
  json edit = Query({{"query", "last_edit"}})["edit"];
  EXPECT_EQ(edit["diff"], diff.substr(0, 4096) + "\n[... diff cut ...]\n");
}

TEST_F(MemoryQueryTest, LastEditIsNullWhenThereIsNone) {
  json out = Query({{"query", "last_edit"}});
  ASSERT_TRUE(out.contains("edit"));
  EXPECT_TRUE(out["edit"].is_null());
  AddWrite("ex_w1", "WriteFile", "a.cc", "ok");
  EXPECT_TRUE(Query({{"query", "last_edit"}, {"file_path", "other.cc"}})["edit"].is_null());
}

TEST_F(MemoryQueryTest, LastEditShortensLongArguments) {
  Start("ex_w1", "WriteFile", json{{"file_path", "a.cc"}, {"content", std::string(500, 'c')}}.dump());
  ASSERT_TRUE(ledger_->AddExecutionEnd(End("ex_w1", "ok"), {}).ok());
  json args = Query({{"query", "last_edit"}})["edit"]["arguments"];
  EXPECT_EQ(args["file_path"], "a.cc");
  EXPECT_EQ(args["content"], std::string(200, 'c') + "... (500 bytes)");
}

// last_validation

TEST_F(MemoryQueryTest, LastValidationWithItsDiagnostics) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCheck("ex_v1", "ex_w1", "a.cc", "clean");
  AddWrite("ex_w2", "EditTool", "src/b.cc", "ok");
  AddCheck("ex_v2", "ex_w2", "src/b.cc", "errors", 1,
           {Diagnostic("src/b.cc", 7, 1, "undeclared_var_use", "use of undeclared identifier 'x'", true),
            Diagnostic("src/b.cc", 9, 2, "unused", "unused variable 'y'", false),
            Diagnostic("src/b.h", 1, 3, "", "declared here", false)});
  json v = Query({{"query", "last_validation"}})["validation"];
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["execution_id"], "ex_v2");
  EXPECT_EQ(v["file"], "src/b.cc");
  EXPECT_EQ(v["status"], "errors");
  EXPECT_EQ(v["validates"], "ex_w2");
  ASSERT_EQ(v["diagnostics"].size(), 3u) << v.dump();
  EXPECT_EQ(v["diagnostics"][0], (json{{"file", "src/b.cc"},
                                       {"line", 7},
                                       {"column", 3},
                                       {"severity", "error"},
                                       {"code", "undeclared_var_use"},
                                       {"message", "use of undeclared identifier 'x'"},
                                       {"new", true}}));
  EXPECT_EQ(v["diagnostics"][1]["severity"], "warning");
  EXPECT_EQ(v["diagnostics"][1]["new"], false);
  EXPECT_EQ(v["diagnostics"][2]["severity"], "note");
  EXPECT_EQ(v["diagnostics"][2]["file"], "src/b.h");
}

TEST_F(MemoryQueryTest, LastValidationOfAFile) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCheck("ex_v1", "ex_w1", "a.cc", "timed_out");
  AddWrite("ex_w2", "EditTool", "src/b.cc", "ok");
  AddCheck("ex_v2", "ex_w2", "src/b.cc", "clean");
  json v = Query({{"query", "last_validation"}, {"file_path", "a.cc"}})["validation"];
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["execution_id"], "ex_v1");
  EXPECT_EQ(v["status"], "timed_out");
  EXPECT_EQ(v["reason"], "clangd did not answer in 5000 ms");
  EXPECT_TRUE(v["diagnostics"].is_array());
  EXPECT_TRUE(v["diagnostics"].empty());
}

TEST_F(MemoryQueryTest, LastValidationIsNullWhenThereIsNone) {
  EXPECT_TRUE(Query({{"query", "last_validation"}})["validation"].is_null());
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCheck("ex_v1", "ex_w1", "a.cc", "clean");
  EXPECT_TRUE(Query({{"query", "last_validation"}, {"file_path", "b.cc"}})["validation"].is_null());
}

TEST_F(MemoryQueryTest, LastValidationShowsAtMostFiftyDiagnostics) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  std::vector<DiagnosticRecord> many;
  for (int i = 1; i <= 60; ++i) many.push_back(Diagnostic("a.cc", i, 1, "c", "m", true));
  AddCheck("ex_v1", "ex_w1", "a.cc", "errors", 60, many);
  json list = Query({{"query", "last_validation"}})["validation"]["diagnostics"];
  ASSERT_EQ(list.size(), 50u);
  EXPECT_EQ(list[49]["line"], 50);
}

// failed_attempts

TEST_F(MemoryQueryTest, FailedAttemptsAreRefusedFailedOrBrokenWritesNewestFirst) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCheck("ex_v1", "ex_w1", "a.cc", "clean");
  AddWrite("ex_w2", "EditTool", "a.cc", "rejected");
  AddWrite("ex_w3", "EditTool", "a.cc", "ok");
  AddCheck("ex_v3", "ex_w3", "a.cc", "errors", 2);
  AddWrite("ex_w4", "WriteFile", "b.cc", "ok");
  AddCheck("ex_v4", "ex_w4", "b.cc", "timed_out");
  AddWrite("ex_w5", "WriteFile", "b.cc", "error");
  AddWrite("ex_w6", "WriteFile", "b.cc", "ok");
  AddCheck("ex_v6", "ex_w6", "b.cc", "no_validator");
  AddWrite("ex_w7", "WriteFile", "b.cc", "started");
  AddCommand("ex_c1", "error", 2);
  json attempts = Query({{"query", "failed_attempts"}})["attempts"];
  EXPECT_EQ(IdsOf(attempts), (Ids{"ex_w5", "ex_w4", "ex_w3", "ex_w2"}));
  ASSERT_EQ(attempts.size(), 4u);
  EXPECT_EQ(attempts[0]["status"], "error");
  EXPECT_EQ(attempts[0]["error"], "error: the write of b.cc did not happen");
  EXPECT_EQ(attempts[0]["file"], "b.cc");
  EXPECT_FALSE(attempts[0].contains("validation"));
  EXPECT_EQ(attempts[2]["validation"]["status"], "errors");
  EXPECT_EQ(attempts[2]["validation"]["new_errors"], 2);
  EXPECT_EQ(attempts[3]["status"], "rejected");
}

TEST_F(MemoryQueryTest, FailedAttemptsOfAFileWithALimit) {
  AddWrite("ex_w1", "EditTool", "a.cc", "error");
  AddWrite("ex_w2", "EditTool", "b.cc", "error");
  AddWrite("ex_w3", "EditTool", "a.cc", "rejected");
  AddWrite("ex_w4", "EditTool", "a.cc", "error");
  EXPECT_EQ(IdsOf(Query({{"query", "failed_attempts"}, {"file_path", "a.cc"}})["attempts"]),
            (Ids{"ex_w4", "ex_w3", "ex_w1"}));
  EXPECT_EQ(IdsOf(Query({{"query", "failed_attempts"}, {"file_path", "a.cc"}, {"limit", 2}})["attempts"]),
            (Ids{"ex_w4", "ex_w3"}));
}

TEST_F(MemoryQueryTest, NoFailedAttemptsIsAnEmptyList) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  json attempts = Query({{"query", "failed_attempts"}})["attempts"];
  EXPECT_TRUE(attempts.is_array());
  EXPECT_TRUE(attempts.empty());
}

// executions

TEST_F(MemoryQueryTest, ExecutionsAreNewestFirstWithADefaultLimitOfTen) {
  for (int i = 1; i <= 12; ++i) AddCommand("ex_" + std::to_string(100 + i), "ok", 0);
  json list = Query({{"query", "executions"}})["executions"];
  ASSERT_EQ(list.size(), 10u);
  EXPECT_EQ(list[0]["execution_id"], "ex_112");
  EXPECT_EQ(list[9]["execution_id"], "ex_103");
  EXPECT_EQ(list[0]["tool"], "ExecuteCommand");
  EXPECT_EQ(list[0]["exit_code"], 0);
  EXPECT_EQ(list[0]["output_first_line"], "make: *** [all] Error 2");
  EXPECT_EQ(list[0]["arguments"], (json{{"command", "make"}}));
}

TEST_F(MemoryQueryTest, ExecutionsByIdIncludeTheLinkBetweenWriteAndCheck) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCheck("ex_v1", "ex_w1", "a.cc", "clean");
  AddCommand("ex_c1", "ok", 0);
  json write = Query({{"query", "executions"}, {"execution_id", "ex_w1"}})["executions"];
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(write[0]["file"], "a.cc");
  EXPECT_EQ(write[0]["validation"]["execution_id"], "ex_v1");
  json check = Query({{"query", "executions"}, {"execution_id", "ex_v1"}})["executions"];
  ASSERT_EQ(check.size(), 1u);
  EXPECT_EQ(check[0]["tool"], "lsp_check");
  EXPECT_EQ(check[0]["parent_id"], "ex_w1");
  EXPECT_FALSE(check[0].contains("file"));
  EXPECT_TRUE(Query({{"query", "executions"}, {"execution_id", "ex_nope"}})["executions"].empty());
}

TEST_F(MemoryQueryTest, ExecutionsFilteredByToolAndStatus) {
  AddWrite("ex_w1", "EditTool", "a.cc", "ok");
  AddCommand("ex_c1", "error", 2);
  AddWrite("ex_w2", "WriteFile", "a.cc", "error");
  AddCommand("ex_c2", "ok", 0);
  AddWrite("ex_w3", "EditTool", "a.cc", "started");
  EXPECT_EQ(IdsOf(Query({{"query", "executions"}, {"tool", "ExecuteCommand"}})["executions"]), (Ids{"ex_c2", "ex_c1"}));
  EXPECT_EQ(IdsOf(Query({{"query", "executions"}, {"status", "error"}})["executions"]), (Ids{"ex_w2", "ex_c1"}));
  EXPECT_EQ(IdsOf(Query({{"query", "executions"}, {"tool", "ExecuteCommand"}, {"status", "error"}})["executions"]),
            (Ids{"ex_c1"}));
  json started = Query({{"query", "executions"}, {"status", "started"}})["executions"];
  EXPECT_EQ(IdsOf(started), (Ids{"ex_w3"}));
  ASSERT_EQ(started.size(), 1u);
  EXPECT_FALSE(started[0].contains("duration_ms"));
}

TEST_F(MemoryQueryTest, LimitIsClampedBetweenOneAndFifty) {
  for (int i = 1; i <= 60; ++i) AddCommand("ex_" + std::to_string(100 + i), "ok", 0);
  EXPECT_EQ(Query({{"query", "executions"}, {"limit", 3}})["executions"].size(), 3u);
  EXPECT_EQ(Query({{"query", "executions"}, {"limit", 0}})["executions"].size(), 1u);
  EXPECT_EQ(Query({{"query", "executions"}, {"limit", -5}})["executions"].size(), 1u);
  EXPECT_EQ(Query({{"query", "executions"}, {"limit", 500}})["executions"].size(), 50u);
}

TEST_F(MemoryQueryTest, OtherSessionsAreNotSeen) {
  ASSERT_TRUE(ledger_->AddSession({"ses_2", "agent", ws_, 1000}).ok());
  AddWrite("ex_mine", "EditTool", "a.cc", "ok");
  AddWrite("ex_theirs", "EditTool", "a.cc", "ok", "", "ses_2");
  AddCheck("ex_their_check", "ex_theirs", "a.cc", "errors", 1, {}, "ses_2");
  EXPECT_EQ(Query({{"query", "last_edit"}})["edit"]["execution_id"], "ex_mine");
  EXPECT_TRUE(Query({{"query", "last_validation"}})["validation"].is_null());
  EXPECT_EQ(IdsOf(Query({{"query", "executions"}})["executions"]), (Ids{"ex_mine"}));
}

// Bad arguments

TEST_F(MemoryQueryTest, ArgumentsMustBeAJsonObject) {
  for (const char* bad : {"", "not json", "[]", "\"last_edit\"", "42"}) {
    Status s = QueryError(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(MemoryQueryTest, UnknownArgumentIsNamed) {
  Status s = QueryError(R"({"query":"last_edit","path":"a.cc"})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown argument 'path'"), std::string::npos) << s.message();
}

TEST_F(MemoryQueryTest, WrongTypesAreRefused) {
  for (const char* bad : {R"({"query":5})", R"({"query":"executions","limit":"5"})",
                          R"({"query":"executions","limit":2.5})", R"({"query":"last_edit","file_path":["a"]})",
                          R"({"query":"executions","execution_id":7})", R"({"query":"executions","tool":null})"}) {
    Status s = QueryError(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("wrong type"), std::string::npos) << bad << ": " << s.message();
  }
}

TEST_F(MemoryQueryTest, UnknownOrMissingQueryIsRefused) {
  for (const char* bad : {R"({"query":"everything"})", R"({})", R"({"limit":3})"}) {
    Status s = QueryError(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("last_edit, last_validation, failed_attempts, executions, changes or reflections"),
              std::string::npos)
        << s.message();
  }
}

TEST_F(MemoryQueryTest, AFilePathOutsideTheWorkspaceIsRefused) {
  EXPECT_EQ(QueryError(R"({"query":"last_edit","file_path":"../elsewhere.cc"})").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(QueryError(R"({"query":"last_edit","file_path":"/etc/passwd"})").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace odin
