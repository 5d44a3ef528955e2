// End-to-end tests of reading and checking the ledger: odin log, odin show,
// odin ledger verify, and what happens when the ledger file is damaged.

#include <dirent.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

// An anchor file's newest slot (coordinator/ledger_anchor.cc: two slots of
// 16 KiB, each "SHA256 JSON\n", the larger "n" the newer).
json ReadAnchor(const std::string& path) {
  std::string bytes = *ReadFileToString(path);
  json best;
  for (size_t offset : {size_t{0}, size_t{16384}}) {
    if (bytes.size() <= offset + 65) continue;
    std::string slot = bytes.substr(offset, bytes.find('\n', offset) - offset);
    json j = json::parse(slot.substr(65), nullptr, false);
    if (j.is_object() && (best.is_null() || j["n"] > best["n"])) best = j;
  }
  return best;
}

class OdinLedgerTest : public ::testing::Test {
 protected:
  Ran Odin(const std::vector<std::string>& args) { return RunOdin(ws_.path(), args); }
  std::string Db() { return ws_.Join(".odin/odin.db"); }
  int64_t Count(const std::string& sql) {
    sqlite3* db;
    sqlite3_stmt* st = nullptr;
    int64_t n = -1;
    if (sqlite3_open(Db().c_str(), &db) != SQLITE_OK) return -1;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }
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
      "UPDATE execution_ends SET exit_code = 0, status = 'ok' WHERE execution_id = '" +
      id + "'");
  Ran bad = Odin({"ledger", "verify"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("was altered: record 3 (execution_ends) " + id), std::string::npos) << bad.err;
}

// Security review 3, finding 10: neither the append-only triggers nor the
// schema version are covered by the chain, so changing them left every hash
// intact and verify said "ok".
TEST_F(OdinLedgerTest, Finding10VerifyReportsADroppedTriggerAndAChangedSchemaVersion) {
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  ASSERT_EQ(Odin({"ledger", "verify"}).exit_code, 0);
  Sql("DROP TRIGGER mutations_no_DELETE;");
  Ran dropped = Odin({"ledger", "verify"});
  EXPECT_EQ(dropped.exit_code, 1);
  EXPECT_NE(dropped.err.find("was altered: schema: the append-only trigger mutations_no_DELETE is missing"),
            std::string::npos)
      << dropped.err;
  // The next writer puts it right, and says so in the chain itself: verify
  // is clean again (no record was touched), and the repair is on record.
  Ran writer = Odin({"exec", "--", "true"});
  ASSERT_EQ(writer.exit_code, 0);
  EXPECT_NE(writer.err.find("its schema was changed behind Odin's back"), std::string::npos) << writer.err;
  ASSERT_EQ(Odin({"ledger", "verify"}).exit_code, 0) << Odin({"ledger", "verify"}).err;
  EXPECT_EQ(Count("SELECT count(*) FROM gate_events WHERE kind = 'ledger_schema_repaired' AND detail_json LIKE "
                  "'%mutations_no_DELETE%'"),
            1);
  // A trigger replaced by one that lets everything through.
  Sql("DROP TRIGGER sessions_no_UPDATE; CREATE TRIGGER sessions_no_UPDATE BEFORE UPDATE ON sessions BEGIN SELECT 1; "
      "END;");
  Ran replaced = Odin({"ledger", "verify"});
  EXPECT_EQ(replaced.exit_code, 1);
  EXPECT_NE(replaced.err.find("sessions_no_UPDATE is missing or changed"), std::string::npos) << replaced.err;
  Sql("DROP TRIGGER sessions_no_UPDATE;");
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  // The version changed: a version-6 ledger claiming to be version 5.
  Sql("DROP TRIGGER IF EXISTS meta_no_UPDATE; UPDATE meta SET value = '5' WHERE key = 'schema_version';");
  Ran version = Odin({"ledger", "verify"});
  EXPECT_EQ(version.exit_code, 1);
  EXPECT_NE(version.err.find("schema: meta.schema_version says 5, but the table conversation of version 6 is there"),
            std::string::npos)
      << version.err;
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
  MakeOdinStateDir(ws_.path());
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

// ---- records missing at the end: the anchor (finding 4) ----------------------------

// The review's reproduction: the triggers dropped, the newest start and end
// rows deleted with sqlite3. The chain alone is still valid.
TEST_F(OdinLedgerTest, DeletedNewestRecordsAreNamedAndNothingRunsOnTop) {
  ASSERT_EQ(Odin({"exec", "--", "echo", "one"}).exit_code, 0);
  ASSERT_EQ(Odin({"exec", "--", "echo", "two"}).exit_code, 0);
  Sql("DROP TRIGGER execution_starts_no_DELETE; DROP TRIGGER execution_ends_no_DELETE;"
      "DELETE FROM execution_ends WHERE seq = (SELECT MAX(seq) FROM execution_ends);"
      "DELETE FROM execution_starts WHERE seq = (SELECT MAX(seq) FROM execution_starts)");
  const std::string missing =
      "ledger " + Db() + ": ends at record 4 but the anchor says 6: the newest 2 records are missing";
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_EQ(verify.err.rfind("odin ledger verify: " + missing, 0), 0u) << verify.err;
  json j = json::parse(Odin({"ledger", "verify", "--json"}).out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_NE(j["problem"].get<std::string>().find("the newest 2 records are missing"), std::string::npos);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"log"}, {"show", "ex_"}}) {
    Ran r = Odin(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  }
  Ran e = Odin({"exec", "--", "touch", "ran"});
  EXPECT_EQ(e.exit_code, 125);
  EXPECT_NE(e.err.find(missing), std::string::npos) << e.err;
  EXPECT_FALSE(PathExists(ws_.Join("ran")));  // nothing runs unrecorded, nor on a shortened ledger
}

