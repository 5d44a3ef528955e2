#include "ledger/ledger.h"

// Long file: the hash chain's writer, from opening (schema, upgrade, anchor)
// to each record appended. The encoding it shares with the verifiers is in
// ledger_schema.cc, the verifiers in ledger_verify.cc, readers in
// ledger_queries.cc, reset in ledger_reset.cc.

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/sha256.h"
#include "ledger/ledger_internal.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

using namespace ledger_internal;

constexpr const char kStartOver[] = "odin ledger reset moves it aside and starts a new chain";

// A ledger its anchor says holds records must be there and not empty.
Status CheckPresent(const std::string& path, const AnchorState& a, const std::string& anchor_path) {
  struct stat st;
  std::string claim = "the anchor says it held " + Plural(a.seq, "record", "records");
  std::string where = " (anchor: " + anchor_path + ")";
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) return PosixError("ledger " + path, errno);
    return Status::Corruption("ledger " + path, "is missing but " + claim +
                                                    ": it was deleted or moved; restore it, or start over with "
                                                    "odin ledger reset" +
                                                    where);
  }
  if (st.st_size == 0) {
    return Status::Corruption("ledger " + path,
                              "is empty (truncated to 0 bytes) but " + claim + "; " + kStartOver + where);
  }
  return Status::OK();
}

}  // namespace

std::vector<std::string> ledger_internal::ChainedTables() {
  std::vector<std::string> names;
  for (const TableDef& t : Tables()) names.push_back(t.name);
  return names;
}

Ledger::Ledger(sqlite3* db, std::string path, Redactor redactor)
    : db_(db), path_(std::move(path)), redactor_(std::move(redactor)) {}

Ledger::~Ledger() {
  for (auto& [sql, st] : statements_) sqlite3_finalize(st);
  // The WAL stays (see Open); its committed frames reach the disk here, so
  // a clean exit is as durable as the checkpoint on close made it.
  Flush();
  sqlite3_close_v2(db_);
}

void Ledger::Flush() {
  if (!writer_ || !unflushed_) return;
  unflushed_ = false;
  // The ledger lives in Odin's state directory: through the safe file
  // layer (no symlink followed, not a file of more than one link).
  StatusOr<WorkspaceFiles> dir = WorkspaceFiles::Open(DirName(path_));
  std::string wal = path_.substr(path_.rfind('/') + 1) + "-wal";
  if (!dir.ok() || !dir->Look(wal).is_file()) return;
  StatusOr<UniqueFd> fd = dir->OpenAppend(wal);
  if (fd.ok()) fdatasync(fd->get());
}

sqlite3_stmt* Ledger::Cached(const std::string& sql, int* rc) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    sqlite3_reset(it->second);
    sqlite3_clear_bindings(it->second);
    *rc = SQLITE_OK;
    return it->second;
  }
  sqlite3_stmt* st = nullptr;
  *rc = sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr);
  if (*rc != SQLITE_OK) return nullptr;
  statements_[sql] = st;
  return st;
}

Status Ledger::Run(const char* sql) {
  int rc;
  sqlite3_stmt* st = Cached(sql, &rc);
  if (st == nullptr) return SqliteError(sql, rc);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqliteError(sql, rc);
  return Status::OK();
}

// The one place SQLite errors become Status.
Status Ledger::SqliteError(const std::string& context, int rc) const {
  std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string where = "ledger " + path_ + ": " + context;
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT: return Status::Corruption(where, detail);
    case SQLITE_CANTOPEN:
    case SQLITE_NOTFOUND: return Status::NotFound(where, detail);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return Status::PermissionDenied(where, detail);
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Status::Unavailable(where, detail);
    case SQLITE_FULL:
    case SQLITE_NOMEM: return Status::ResourceExhausted(where, detail);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH: return Status::InvalidArgument(where, detail);
    default: return Status::IOError(where, detail);
  }
}

