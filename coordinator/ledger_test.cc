#include "coordinator/ledger.h"

#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("odin-ledger-test");
    path_ = dir_ + "/odin.db";
  }
  void TearDown() override { RemoveTree(dir_); }

  std::unique_ptr<Ledger> Open(Redactor r = Redactor()) {
    auto l = Ledger::Open(path_, std::move(r));
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? std::move(*l) : nullptr;
  }

  ExecutionStart Start(const std::string& id) {
    return {id, "ses_1", "main", "ExecuteCommand", R"({"argv":["true"]})", "exec", "w-1", 1000};
  }
  ExecutionEnd End(const std::string& id, int code = 0) {
    ExecutionEnd e;
    e.execution_id = id;
    e.status = code == 0 ? "ok" : "error";
    e.exit_code = code;
    e.exit_reason = "normal";
    e.finished_at_ms = 1001;
    e.duration_us = 1234;
    e.output_head = "hello\n";
    e.output_bytes = 6;
    return e;
  }

  // Runs SQL directly, the way someone editing the file behind Odin's back would.
  void Tamper(const std::string& sql) {
    sqlite3* db;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  std::string dir_, path_;
};

TEST_F(LedgerTest, RecordsStartAndEndOfACall) {
  auto l = Open();
  ASSERT_TRUE(l->AddSession({"ses_1", "exec", "/ws", 999}).ok());
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a", 3), {}).ok());
  auto rows = l->ListExecutions(10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const ExecutionRow& r = (*rows)[0];
  EXPECT_EQ(r.start.tool, "ExecuteCommand");
  ASSERT_TRUE(r.end.has_value());
  EXPECT_EQ(r.end->status, "error");
  EXPECT_EQ(r.end->exit_code, 3);
  EXPECT_EQ(r.end->output_head, "hello\n");
  EXPECT_EQ(r.end->duration_us, 1234);
}

TEST_F(LedgerTest, StartWithoutEndIsVisible) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  auto row = l->FindExecution("ex_a");
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->end.has_value());
}

TEST_F(LedgerTest, ListsNewestFirstWithLimit) {
  auto l = Open();
  for (const char* id : {"ex_1", "ex_2", "ex_3"}) ASSERT_TRUE(l->AddExecutionStart(Start(id)).ok());
  auto rows = l->ListExecutions(2);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].start.execution_id, "ex_3");
  EXPECT_EQ((*rows)[1].start.execution_id, "ex_2");
}

TEST_F(LedgerTest, FindsByUniquePrefixOnly) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_abc1")).ok());
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_abd2")).ok());
  EXPECT_EQ(l->FindExecution("ex_abc")->start.execution_id, "ex_abc1");
  EXPECT_EQ(l->FindExecution("ex_ab").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(l->FindExecution("ex_zz").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(l->FindExecution("ex_%").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LedgerTest, ArtifactsAreStoredWithTheirHash) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  Artifact a{"art_1", "ex_a", "output", std::string(100, 'x'), 1000, true, ""};
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a"), {a}).ok());
  auto arts = l->ListArtifacts("ex_a");
  ASSERT_EQ(arts->size(), 1u);
  EXPECT_EQ((*arts)[0].content, std::string(100, 'x'));
  EXPECT_EQ((*arts)[0].size, 1000);
  EXPECT_TRUE((*arts)[0].truncated);
  EXPECT_EQ((*arts)[0].sha256.size(), 64u);
}

TEST_F(LedgerTest, SecretsAreRedactedBeforeWriting) {
  Redactor r;
  r.AddSecret("OPENAI_API_KEY", "super-secret-value-123");
  auto l = Open(r);
  ExecutionStart s = Start("ex_a");
  s.args_json = R"({"argv":["curl","-H","super-secret-value-123"]})";
  ASSERT_TRUE(l->AddExecutionStart(s).ok());
  ExecutionEnd e = End("ex_a");
  e.output_head = "token super-secret-value-123 and ghp_0123456789abcdefghijklmnopqrstuvwxyz";
  ASSERT_TRUE(l->AddExecutionEnd(e, {{"art_1", "ex_a", "output", "x super-secret-value-123", 24, false, ""}}).ok());
  l.reset();
  auto db = ReadFileToString(path_);
  auto wal = ReadFileToString(path_ + "-wal");
  std::string all = *db + (wal.ok() ? *wal : "");
  EXPECT_EQ(all.find("super-secret-value-123"), std::string::npos);
  EXPECT_EQ(all.find("ghp_0123456789"), std::string::npos);
  EXPECT_NE(all.find("[REDACTED:OPENAI_API_KEY]"), std::string::npos);
}

TEST_F(LedgerTest, VerifyPassesOnAnUntouchedLedger) {
  auto l = Open();
  ASSERT_TRUE(l->AddSession({"ses_1", "exec", "/ws", 999}).ok());
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a"), {{"art_1", "ex_a", "output", "abc", 3, false, ""}}).ok());
  auto report = l->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->records, 4);
}

