#include "ledger/ledger.h"

#include "ledger/forks.h"

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
    options_.anchor_dir = dir_ + "/state/odin/ledgers";
  }
  void TearDown() override { RemoveTree(dir_); }

  std::unique_ptr<Ledger> Open(Redactor r = Redactor()) {
    auto l = Ledger::Open(path_, std::move(r), options_);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? std::move(*l) : nullptr;
  }
  StatusOr<std::unique_ptr<Ledger>> OpenReadOnly(bool allow_short = false) {
    LedgerOptions o = options_;
    o.allow_short = allow_short;
    return Ledger::OpenReadOnly(path_, o);
  }
  std::optional<AnchorState> Anchor() { return *LedgerAnchor(options_.anchor_dir, path_).Read(); }
  // n calls' starts, in a ledger closed afterwards.
  void Record(int n) {
    auto l = Open();
    for (int i = 0; i < n; ++i) ASSERT_TRUE(l->AddExecutionStart(Start("ex_" + std::to_string(i))).ok());
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
  LedgerOptions options_;
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

TEST_F(LedgerTest, ListsTheCallsOfOneToolOldestFirst) {
  auto l = Open();
  for (const char* id : {"ex_1", "ex_2", "ex_3"}) {
    ExecutionStart s = Start(id);
    if (std::string(id) != "ex_2") s.tool = "Undo";
    ASSERT_TRUE(l->AddExecutionStart(s).ok());
  }
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_3"), {}).ok());
  auto rows = l->ListToolExecutions("Undo");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].start.execution_id, "ex_1");
  EXPECT_FALSE((*rows)[0].end.has_value());
  EXPECT_EQ((*rows)[1].start.execution_id, "ex_3");
  EXPECT_TRUE((*rows)[1].end.has_value());
  EXPECT_TRUE(l->ListToolExecutions("Read")->empty());
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
  LlmCallRecord c{"llm_1", "ses_1", "main", "planner", "openai", "m", 2, 1500, 100, 20, 0, 0, 1234, "ok", 1, ""};
  ASSERT_TRUE(l->AddLlmCall(c).ok());
  c.id = "llm_2";
  c.input_tokens = 50;
  c.cache_read_tokens = 30;
  c.cache_write_tokens = 5;
  ASSERT_TRUE(l->AddLlmCall(c).ok());
  // A model without a price: its cost is unknown, counted apart, not as 0.
  c.id = "llm_3";
  c.cost_microusd = -1;
  c.cache_read_tokens = 10;
  c.cache_write_tokens = 0;
  ASSERT_TRUE(l->AddLlmCall(c).ok());
  auto usage = l->UsageOf("ses_1");
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->llm_calls, 3);
  EXPECT_EQ(usage->input_tokens, 200);
  EXPECT_EQ(usage->output_tokens, 60);
  EXPECT_EQ(usage->cache_read_tokens, 40);
  EXPECT_EQ(usage->cache_write_tokens, 5);
  EXPECT_EQ(usage->cost_microusd, 2468);
  EXPECT_EQ(usage->unpriced_calls, 1);
  // Records: the message, three calls, and two calls' cache counts.
  EXPECT_EQ(l->Verify()->records, 6);
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

TEST_F(LedgerTest, AnIndexDroppedBehindOdinsBackIsMadeAgainAtTheNextOpen) {
  Record(2);
  // An intact ledger of this version is opened without its schema's
  // statements; one that lost an index is not intact.
  Tamper("DROP INDEX execution_starts_id");
  Record(1);
  sqlite3* db;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'execution_starts_id'", -1, &st,
                     nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_NE(
      std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))).find("execution_starts(execution_id)"),
      std::string::npos);
  sqlite3_finalize(st);
  sqlite3_close(db);
  auto ro = OpenReadOnly();
  ASSERT_TRUE(ro.ok());
  EXPECT_TRUE((*ro)->Verify()->ok);
}

TEST_F(LedgerTest, VerifyNamesTheFirstEditedRow) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a", 1), {}).ok());
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_b")).ok());
  l.reset();
  // Someone drops the guard and rewrites history: exit code 1 becomes 0.
  Tamper("DROP TRIGGER execution_ends_no_UPDATE; UPDATE execution_ends SET exit_code = 0, status = 'ok'");
  auto ro = OpenReadOnly();
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
  auto report = (*OpenReadOnly())->Verify();
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
  auto l = Ledger::Open(path_, Redactor(), options_);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kCorruption);
  EXPECT_NE(l.status().message().find(path_), std::string::npos);
  auto ro = OpenReadOnly();
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
  auto ro = OpenReadOnly();
  Status s = ro.ok() ? (*ro)->ListExecutions(1000).status() : ro.status();
  if (s.ok()) s = (*ro)->Verify().status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path_), std::string::npos) << s.message();
}

TEST_F(LedgerTest, NotALedgerIsRefusedReadOnly) {
  Tamper("CREATE TABLE other (x)");
  auto ro = OpenReadOnly();
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("not an Odin ledger"), std::string::npos);
}