// The ledger's indexes: name, and what each indexes.
constexpr std::pair<const char*, const char*> kIndexes[] = {
    {"execution_starts_id", "execution_starts(execution_id)"},
    {"execution_ends_id", "execution_ends(execution_id)"},
    {"artifacts_execution", "artifacts(execution_id)"},
    {"messages_session", "messages(session_id)"},
    {"llm_calls_session", "llm_calls(session_id)"},
    {"execution_starts_session", "execution_starts(session_id)"},
    {"validations_session", "validations(session_id)"},
    {"diagnostics_execution", "diagnostics(execution_id)"},
    {"gate_events_session", "gate_events(session_id)"},
    {"mutations_session", "mutations(session_id)"},
    {"mutations_execution", "mutations(execution_id)"},
    {"artifacts_sha256", "artifacts(sha256)"},
    {"conversation_session", "conversation(session_id, agent_id)"},
    {"llm_cache_call", "llm_cache(call_id)"},
};

Status Ledger::Exec(const std::string& sql) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(sql.substr(0, sql.find_first_of(" (")), rc);
  return Status::OK();
}

StatusOr<std::unique_ptr<Ledger>> Ledger::Open(const std::string& path_in, Redactor redactor,
                                               const LedgerOptions& options) {
  const std::string path = AbsolutePath(path_in);
  std::string note;
  std::unique_ptr<LedgerAnchor> anchor = AnchorFor(path, options, &note);
  // The anchor first: whatever it says was committed before the ledger is read.
  std::optional<AnchorState> state;
  if (anchor != nullptr) {
    ASSIGN_OR_RETURN(state, anchor->Read());
    if (state && state->seq > 0) RETURN_IF_ERROR(CheckPresent(path, *state, anchor->path()));
    if (Status s = anchor->Prepare(); !s.ok()) {
      note = "not kept: " + s.message();
      spdlog::warn("ledger {}: its anchor is {}; records missing at its end will go unnoticed", path, note);
    }
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<Ledger> ledger(new Ledger(db, path, std::move(redactor)));
  if (rc != SQLITE_OK) return ledger->SqliteError("open", rc);
  // No checkpoint when the last connection closes: by default SQLite then
  // copies the WAL into the database and deletes it (three syncs and two
  // unlinks, ~12 ms on a VM's disk, on the way out of every odin process),
  // and the next process's first commit creates it again (two more syncs).
  // The WAL stays, flushed once on close (~Ledger); the next open replays it,
  // and the auto-checkpoint still folds it in every ~1000 pages.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  ledger->writer_ = true;
  ledger->anchor_ = std::move(anchor);
  ledger->anchor_generation_ = state ? state->generation : 0;
  ledger->anchor_note_ = note;
  RETURN_IF_ERROR(ledger->Init());
  RETURN_IF_ERROR(ledger->CheckAnchor(state, /*adopt=*/true));
  if (!ledger->schema_repaired_.empty()) {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    std::string detail = nlohmann::json({{"problem", ledger->schema_repaired_}})
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    RETURN_IF_ERROR(ledger->AddGateEvent({NewId("gate"), "", "", "", "ledger_schema_repaired", "", detail,
                                          int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1000000}));
  }
  return ledger;
}

StatusOr<std::unique_ptr<Ledger>> Ledger::OpenReadOnly(const std::string& path_in, const LedgerOptions& options) {
  const std::string path = AbsolutePath(path_in);
  std::string note;
  std::unique_ptr<LedgerAnchor> anchor = AnchorFor(path, options, &note);
  std::optional<AnchorState> state;
  if (anchor != nullptr) {
    ASSIGN_OR_RETURN(state, anchor->Read());
    if (state && state->seq > 0) RETURN_IF_ERROR(CheckPresent(path, *state, anchor->path()));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::NotFound("ledger " + path, "no ledger yet");
  // Reading writes nothing: where the directory is not writable (a read-only
  // checkout, another user's workspace) SQLite could not create the WAL's
  // shared-memory file, so the file is opened as immutable, which is exact
  // as long as no WAL holds records the file does not.
  struct stat wal;
  bool wal_has_records = stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  std::string name =
      access(DirName(path).c_str(), W_OK) == 0 || wal_has_records ? path : "file:" + UriPath(path) + "?immutable=1";
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  std::unique_ptr<Ledger> ledger(new Ledger(db, path, Redactor()));
  if (rc != SQLITE_OK) return ledger->SqliteError("open", rc);
  sqlite3_busy_timeout(db, 5000);
  ledger->anchor_ = std::move(anchor);
  ledger->anchor_generation_ = state ? state->generation : 0;
  ledger->anchor_note_ = note;
  // Touch the schema now, so a damaged file is reported here, by name.
  Stmt s;
  rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s.st, nullptr);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_ERROR) return Status::Corruption("ledger " + path, "not an Odin ledger");
    return ledger->SqliteError("read schema", rc);
  }
  rc = sqlite3_step(s.st);
  if (rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE) return Status::Corruption("ledger " + path, "not an Odin ledger");
    return ledger->SqliteError("read schema", rc);
  }
  std::string version = ColumnText(s.st, 0);
  if (!SupportedSchema(version)) {
    return Status::FailedPrecondition("ledger " + path, "schema version " + version + " is not supported");
  }
  sqlite3_reset(s.st);
  // Tables an older ledger lacks read as empty: a temporary table of the
  // same shape, which this connection alone sees (nothing is written).
  for (const TableDef& t : Tables()) {
    Stmt has;
    sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", -1, &has.st, nullptr);
    sqlite3_bind_text(has.st, 1, t.name, -1, SQLITE_STATIC);
    if (sqlite3_step(has.st) != SQLITE_ROW) RETURN_IF_ERROR(ledger->Exec(CreateTableSql(t, "TEMP ")));
  }
  if (!options.allow_short) RETURN_IF_ERROR(ledger->CheckAnchor(state, /*adopt=*/false));
  return ledger;
}