TEST_F(LedgerTest, MessagesAndModelCallsAreChainedAndSummed) {
  auto l = Open();
  ASSERT_TRUE(l->AddMessage({"msg_1", "ses_1", "main", "user", "edit", "fix it", "queued", 1}).ok());
  LlmCallRecord c{"llm_1", "ses_1", "main", "planner", "openai", "m", 2, 1500, 100, 20, 1234, "ok", 1, ""};
  ASSERT_TRUE(l->AddLlmCall(c).ok());
  c.id = "llm_2";
  c.input_tokens = 50;
  ASSERT_TRUE(l->AddLlmCall(c).ok());
  auto usage = l->UsageOf("ses_1");
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->llm_calls, 2);
  EXPECT_EQ(usage->input_tokens, 150);
  EXPECT_EQ(usage->output_tokens, 40);
  EXPECT_EQ(usage->cost_microusd, 2468);
  EXPECT_EQ(l->Verify()->records, 3);
  EXPECT_TRUE(l->Verify()->ok);
}

TEST_F(LedgerTest, RowsCannotBeUpdatedOrDeletedThroughSqlite) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  sqlite3* db;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  EXPECT_NE(sqlite3_exec(db, "UPDATE execution_starts SET tool = 'x'", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_NE(sqlite3_exec(db, "DELETE FROM execution_starts", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

TEST_F(LedgerTest, VerifyNamesTheFirstEditedRow) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a", 1), {}).ok());
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_b")).ok());
  l.reset();
  // Someone drops the guard and rewrites history: exit code 1 becomes 0.
  Tamper("DROP TRIGGER execution_ends_no_UPDATE; UPDATE execution_ends SET exit_code = 0, status = 'ok'");
  auto ro = Ledger::OpenReadOnly(path_);
  ASSERT_TRUE(ro.ok());
  auto report = (*ro)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok);
  EXPECT_NE(report->problem.find("record 2 (execution_ends) ex_a"), std::string::npos) << report->problem;
}

TEST_F(LedgerTest, VerifyDetectsADeletedRow) {
  auto l = Open();
  for (const char* id : {"ex_a", "ex_b", "ex_c"}) ASSERT_TRUE(l->AddExecutionStart(Start(id)).ok());
  l.reset();
  Tamper("DROP TRIGGER execution_starts_no_DELETE; DELETE FROM execution_starts WHERE execution_id = 'ex_b'");
  auto report = (*Ledger::OpenReadOnly(path_))->Verify();
  EXPECT_FALSE(report->ok);
  EXPECT_NE(report->problem.find("record 2 is missing"), std::string::npos) << report->problem;
}

TEST_F(LedgerTest, TwoWritersKeepOneChain) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a->AddExecutionStart(Start("ex_1")).ok());
  ASSERT_TRUE(b->AddExecutionStart(Start("ex_2")).ok());
  ASSERT_TRUE(a->AddExecutionStart(Start("ex_3")).ok());
  auto report = a->Verify();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->records, 3);
}

TEST_F(LedgerTest, GarbageFileIsReportedByName) {
  ASSERT_TRUE(WriteFileAtomic(path_, std::string(4096, 'z')).ok());
  auto l = Ledger::Open(path_, Redactor());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kCorruption);
  EXPECT_NE(l.status().message().find(path_), std::string::npos);
  auto ro = Ledger::OpenReadOnly(path_);
  ASSERT_FALSE(ro.ok());
  EXPECT_EQ(ro.status().code(), StatusCode::kCorruption);
}

TEST_F(LedgerTest, TruncatedFileIsAnErrorNotACrash) {
  {
    auto l = Open();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(l->AddExecutionStart(Start("ex_" + std::to_string(i))).ok());
  }
  // Fold the WAL into the main file, then cut the file in half.
  Tamper("PRAGMA wal_checkpoint(TRUNCATE)");
  auto content = ReadFileToString(path_);
  ASSERT_TRUE(content.ok());
  ASSERT_GT(content->size(), 8192u);
  ASSERT_EQ(truncate(path_.c_str(), static_cast<off_t>(content->size() / 2)), 0);
  auto ro = Ledger::OpenReadOnly(path_);
  Status s = ro.ok() ? (*ro)->ListExecutions(1000).status() : ro.status();
  if (s.ok()) s = (*ro)->Verify().status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path_), std::string::npos) << s.message();
}

TEST_F(LedgerTest, NotALedgerIsRefusedReadOnly) {
  Tamper("CREATE TABLE other (x)");
  auto ro = Ledger::OpenReadOnly(path_);
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("not an Odin ledger"), std::string::npos);
}

}  // namespace
}  // namespace odin