// ---- the anchor: records missing at the end --------------------------------------

TEST_F(LedgerTest, EachCommitMovesTheAnchorToTheNewestRecord) {
  auto l = Open();
  EXPECT_FALSE(Anchor().has_value());  // nothing recorded, nothing anchored
  ASSERT_TRUE(l->AddSession({"ses_1", "exec", "/ws", 999}).ok());
  ASSERT_EQ(Anchor()->seq, 1);
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  ASSERT_TRUE(l->AddExecutionEnd(End("ex_a"), {{"art_1", "ex_a", "output", "abc", 3, false, ""}}).ok());
  EXPECT_EQ(Anchor()->seq, 4);
  EXPECT_EQ(Anchor()->ledger, path_);
  auto report = l->Verify();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_NE(report->anchor.find("record 4"), std::string::npos) << report->anchor;
}

TEST_F(LedgerTest, DeletedNewestRecordsAreNamedAndTheLedgerIsNotExtended) {
  Record(5);
  // Behind the ledger's back: the guard dropped, the newest two records gone.
  Tamper("DROP TRIGGER execution_starts_no_DELETE; DELETE FROM execution_starts WHERE seq > 3");
  const std::string expected = "ends at record 3 but the anchor says 5: the newest 2 records are missing";
  auto ro = OpenReadOnly();
  ASSERT_FALSE(ro.ok());
  EXPECT_EQ(ro.status().code(), StatusCode::kCorruption);
  EXPECT_NE(ro.status().message().find(expected), std::string::npos) << ro.status().message();
  EXPECT_NE(ro.status().message().find(options_.anchor_dir), std::string::npos) << ro.status().message();
  // Verify opens it anyway, to report it.
  auto verifiable = OpenReadOnly(/*allow_short=*/true);
  ASSERT_TRUE(verifiable.ok()) << verifiable.status().ToString();
  auto report = (*verifiable)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok);
  EXPECT_TRUE(report->short_of_anchor);
  EXPECT_NE(report->problem.find("the newest 2 records are missing"), std::string::npos) << report->problem;
  // A writer refuses it rather than write records 4 and 5 again.
  auto w = Ledger::Open(path_, Redactor(), options_);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find(expected), std::string::npos);
  EXPECT_EQ(Anchor()->seq, 5);
}

TEST_F(LedgerTest, ARewrittenTailIsNotTheAnchoredOne) {
  Record(3);
  // The last record replaced by another with a valid-looking chain position.
  Tamper("DROP TRIGGER execution_starts_no_DELETE; DELETE FROM execution_starts WHERE seq = 3");
  {
    LedgerOptions unanchored = options_;
    unanchored.anchored = false;
    auto l = Ledger::Open(path_, Redactor(), unanchored);
    ASSERT_TRUE(l.ok());
    ASSERT_TRUE((*l)->AddExecutionStart(Start("ex_forged")).ok());
  }
  auto ro = OpenReadOnly();
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("record 3 is not the one the anchor"), std::string::npos)
      << ro.status().message();
}

TEST_F(LedgerTest, ALedgerTruncatedToNothingIsNotCreatedAnew) {
  Record(4);
  ASSERT_EQ(truncate(path_.c_str(), 0), 0);
  unlink((path_ + "-wal").c_str());
  unlink((path_ + "-shm").c_str());
  auto w = Ledger::Open(path_, Redactor(), options_);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kCorruption);
  EXPECT_NE(w.status().message().find("is empty (truncated to 0 bytes) but the anchor"), std::string::npos)
      << w.status().message();
  EXPECT_NE(w.status().message().find("says it held 4 records"), std::string::npos);
  EXPECT_EQ(ReadFileToString(path_)->size(), 0u);
  EXPECT_FALSE(OpenReadOnly().ok());
}

TEST_F(LedgerTest, AMissingLedgerIsNotCreatedAnew) {
  Record(2);
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path_ + suffix).c_str());
  auto w = Ledger::Open(path_, Redactor(), options_);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("is missing but the anchor"), std::string::npos) << w.status().message();
  EXPECT_FALSE(PathExists(path_));
  auto ro = OpenReadOnly();
  EXPECT_EQ(ro.status().code(), StatusCode::kCorruption);  // not "no ledger yet"
}

TEST_F(LedgerTest, ALedgerFromBeforeAnchorsIsAnchoredAtItsHead) {
  {
    LedgerOptions unanchored = options_;
    unanchored.anchored = false;
    auto l = Ledger::Open(path_, Redactor(), unanchored);
    for (const char* id : {"ex_a", "ex_b", "ex_c"}) ASSERT_TRUE((*l)->AddExecutionStart(Start(id)).ok());
  }
  EXPECT_FALSE(Anchor().has_value());
  auto ro = OpenReadOnly();  // reading anchors nothing
  ASSERT_TRUE(ro.ok());
  EXPECT_NE((*ro)->Verify()->anchor.find("none yet"), std::string::npos);
  EXPECT_FALSE(Anchor().has_value());
  Open();
  EXPECT_EQ(Anchor()->seq, 3);
}