// Of this version, with every index: what Ledger::Init would create is there.
static bool HasCurrentSchema(sqlite3* db) {
  Stmt v;
  sqlite3_prepare_v2(db, "SELECT value FROM main.meta WHERE key = 'schema_version'", -1, &v.st, nullptr);
  if (sqlite3_step(v.st) != SQLITE_ROW || ColumnText(v.st, 0) != std::to_string(kSchemaVersion)) return false;
  std::set<std::string> indexes;
  Stmt s;
  sqlite3_prepare_v2(db, "SELECT name FROM main.sqlite_schema WHERE type = 'index'", -1, &s.st, nullptr);
  while (sqlite3_step(s.st) == SQLITE_ROW) indexes.insert(ColumnText(s.st, 0));
  for (const auto& [name, on] : kIndexes) {
    if (indexes.count(name) == 0) return false;
  }
  return true;
}

Status Ledger::Init() {
  sqlite3_busy_timeout(db_, 5000);
  // WAL: readers never block the writer. NORMAL: a commit survives a crash of
  // the process (not necessarily of the machine) without an fsync per commit.
  //
  // Switching a new file to WAL takes an exclusive lock for which SQLite does
  // not always call the busy handler (odin processes started together all
  // create the ledger at once), so a busy answer is retried here, within the
  // same five seconds.
  int rc = SQLITE_BUSY;
  for (int waited_ms = 0; waited_ms < 5000; waited_ms += 5) {
    rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) break;
    usleep(5000);
  }
  if (rc != SQLITE_OK) return SqliteError("PRAGMA", rc);
  RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
  // The WAL outlives each process (Open), and each process's first read
  // replays all of it: at SQLite's default of 1000 pages that is up to 4 MB
  // read and checksummed, about 6 ms of CPU for every odin started. Folded
  // in every 128 pages (a process's calls add about 7), the replay stays
  // under half a megabyte; the fold's cost (two syncs) comes every ~20 odin
  // execs.
  RETURN_IF_ERROR(Exec("PRAGMA wal_autocheckpoint=128"));
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  // A schema changed behind our back (ledger verify reports it) is put
  // right, under the write lock, and the repair is recorded in the chain
  // (Open): what "CREATE ... IF NOT EXISTS" below would keep is dropped
  // first.
  std::string schema;
  {
    Stmt has_meta;
    sqlite3_prepare_v2(db_, "SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'meta'", -1, &has_meta.st,
                       nullptr);
    if (sqlite3_step(has_meta.st) == SQLITE_ROW) {
      schema_repaired_ = SchemaTampering();
      // Intact, of this version, every index there: nothing to create.
      // Parsing the statements below costs each odin process about 2 ms.
      if (schema_repaired_.empty() && HasCurrentSchema(db_)) {
        RETURN_IF_ERROR(Exec("COMMIT"));
        data_version_ = -1;
        return Status::OK();
      }
    }
  }
  if (!schema_repaired_.empty()) {
    spdlog::warn("ledger {}: its schema was changed behind Odin's back ({}); repaired, and recorded", path_,
                 schema_repaired_);
    for (const TableDef& t : Tables()) {
      for (const char* op : {"UPDATE", "DELETE"})
        schema += "DROP TRIGGER IF EXISTS " + std::string(t.name) + "_no_" + op + ";";
    }
  }
  schema += "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;";
  schema += "INSERT OR IGNORE INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "');";
  for (const TableDef& t : Tables()) {
    std::string name = t.name;
    schema += CreateTableSql(t, "");
    for (const char* op : {"UPDATE", "DELETE"}) {
      schema += "CREATE TRIGGER IF NOT EXISTS " + name + "_no_" + op + " BEFORE " + op + " ON " + name +
                " BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;";
    }
  }
  for (const auto& [name, on] : kIndexes)
    schema += "CREATE INDEX IF NOT EXISTS " + std::string(name) + " ON " + on + ";";
  // An older ledger now has every table: it is of this version.
  for (int v = kOldestSchemaVersion; v < kSchemaVersion; ++v) {
    schema += "UPDATE meta SET value = '" + std::to_string(kSchemaVersion) +
              "' WHERE key = 'schema_version' AND value = '" + std::to_string(v) + "';";
  }
  schema += "COMMIT;";
  Status s = Exec(schema);
  if (!s.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return s;
  }
  if (sqlite3_total_changes(db_) > 0) unflushed_ = true;  // a new ledger: its schema
  Stmt v;
  sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &v.st, nullptr);
  if (sqlite3_step(v.st) != SQLITE_ROW || ColumnText(v.st, 0) != std::to_string(kSchemaVersion)) {
    return Status::FailedPrecondition("ledger " + path_, "unsupported schema version");
  }
  // The chain head is read only under the write lock (RefreshHead in Write):
  // read here, another process could append before we write.
  data_version_ = -1;
  return Status::OK();
}