TEST_F(OdinLedgerTest, ALedgerTruncatedToNothingIsNeverCreatedAnew) {
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  ASSERT_EQ(truncate(Db().c_str(), 0), 0);
  unlink((Db() + "-wal").c_str());
  unlink((Db() + "-shm").c_str());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exec", "--", "touch", "ran"}, {"log"}, {"ledger", "verify"}, {"show", "ex_"}}) {
    Ran r = Odin(args);
    EXPECT_NE(r.exit_code, 0) << args[0];
    EXPECT_NE(r.err.find("is empty (truncated to 0 bytes) but the anchor says it held 3 records"), std::string::npos)
        << args[0] << ": " << r.err;
  }
  EXPECT_EQ(ReadFileToString(Db())->size(), 0u);
  EXPECT_FALSE(PathExists(ws_.Join("ran")));
}

TEST_F(OdinLedgerTest, ADeletedLedgerIsNeverCreatedAnew) {
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  RemoveTree(ws_.Join(".odin"));
  Ran log = Odin({"log"});
  EXPECT_EQ(log.exit_code, 1);  // not "no executions recorded yet"
  EXPECT_NE(log.err.find("is missing but the anchor says it held 3 records"), std::string::npos) << log.err;
  Ran e = Odin({"exec", "--", "true"});
  EXPECT_EQ(e.exit_code, 125);
  EXPECT_FALSE(PathExists(Db()));
}

