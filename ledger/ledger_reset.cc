// odin ledger reset: the ledger moves aside (never deleted) and its anchor
// starts a new generation, recording what it had vouched for.
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <sqlite3.h>

#include "base/file_util.h"
#include "ledger/ledger.h"
#include "ledger/ledger_internal.h"
#include "workspace/workspace_files.h"

namespace odin {

using namespace ledger_internal;

namespace {

std::string UtcStamp(int64_t ms) {
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// Moves the ledger at path (and any -wal, -shm, -journal beside it) aside to
// path.reset-GENERATION-TIME, after making sure no other connection has it
// open: switching it out of WAL mode needs exclusive access, and folds the WAL
// into the file. A file that is not a database is moved as it is.
Status MoveAside(const std::string& path, int64_t generation, int64_t now_ms, int64_t* found_seq,
                 std::string* moved_to) {
  struct stat st;
  *found_seq = 0;
  moved_to->clear();
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return PosixError("ledger " + path, errno);
  }
  auto in_use = [&path] {
    return Status::Unavailable("ledger " + path,
                               "is in use by another odin process (a session, odin -p or odin serve); "
                               "end it and reset again");
  };
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  struct Closer {
    sqlite3* db;
    ~Closer() { sqlite3_close_v2(db); }
  } closer{db};
  *found_seq = -1;
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    std::string mode;
    rc = sqlite3_exec(
        db, "PRAGMA journal_mode=DELETE",
        [](void* out, int, char** values, char**) {
          *static_cast<std::string*>(out) = values[0] ? values[0] : "";
          return 0;
        },
        &mode, nullptr);
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED || (rc == SQLITE_OK && mode != "delete")) {
      return in_use();
    }
    if (rc == SQLITE_OK) {
      rc = sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr);
      if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) return in_use();
    }
    if (rc == SQLITE_OK) {
      *found_seq = 0;
      for (const std::string& table : ChainedTables()) {
        Stmt q;
        std::string sql = "SELECT MAX(seq) FROM " + table;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q.st, nullptr) == SQLITE_OK && sqlite3_step(q.st) == SQLITE_ROW) {
          *found_seq = std::max<int64_t>(*found_seq, sqlite3_column_int64(q.st, 0));
        }
      }
    }
  }
  // In Odin's state directory: through the safe file layer.
  ASSIGN_OR_RETURN(WorkspaceFiles dir, WorkspaceFiles::Open(DirName(path)));
  std::string name = path.substr(path.rfind('/') + 1);
  std::string target = name + ".reset-" + std::to_string(generation) + "-" + UtcStamp(now_ms);
  for (int n = 2; dir.Look(target).exists(); ++n) {
    target = name + ".reset-" + std::to_string(generation) + "-" + UtcStamp(now_ms) + "." + std::to_string(n);
  }
  if (Status moved = dir.Rename(name, target, /*no_replace=*/true); !moved.ok()) {
    return moved.WithContext("cannot move ledger " + path + " aside");
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    if (dir.Look(name + suffix).exists()) (void)dir.Rename(name + suffix, target + suffix, /*no_replace=*/true);
  }
  *moved_to = dir.Absolute(target);
  return Status::OK();
}

}  // namespace

StatusOr<LedgerResetReport> Ledger::Reset(const std::string& path_in, int64_t now_ms, const LedgerOptions& options) {
  const std::string path = AbsolutePath(path_in);
  std::string note;
  std::unique_ptr<LedgerAnchor> anchor = AnchorFor(path, options, &note);
  if (anchor == nullptr) return Status::FailedPrecondition("ledger " + path, "cannot be reset: its anchor is " + note);
  LedgerResetReport report;
  report.anchor_path = anchor->path();
  RETURN_IF_ERROR(anchor->Update([&](const std::optional<AnchorState>& now) -> StatusOr<std::optional<AnchorState>> {
    AnchorState next = now ? *now : AnchorState();
    next.ledger = path;
    AnchorReset r;
    r.at_ms = now_ms;
    r.anchored_seq = next.seq;
    r.anchored_hash = next.hash;
    // Moved before the anchor changes: a crash in between leaves a missing
    // ledger the old anchor still complains about, and a second reset.
    RETURN_IF_ERROR(MoveAside(path, next.generation + 1, now_ms, &r.found_seq, &r.moved_to));
    next.generation += 1;
    next.seq = 0;
    next.hash.clear();
    next.resets.push_back(r);
    report.generation = next.generation;
    report.anchored_seq = r.anchored_seq;
    report.found_seq = r.found_seq;
    report.moved_to = r.moved_to;
    return std::optional<AnchorState>(std::move(next));
  }));
  return report;
}

}  // namespace odin