StatusOr<Ledger::Head> Ledger::ReadHead() {
  Head head;
  for (const TableDef& t : Tables()) {
    int rc;
    sqlite3_stmt* st = Cached(std::string("SELECT seq, hash FROM ") + t.name + " ORDER BY seq DESC LIMIT 1", &rc);
    if (st == nullptr) return SqliteError("read chain head", rc);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > head.seq) {
      head.seq = sqlite3_column_int64(st, 0);
      head.hash = ColumnText(st, 1);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError("read chain head", rc);
  }
  return head;
}

StatusOr<std::string> Ledger::HashAt(int64_t seq) {
  for (const TableDef& t : Tables()) {
    int rc;
    sqlite3_stmt* st = Cached(std::string("SELECT hash FROM ") + t.name + " WHERE seq = ?", &rc);
    if (st == nullptr) return SqliteError("read record", rc);
    sqlite3_bind_int64(st, 1, seq);
    rc = sqlite3_step(st);
    std::string hash = rc == SQLITE_ROW ? ColumnText(st, 0) : "";
    sqlite3_reset(st);
    if (rc == SQLITE_ROW) return hash;
    if (rc != SQLITE_DONE) return SqliteError("read record", rc);
  }
  return Status::NotFound("ledger " + path_, "no record " + std::to_string(seq));
}

Status Ledger::CompareWithAnchor(const AnchorState& a) {
  ASSIGN_OR_RETURN(Head head, ReadHead());
  std::string where = " (anchor: " + anchor_->path() + ")";
  if (head.seq < a.seq) {
    int64_t missing = a.seq - head.seq;
    std::string what =
        head.seq == 0 ? "holds no records but the anchor says it held " + Plural(a.seq, "record", "records")
                      : "ends at record " + std::to_string(head.seq) + " but the anchor says " + std::to_string(a.seq) +
                            ": the newest " + Plural(missing, "record is", "records are") + " missing";
    return Status::Corruption("ledger " + path_,
                              what + " (deleted, or the file was truncated or replaced); " + kStartOver + where);
  }
  StatusOr<std::string> hash = HashAt(a.seq);
  if (!hash.ok() && hash.status().code() != StatusCode::kNotFound) return hash.status();
  if (!hash.ok() || *hash != a.hash) {
    return Status::Corruption("ledger " + path_, "record " + std::to_string(a.seq) +
                                                     " is not the one the anchor holds: the ledger was rewritten or "
                                                     "replaced; " +
                                                     kStartOver + where);
  }
  return Status::OK();
}