TEST_F(OdinLedgerTest, ResetMovesTheOldLedgerAsideAndVerifyAcceptsTheNewChain) {
  ASSERT_EQ(Odin({"exec", "--", "echo", "old"}).exit_code, 0);
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  Sql("DROP TRIGGER execution_ends_no_DELETE; DELETE FROM execution_ends WHERE seq = 6");
  ASSERT_EQ(Odin({"ledger", "verify"}).exit_code, 1);
  Ran reset = Odin({"ledger", "reset", "--json"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  json r = json::parse(reset.out);
  EXPECT_EQ(r["generation"], 1);
  EXPECT_EQ(r["anchored_records"], 6);
  EXPECT_EQ(r["found_records"], 5);
  std::string moved = r["moved_to"];
  EXPECT_EQ(moved.rfind(Db() + ".reset-1-", 0), 0u) << moved;
  EXPECT_TRUE(PathExists(moved));                      // kept, never deleted
  EXPECT_EQ(Odin({"ledger", "verify"}).exit_code, 0);  // nothing recorded yet: fine
  ASSERT_EQ(Odin({"exec", "--", "echo", "new"}).exit_code, 0);
  Ran verify = Odin({"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_NE(verify.out.find("ledger ok: 3 records"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("after 1 reset; the last moved " + moved + " aside"), std::string::npos) << verify.out;
  // The anchor remembers the reset.
  std::string anchor = verify.out.substr(verify.out.find("anchor: record 3 (") + 18);
  anchor = anchor.substr(0, anchor.find(')'));
  json a = ReadAnchor(anchor);
  EXPECT_EQ(a["ledger"], Db());
  EXPECT_EQ(a["generation"], 1);
  ASSERT_EQ(a["resets"].size(), 1u);
  EXPECT_EQ(a["resets"][0]["anchored_seq"], 6);
  EXPECT_EQ(a["resets"][0]["moved_to"], moved);
}

TEST_F(OdinLedgerTest, TheAnchorIsInTheStateDirectoryNotTheRealHome) {
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  std::string dir = UserDir("XDG_STATE_HOME") + "/odin/ledgers";
  bool found = false;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 7 || name.substr(name.size() - 7) != ".anchor") continue;
    json a = ReadAnchor(dir + "/" + name);
    if (a.is_object() && a["ledger"] == Db()) {
      found = true;
      EXPECT_EQ(a["seq"], 3);
    }
  }
  closedir(d);
  EXPECT_TRUE(found);
  const char* home = getenv("HOME");
  if (home != nullptr) {
    std::string real = std::string(home) + "/.local/state/odin/ledgers";
    DIR* h = opendir(real.c_str());
    while (h != nullptr) {
      dirent* e = readdir(h);
      if (e == nullptr) break;
      StatusOr<std::string> text = ReadFileToString(real + "/" + e->d_name);
      EXPECT_FALSE(text.ok() && text->find(ws_.path()) != std::string::npos) << "the test wrote into " << real;
    }
    if (h != nullptr) closedir(h);
  }
}

// ---- reading a read-only workspace (finding 9) ----------------------------------

bool BwrapWorks() {
  static const bool works = system("bwrap --ro-bind / / --unshare-pid --unshare-net true >/dev/null 2>&1") == 0;
  return works;
}

TEST_F(OdinLedgerTest, AReadOnlyWorkspaceCanBeReadAndVerified) {
  if (!BwrapWorks()) GTEST_SKIP() << "bubblewrap cannot run here to make the workspace read-only";
  ASSERT_EQ(Odin({"exec", "--", "echo", "hello"}).exit_code, 0);
  // The ledger's files as the writer left them (it keeps its WAL).
  auto files = [this] {
    std::string listing;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      struct stat st;
      if (stat((Db() + suffix).c_str(), &st) != 0) continue;
      listing += std::string(suffix) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
                 "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
    }
    return listing;
  };
  std::string before = files();
  // Root ignores permission bits: a read-only bind mount around odin itself.
  std::vector<std::string> ro = {"/usr/bin/bwrap", "--bind",   "/",       "/",       "--ro-bind",
                                 ws_.path(),       ws_.path(), "--chdir", ws_.path()};
  Ran log = RunOdinWrapped(ro, ws_.path(), {"log", "--json"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  json rows = json::parse(log.out);
  ASSERT_EQ(rows.size(), 1u);
  Ran show = RunOdinWrapped(ro, ws_.path(), {"show", rows[0]["execution_id"]});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("hello"), std::string::npos);
  Ran verify = RunOdinWrapped(ro, ws_.path(), {"ledger", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_NE(verify.out.find("ledger ok: 3 records"), std::string::npos) << verify.out;
  // Nothing was written there: no file left or changed by the readers.
  EXPECT_EQ(files(), before);
}

// ---- what a command prints does not drive the terminal (finding 9) -----------------

TEST_F(OdinLedgerTest, ShowAndLogMakeControlCharactersVisible) {
  const std::string forged =
      "\x1b[2J\x1b]0;pwned\x07"
      "ok\r\xe2\x80\xae"
      "gnp.exe";
  const std::string printed = forged + std::string("\0tail\n", 6);
  ASSERT_EQ(Odin({"exec", "--", "printf", "%s\\0tail\\n", forged}).exit_code, 0);
  Ran log = Odin({"log"});
  ASSERT_EQ(log.exit_code, 0);
  EXPECT_EQ(log.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(log.out.find('\r'), std::string::npos);
  EXPECT_NE(log.out.find("\\x1b[2J\\x1b]0;pwned\\x07ok\\r\\u202egnp.exe"), std::string::npos) << log.out;
  std::string id = json::parse(Odin({"log", "--json"}).out)[0]["execution_id"];
  Ran show = Odin({"show", id});
  ASSERT_EQ(show.exit_code, 0);
  EXPECT_EQ(show.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(show.out.find('\0'), std::string::npos);
  EXPECT_EQ(show.out.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(show.out.find("\\x1b[2J\\x1b]0;pwned\\x07ok\\r\\u202egnp.exe\\0tail\n"), std::string::npos) << show.out;
  // JSON escapes them (and what JSON would allow raw).
  Ran as_json = Odin({"show", "--json", id});
  EXPECT_EQ(as_json.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(as_json.out.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(as_json.out.find("\\u001b[2J"), std::string::npos) << as_json.out;
  EXPECT_NE(as_json.out.find("\\u202e"), std::string::npos) << as_json.out;
  EXPECT_EQ(json::parse(as_json.out)["output_head"], printed);
  // --output into a pipe stays the raw bytes.
  EXPECT_EQ(Odin({"show", "--output", id}).out, printed);
}

// ---- credentials in URLs (finding 9) -----------------------------------------------

TEST_F(OdinLedgerTest, UrlPasswordsNeitherReachTheCommandNorTheLedger) {
  const std::map<std::string, std::string> env = {
      {"DATABASE_URL", "postgres://app:correct-horse-battery@db:5432/prod"}};
  Ran r =
      RunOdin(ws_.path(),
              {"exec", "--", "sh", "-c", "echo db=${DATABASE_URL:-unset}; echo postgres://app:s3cret-pw@db/x"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("db=unset"), std::string::npos) << r.out;
  Ran a = RunOdin(ws_.path(), {"exec", "--", "echo", "mysql://root:hunter22@localhost"}, env);
  ASSERT_EQ(a.exit_code, 0);
  json rows = json::parse(Odin({"log", "--json"}).out);
  EXPECT_EQ(rows[1]["output_head"], "db=unset\npostgres://app:[REDACTED]@db/x\n");
  EXPECT_EQ(rows[0]["arguments"]["argv"][1], "mysql://root:[REDACTED]@localhost");
  EXPECT_EQ(rows[0]["output_head"], "mysql://root:[REDACTED]@localhost\n");
  Sql("PRAGMA wal_checkpoint(TRUNCATE)");
  std::string all = *ReadFileToString(Db());
  for (const char* secret : {"s3cret-pw", "hunter22", "correct-horse-battery"}) {
    EXPECT_EQ(all.find(secret), std::string::npos) << secret;
  }
}

}  // namespace
}  // namespace odin::testing