TEST_F(LedgerTest, ResetMovesTheLedgerAsideAndStartsANewChain) {
  Record(3);
  auto reset = Ledger::Reset(path_, 1700000000000, options_);
  ASSERT_TRUE(reset.ok()) << reset.status().ToString();
  EXPECT_EQ(reset->generation, 1);
  EXPECT_EQ(reset->anchored_seq, 3);
  EXPECT_EQ(reset->found_seq, 3);
  EXPECT_EQ(reset->moved_to, path_ + ".reset-1-20231114T221320Z");
  EXPECT_FALSE(PathExists(path_));
  // The old chain is kept whole, WAL folded in.
  {
    LedgerOptions unanchored = options_;
    unanchored.anchored = false;
    auto old = Ledger::OpenReadOnly(reset->moved_to, unanchored);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ((*old)->Verify()->records, 3);
  }
  EXPECT_FALSE(PathExists(reset->moved_to + "-wal"));
  // No ledger now is no error, and the next one starts at record 1.
  EXPECT_EQ(OpenReadOnly().status().code(), StatusCode::kNotFound);
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_new")).ok());
  auto report = l->Verify();
  EXPECT_TRUE(report->ok) << report->problem;
  EXPECT_EQ(report->records, 1);
  EXPECT_NE(report->anchor.find("after 1 reset"), std::string::npos) << report->anchor;
  std::optional<AnchorState> a = Anchor();
  EXPECT_EQ(a->generation, 1);
  EXPECT_EQ(a->seq, 1);
  ASSERT_EQ(a->resets.size(), 1u);
  EXPECT_EQ(a->resets[0].moved_to, reset->moved_to);
  EXPECT_EQ(a->resets[0].at_ms, 1700000000000);
}

TEST_F(LedgerTest, ResetAlsoClearsTheWayAfterAMissingLedger) {
  Record(2);
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path_ + suffix).c_str());
  ASSERT_FALSE(Ledger::Open(path_, Redactor(), options_).ok());
  auto reset = Ledger::Reset(path_, 1, options_);
  ASSERT_TRUE(reset.ok()) << reset.status().ToString();
  EXPECT_EQ(reset->moved_to, "");
  EXPECT_EQ(reset->anchored_seq, 2);
  EXPECT_NE(Open(), nullptr);
}

TEST_F(LedgerTest, ResetRefusesALedgerInUse) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  auto reset = Ledger::Reset(path_, 1, options_);
  ASSERT_FALSE(reset.ok());
  EXPECT_EQ(reset.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reset.status().message().find("in use"), std::string::npos) << reset.status().message();
  EXPECT_TRUE(PathExists(path_));
  EXPECT_EQ(Anchor()->generation, 0);
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_b")).ok());
}

TEST_F(LedgerTest, AWriterOpenedBeforeAResetCannotMoveTheNewAnchor) {
  auto l = Open();
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  // A reset that raced past the in-use check (its anchor half, simulated).
  ASSERT_TRUE(LedgerAnchor(options_.anchor_dir, path_)
                  .Update([](const std::optional<AnchorState>& now) -> StatusOr<std::optional<AnchorState>> {
                    AnchorState next = *now;
                    next.generation = 1;
                    next.seq = 0;
                    next.hash.clear();
                    return std::optional<AnchorState>(next);
                  })
                  .ok());
  Status s = l->AddExecutionStart(Start("ex_b"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("was reset"), std::string::npos) << s.message();
  EXPECT_EQ(Anchor()->seq, 0);
}

TEST_F(LedgerTest, WithoutAnAnchorDirectoryTheLedgerSaysSo) {
  options_.anchor_dir = "/proc/odin-cannot-create-this";
  auto l = Open();
  ASSERT_NE(l, nullptr);
  ASSERT_TRUE(l->AddExecutionStart(Start("ex_a")).ok());
  EXPECT_NE(l->anchor_note().find("not kept"), std::string::npos);
  EXPECT_NE(l->Verify()->anchor.find("not kept"), std::string::npos) << l->Verify()->anchor;
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

// A fork's first record says what it was copied from; nothing else reads
// as one.
TEST(ForkRecordTest, ReadsBackWhatItWrote) {
  GateEvent e = ForkRecord("ses_fork", {"ses_orig", 1234});
  EXPECT_EQ(e.session_id, "ses_fork");
  std::optional<ForkOrigin> o = ForkOriginIn(e);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->session_id, "ses_orig");
  EXPECT_EQ(o->at_ms, 1234);
  e.kind = "compaction";
  EXPECT_FALSE(ForkOriginIn(e).has_value());
  e.kind = kForkRecordKind;
  e.detail_json = R"({"from_session": 5})";
  EXPECT_FALSE(ForkOriginIn(e).has_value());
}

}  // namespace
}  // namespace odin