Status Ledger::CheckAnchor(const std::optional<AnchorState>& state, bool adopt) {
  if (anchor_ == nullptr) return Status::OK();
  // One read transaction: the head and the record at the anchor agree.
  RETURN_IF_ERROR(Run("BEGIN"));
  StatusOr<Head> head = ReadHead();
  Status s = head.status();
  if (s.ok() && state && state->seq > 0) s = CompareWithAnchor(*state);
  Status committed = Run("COMMIT");
  RETURN_IF_ERROR(s);
  RETURN_IF_ERROR(committed);
  // A ledger from before anchors, or a writer that died between its commit
  // and the anchor: anchor what is there.
  if (adopt && anchor_note_.empty() && head->seq > (state ? state->seq : 0)) {
    return anchor_->Advance(anchor_generation_, head->seq, head->hash);
  }
  return Status::OK();
}

Status Ledger::LoadHead() {
  ASSIGN_OR_RETURN(Head head, ReadHead());
  head_seq_ = head.seq;
  head_hash_ = head.seq > 0 ? head.hash : kGenesisHash;
  int rc;
  sqlite3_stmt* dv = Cached("PRAGMA data_version", &rc);
  if (dv != nullptr && sqlite3_step(dv) == SQLITE_ROW) data_version_ = sqlite3_column_int64(dv, 0);
  if (dv != nullptr) sqlite3_reset(dv);
  return Status::OK();
}

// Inserts one record. REQUIRES: inside a write transaction with a fresh head.
Status Ledger::Append(const char* table, std::vector<Value> values) {
  const TableDef* def = nullptr;
  for (const TableDef& t : Tables()) {
    if (std::string_view(t.name) == table) def = &t;
  }
  if (def == nullptr || def->columns.size() != values.size()) {
    return Status::Internal("ledger append", std::string("bad record for ") + table);
  }
  int64_t seq = head_seq_ + 1;
  std::string hash = HashRecord(head_hash_, table, seq, values);
  std::string sql = std::string("INSERT INTO ") + table + " VALUES (?";
  for (size_t i = 0; i < values.size() + 1; ++i) sql += ", ?";
  sql += ")";
  int rc;
  sqlite3_stmt* st = Cached(sql, &rc);
  if (st == nullptr) return SqliteError(std::string("insert into ") + table, rc);
  sqlite3_bind_int64(st, 1, seq);
  int i = 2;
  for (const Value& v : values) {
    switch (v.kind) {
      case Value::kNull: sqlite3_bind_null(st, i); break;
      case Value::kInt: sqlite3_bind_int64(st, i, v.i); break;
      case Value::kText: sqlite3_bind_text(st, i, v.s.data(), static_cast<int>(v.s.size()), SQLITE_STATIC); break;
      case Value::kBlob: sqlite3_bind_blob(st, i, v.s.data(), static_cast<int>(v.s.size()), SQLITE_STATIC); break;
    }
    ++i;
  }
  sqlite3_bind_text(st, i, hash.data(), static_cast<int>(hash.size()), SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);  // drop the bound buffers' use before they go away
  if (rc != SQLITE_DONE) return SqliteError(std::string("insert into ") + table, rc);
  head_seq_ = seq;
  head_hash_ = std::move(hash);
  return Status::OK();
}

// Another process may have appended since our last write: re-read the chain
// head iff the database changed under us. REQUIRES: the write lock is held.
Status Ledger::RefreshHead() {
  int rc;
  sqlite3_stmt* dv = Cached("PRAGMA data_version", &rc);
  if (dv == nullptr) return SqliteError("data_version", rc);
  bool unchanged = sqlite3_step(dv) == SQLITE_ROW && sqlite3_column_int64(dv, 0) == data_version_;
  sqlite3_reset(dv);
  return unchanged ? Status::OK() : LoadHead();
}

Status Ledger::Write(const std::function<Status()>& body) {
  RETURN_IF_ERROR(Run("BEGIN IMMEDIATE"));
  Status s = RefreshHead();
  if (s.ok()) s = body();
  if (s.ok()) {
    s = Run("COMMIT");
    if (s.ok()) unflushed_ = true;
    // Committed: the anchor follows (after, never before: an anchor past
    // the ledger would be a false alarm).
    if (s.ok() && anchor_ != nullptr && anchor_note_.empty()) {
      return anchor_->Advance(anchor_generation_, head_seq_, head_hash_);
    }
    if (s.ok()) return s;
  }
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  data_version_ = -1;  // forget the uncommitted head; reload under the next lock
  return s;
}

