// End-to-end tests of reading and checking the ledger: odin log, odin show,
// odin ledger verify, and what happens when the ledger file is damaged.

#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinLedgerTest : public ::testing::Test {
 protected:
  Ran Odin(const std::vector<std::string>& args) { return RunOdin(ws_.path(), args); }
  std::string Db() { return ws_.Join(".odin/odin.db"); }
  void Sql(const std::string& sql) {
    sqlite3* db;
    ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_close(db);
  }
  TempWorkspace ws_;
};

TEST_F(OdinLedgerTest, LogListsNewestFirst) {
  ASSERT_EQ(Odin({"exec", "--", "echo", "first"}).exit_code, 0);
  ASSERT_EQ(Odin({"exec", "--", "sh", "-c", "exit 3"}).exit_code, 3);
  Ran r = Odin({"log"});
  ASSERT_EQ(r.exit_code, 0);
  size_t second = r.out.find("sh -c exit 3");
  size_t first = r.out.find("echo first");
  ASSERT_NE(second, std::string::npos) << r.out;
  ASSERT_NE(first, std::string::npos);
  EXPECT_LT(second, first);
  json j = json::parse(Odin({"log", "--json", "--limit", "1"}).out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["exit_code"], 3);
}

TEST_F(OdinLedgerTest, LogOfAFreshWorkspaceIsEmptyAndWritesNothing) {
  Ran r = Odin({"log"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(PathExists(ws_.Join(".odin")));
  EXPECT_EQ(Odin({"log", "--json"}).out, "[]\n");
}

TEST_F(OdinLedgerTest, ShowGivesTheExecutionAndItsArtifacts) {
  Ran e = Odin({"exec", "--json", "--", "seq", "1", "100000"});
  std::string id = json::parse(e.out)["execution_id"];
  Ran r = Odin({"show", id.substr(0, 8)});  // a unique prefix is enough
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("execution  " + id), std::string::npos);
  EXPECT_NE(r.out.find("status     ok"), std::string::npos);
  EXPECT_NE(r.out.find("artifacts"), std::string::npos);
  Ran full = Odin({"show", "--output", id});
  std::string expected;
  for (int i = 1; i <= 100000; ++i) expected += std::to_string(i) + "\n";
  EXPECT_EQ(full.out, expected);
}

TEST_F(OdinLedgerTest, ShowOfUnknownIdIsAnError) {
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  Ran r = Odin({"show", "ex_000000000000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "odin show: execution ex_000000000000: no such execution in the ledger\n");
}

TEST_F(OdinLedgerTest, VerifyPassesThenNamesAnEditedRow) {
  ASSERT_EQ(Odin({"exec", "--", "sh", "-c", "exit 1"}).exit_code, 1);
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  Ran ok = Odin({"ledger", "verify"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_NE(ok.out.find("ledger ok: 6 records"), std::string::npos) << ok.out;

  std::string id = json::parse(Odin({"log", "--json"}).out)[1]["execution_id"];
  // Rewrite history: the failed command "succeeded".
  Sql("DROP TRIGGER execution_ends_no_UPDATE;"
      "UPDATE execution_ends SET exit_code = 0, status = 'ok' WHERE execution_id = '" + id + "'");
  Ran bad = Odin({"ledger", "verify"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("was altered: record 3 (execution_ends) " + id), std::string::npos) << bad.err;
}

TEST_F(OdinLedgerTest, ConcurrentOdinProcessesKeepOneChain) {
  std::vector<std::pair<pid_t, int>> running;
  for (int i = 0; i < 6; ++i) {
    int out;
    pid_t pid = StartOdin(ws_.path(), {"exec", "--", "echo", std::to_string(i)}, &out);
    running.push_back({pid, out});
  }
  for (auto [pid, out] : running) {
    ReadUntil(out, "\n");
    close(out);
    EXPECT_EQ(Wait(pid), 0);
  }
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  // Six sessions, six starts, six ends.
  EXPECT_NE(verify.out.find("ledger ok: 18 records"), std::string::npos) << verify.out;
}

TEST_F(OdinLedgerTest, GarbageLedgerGivesAClearErrorNamingTheFile) {
  ASSERT_TRUE(MakeDirs(ws_.Join(".odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(Db(), std::string(8192, '\x5a')).ok());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"log"}, {"ledger", "verify"}, {"show", "ex_1"}}) {
    Ran r = Odin(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find("ledger " + Db()), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  }
  Ran e = Odin({"exec", "--", "touch", "ran"});
  EXPECT_EQ(e.exit_code, 125);
  EXPECT_NE(e.err.find("ledger " + Db()), std::string::npos) << e.err;
  EXPECT_FALSE(PathExists(ws_.Join("ran")));  // nothing runs unrecorded
}

TEST_F(OdinLedgerTest, TruncatedLedgerGivesAClearError) {
  for (int i = 0; i < 30; ++i) ASSERT_EQ(Odin({"exec", "--", "seq", "1", "20000"}).exit_code, 0);
  Sql("PRAGMA wal_checkpoint(TRUNCATE)");
  auto size = ReadFileToString(Db())->size();
  ASSERT_EQ(truncate(Db().c_str(), static_cast<off_t>(size / 3)), 0);
  Ran log = Odin({"log", "--limit", "1000"});
  Ran verify = Odin({"ledger", "verify"});
  // Either command may be the first to trip over the damage; neither crashes,
  // and whichever reports names the file.
  EXPECT_TRUE(log.exit_code == 1 || verify.exit_code == 1) << log.out << verify.out;
  EXPECT_NE(log.exit_code, 139);
  EXPECT_NE(verify.exit_code, 139);
  std::string errs = log.err + verify.err;
  EXPECT_NE(errs.find(Db()), std::string::npos) << errs;
}

}  // namespace
}  // namespace odin::testing