Status Ledger::AddSession(const SessionRecord& r) {
  Status written = Write([&] {
    return Append("sessions",
                  {Value::Text(r.id), Value::Text(r.kind), Value::Text(r.workspace), Value::Int(r.created_at_ms)});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnSession(r);
  return written;
}

Status Ledger::AddExecutionStart(const ExecutionStart& r) {
  Status written = Write([&] {
    return Append("execution_starts",
                  {Value::Text(r.execution_id), Value::Text(r.session_id), Value::Text(r.agent_id), Value::Text(r.tool),
                   Value::Text(redactor_.Redact(r.args_json)), Value::Text(r.mode), Value::Text(r.worker_id),
                   Value::Int(r.started_at_ms), Value::Text(r.parent_id)});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnExecutionStart(r);
  return written;
}

Status Ledger::AddExecutionEnd(const ExecutionEnd& r, std::vector<Artifact> artifacts,
                               const ValidationRecord* validation, const std::vector<DiagnosticRecord>& diagnostics) {
  Status written = Write([&]() -> Status {
    for (const DiagnosticRecord& d : diagnostics) {
      RETURN_IF_ERROR(Append(
          "diagnostics", {Value::Text(d.execution_id), Value::Text(d.path), Value::Int(d.line), Value::Int(d.column),
                          Value::Int(d.severity), Value::Text(d.code), Value::Text(redactor_.Redact(d.message)),
                          Value::Text(d.source), Value::Int(d.is_new ? 1 : 0)}));
    }
    if (validation != nullptr) {
      const ValidationRecord& v = *validation;
      RETURN_IF_ERROR(
          Append("validations",
                 {Value::Text(v.execution_id), Value::Text(v.session_id), Value::Text(v.agent_id),
                  Value::Text(v.mutation_id), Value::Text(v.path), Value::Text(v.status), Value::Text(v.validator),
                  Value::Int(v.new_errors), Value::Text(redactor_.Redact(v.reason)),
                  Value::Text(redactor_.Redact(v.summary)), Value::Int(v.latency_us), Value::Int(v.created_at_ms)}));
    }
    for (Artifact& a : artifacts) {
      a.content = redactor_.Redact(a.content);
      a.sha256 = Sha256Hex(a.content);
      RETURN_IF_ERROR(Append(
          "artifacts", {Value::Text(a.id), Value::Text(a.execution_id), Value::Text(a.kind), Value::Blob(a.content),
                        Value::Int(a.size), Value::Int(a.truncated ? 1 : 0), Value::Text(a.sha256)}));
    }
    return Append(
        "execution_ends",
        {Value::Text(r.execution_id), Value::Text(r.status), r.exit_code ? Value::Int(*r.exit_code) : Value::Null(),
         Value::Text(r.exit_reason), Value::Int(r.finished_at_ms), Value::Int(r.duration_us),
         Value::Blob(redactor_.Redact(r.output_head)), Value::Blob(redactor_.Redact(r.output_tail)),
         Value::Int(r.output_bytes), Value::Text(redactor_.Redact(r.error)),
         Value::Text(redactor_.Redact(r.result_json))});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnExecutionEnd(r, validation);
  return written;
}

Status Ledger::AddMessage(const MessageRecord& m) {
  Status written = Write([&] {
    return Append("messages", {Value::Text(m.id), Value::Text(m.session_id), Value::Text(m.agent_id),
                               Value::Text(m.role), Value::Text(m.mode), Value::Text(redactor_.Redact(m.text)),
                               Value::Text(m.status), Value::Int(m.created_at_ms)});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnMessage(m);
  return written;
}

Status Ledger::AddConversation(const std::vector<ConversationEntry>& entries) {
  if (entries.empty()) return Status::OK();
  return Write([&]() -> Status {
    for (const ConversationEntry& e : entries) {
      RETURN_IF_ERROR(Append(
          "conversation", {Value::Text(e.id), Value::Text(e.session_id), Value::Text(e.agent_id), Value::Text(e.kind),
                           Value::Text(redactor_.Redact(e.content_json)), Value::Int(e.created_at_ms)}));
    }
    return Status::OK();
  });
}

Status Ledger::AddLlmCall(const LlmCallRecord& c) {
  Status written = Write([&]() -> Status {
    RETURN_IF_ERROR(
        Append("llm_calls",
               {Value::Text(c.id), Value::Text(c.session_id), Value::Text(c.agent_id), Value::Text(c.role),
                Value::Text(c.provider), Value::Text(c.model), Value::Int(c.started_at_ms), Value::Int(c.duration_us),
                Value::Int(c.input_tokens), Value::Int(c.output_tokens), Value::Int(c.cost_microusd),
                Value::Text(c.status), Value::Int(c.attempts), Value::Text(redactor_.Redact(c.error))}));
    if (c.cache_read_tokens == 0 && c.cache_write_tokens == 0) return Status::OK();
    return Append("llm_cache", {Value::Text(c.id), Value::Int(c.cache_read_tokens), Value::Int(c.cache_write_tokens)});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnLlmCall(c);
  return written;
}

Status Ledger::AddGateEvent(const GateEvent& g) {
  Status written = Write([&] {
    return Append("gate_events", {Value::Text(g.id), Value::Text(g.session_id), Value::Text(g.agent_id),
                                  Value::Text(g.message_id), Value::Text(g.kind), Value::Text(g.execution_id),
                                  Value::Text(redactor_.Redact(g.detail_json)), Value::Int(g.created_at_ms)});
  });
  if (written.ok() && observer_ != nullptr) observer_->OnGateEvent(g);
  return written;
}

Status Ledger::AddMutations(std::vector<MutationRecord> mutations, const std::vector<BeforeImage>& images) {
  if (mutations.empty()) return Status::OK();
  return Write([&]() -> Status {
    std::map<std::string, std::string> artifact_of;  // sha256 -> artifact id
    for (const BeforeImage& image : images) {
      if (artifact_of.count(image.sha256)) continue;
      int rc;
      sqlite3_stmt* st = Cached("SELECT id FROM artifacts WHERE sha256 = ? AND kind = 'before_image' LIMIT 1", &rc);
      if (st == nullptr) return SqliteError("find before-image", rc);
      sqlite3_bind_text(st, 1, image.sha256.c_str(), -1, SQLITE_TRANSIENT);
      rc = sqlite3_step(st);
      std::string existing = rc == SQLITE_ROW ? ColumnText(st, 0) : "";
      sqlite3_reset(st);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError("find before-image", rc);
      if (existing.empty()) {
        // Stored under the execution of the first mutation that needs it.
        std::string owner;
        for (const MutationRecord& m : mutations) {
          if (m.before_sha256 == image.sha256) {
            owner = m.execution_id;
            break;
          }
        }
        existing = NewId("art");
        RETURN_IF_ERROR(
            Append("artifacts",
                   {Value::Text(existing), Value::Text(owner), Value::Text("before_image"), Value::Blob(image.content),
                    Value::Int(static_cast<int64_t>(image.content.size())), Value::Int(0), Value::Text(image.sha256)}));
      }
      artifact_of[image.sha256] = existing;
    }
    for (MutationRecord& m : mutations) {
      if (m.before_artifact.empty() && !m.before_sha256.empty()) {
        auto it = artifact_of.find(m.before_sha256);
        if (it != artifact_of.end()) m.before_artifact = it->second;
      }
      RETURN_IF_ERROR(Append("mutations", {Value::Text(m.id),
                                           Value::Text(m.session_id),
                                           Value::Text(m.agent_id),
                                           Value::Text(m.execution_id),
                                           Value::Text(m.source),
                                           Value::Text(m.path),
                                           Value::Text(m.change),
                                           Value::Text(m.file_type),
                                           Value::Text(m.before_sha256),
                                           Value::Int(m.before_size),
                                           Value::Int(m.before_mode),
                                           Value::Text(m.after_sha256),
                                           Value::Int(m.after_size),
                                           Value::Int(m.after_mode),
                                           Value::Text(m.link_target),
                                           Value::Text(m.before_artifact),
                                           Value::Int(m.undoable ? 1 : 0),
                                           Value::Int(m.entries),
                                           Value::Int(m.lines_added),
                                           Value::Int(m.lines_removed),
                                           Value::Text(redactor_.Redact(m.note)),
                                           Value::Int(m.created_at_ms)}));
    }
    return Status::OK();
  });
}

}  // namespace odin
