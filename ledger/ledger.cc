#include "ledger/ledger.h"

// Long file: the hash chain's writer and its verifiers share the table
// definitions and the bytes each record's hash covers; they stay in one file
// so the encoding has one definition. Readers (ledger_queries.cc) and reset
// (ledger_reset.cc) live apart.

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

// A column value, typed as SQLite stores it in a STRICT table.
struct Ledger::Value {
  enum Kind { kNull, kInt, kText, kBlob } kind = kNull;
  int64_t i = 0;
  std::string s;
  static Value Null() { return {}; }
  static Value Int(int64_t v) { return {kInt, v, {}}; }
  static Value Text(std::string v) { return {kText, 0, std::move(v)}; }
  static Value Blob(std::string v) { return {kBlob, 0, std::move(v)}; }
};

namespace {

using namespace ledger_internal;
using Value = Ledger::Value;

struct Column {
  const char* name;
  const char* type;
};
struct TableDef {
  const char* name;
  std::vector<Column> columns;  // besides seq (first) and hash (last)
};

// The chained tables. Adding a column changes hashes: bump kSchemaVersion.
const std::vector<TableDef>& Tables() {
  static const std::vector<TableDef> kTables = {
      {"sessions",
       {{"id", "TEXT NOT NULL"},
        {"kind", "TEXT NOT NULL"},
        {"workspace", "TEXT NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
      {"execution_starts",
       {{"execution_id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"tool", "TEXT NOT NULL"},
        {"args_json", "TEXT NOT NULL"},
        {"mode", "TEXT NOT NULL"},
        {"worker_id", "TEXT NOT NULL"},
        {"started_at_ms", "INTEGER NOT NULL"},
        {"parent_id", "TEXT NOT NULL"}}},
      {"execution_ends",
       {{"execution_id", "TEXT NOT NULL"},
        {"status", "TEXT NOT NULL"},
        {"exit_code", "INTEGER"},
        {"exit_reason", "TEXT NOT NULL"},
        {"finished_at_ms", "INTEGER NOT NULL"},
        {"duration_us", "INTEGER NOT NULL"},
        {"output_head", "BLOB NOT NULL"},
        {"output_tail", "BLOB NOT NULL"},
        {"output_bytes", "INTEGER NOT NULL"},
        {"error", "TEXT NOT NULL"},
        {"result_json", "TEXT NOT NULL"}}},
      {"artifacts",
       {{"id", "TEXT NOT NULL"},
        {"execution_id", "TEXT NOT NULL"},
        {"kind", "TEXT NOT NULL"},
        {"content", "BLOB NOT NULL"},
        {"size", "INTEGER NOT NULL"},
        {"truncated", "INTEGER NOT NULL"},
        {"sha256", "TEXT NOT NULL"}}},
      {"messages",
       {{"id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"role", "TEXT NOT NULL"},
        {"mode", "TEXT NOT NULL"},
        {"text", "TEXT NOT NULL"},
        {"status", "TEXT NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
      {"llm_calls",
       {{"id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"role", "TEXT NOT NULL"},
        {"provider", "TEXT NOT NULL"},
        {"model", "TEXT NOT NULL"},
        {"started_at_ms", "INTEGER NOT NULL"},
        {"duration_us", "INTEGER NOT NULL"},
        {"input_tokens", "INTEGER NOT NULL"},
        {"output_tokens", "INTEGER NOT NULL"},
        {"cost_microusd", "INTEGER NOT NULL"},
        {"status", "TEXT NOT NULL"},
        {"attempts", "INTEGER NOT NULL"},
        {"error", "TEXT NOT NULL"}}},
      {"validations",
       {{"execution_id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"mutation_id", "TEXT NOT NULL"},
        {"path", "TEXT NOT NULL"},
        {"status", "TEXT NOT NULL"},
        {"validator", "TEXT NOT NULL"},
        {"new_errors", "INTEGER NOT NULL"},
        {"reason", "TEXT NOT NULL"},
        {"summary", "TEXT NOT NULL"},
        {"latency_us", "INTEGER NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
      {"diagnostics",
       {{"execution_id", "TEXT NOT NULL"},
        {"path", "TEXT NOT NULL"},
        {"line", "INTEGER NOT NULL"},
        {"column", "INTEGER NOT NULL"},
        {"severity", "INTEGER NOT NULL"},
        {"code", "TEXT NOT NULL"},
        {"message", "TEXT NOT NULL"},
        {"source", "TEXT NOT NULL"},
        {"is_new", "INTEGER NOT NULL"}}},
      {"gate_events",
       {{"id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"message_id", "TEXT NOT NULL"},
        {"kind", "TEXT NOT NULL"},
        {"execution_id", "TEXT NOT NULL"},
        {"detail_json", "TEXT NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
      {"mutations",
       {{"id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"execution_id", "TEXT NOT NULL"},
        {"source", "TEXT NOT NULL"},
        {"path", "TEXT NOT NULL"},
        {"change", "TEXT NOT NULL"},
        {"file_type", "TEXT NOT NULL"},
        {"before_sha256", "TEXT NOT NULL"},
        {"before_size", "INTEGER NOT NULL"},
        {"before_mode", "INTEGER NOT NULL"},
        {"after_sha256", "TEXT NOT NULL"},
        {"after_size", "INTEGER NOT NULL"},
        {"after_mode", "INTEGER NOT NULL"},
        {"link_target", "TEXT NOT NULL"},
        {"before_artifact", "TEXT NOT NULL"},
        {"undoable", "INTEGER NOT NULL"},
        {"entries", "INTEGER NOT NULL"},
        {"lines_added", "INTEGER NOT NULL"},
        {"lines_removed", "INTEGER NOT NULL"},
        {"note", "TEXT NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
      {"conversation",
       {{"id", "TEXT NOT NULL"},
        {"session_id", "TEXT NOT NULL"},
        {"agent_id", "TEXT NOT NULL"},
        {"kind", "TEXT NOT NULL"},
        {"content_json", "TEXT NOT NULL"},
        {"created_at_ms", "INTEGER NOT NULL"}}},
  };
  return kTables;
}

// 5 added the mutations table, 6 the conversation table. An older ledger
// is upgraded in place by the first writer (its records and hashes stay as
// they are); a reader of one sees those tables empty.
constexpr int kSchemaVersion = 6;
constexpr int kOldestSchemaVersion = 4;

bool SupportedSchema(const std::string& version) {
  for (int v = kOldestSchemaVersion; v <= kSchemaVersion; ++v) {
    if (version == std::to_string(v)) return true;
  }
  return false;
}

// The CREATE TABLE statement of a chained table (prefix: "" or "TEMP ").
std::string CreateTableSql(const TableDef& t, const char* prefix) {
  std::string sql = std::string("CREATE ") + prefix + "TABLE IF NOT EXISTS " + t.name + " (seq INTEGER PRIMARY KEY";
  for (const Column& c : t.columns) sql += std::string(", ") + c.name + " " + c.type;
  return sql + ", hash TEXT NOT NULL) STRICT;";
}
const std::string kGenesisHash(64, '0');

// The bytes a record's hash covers: the previous hash, the table, then every
// column with a type tag and a length, so no two records encode alike.
std::string HashRecord(const std::string& prev_hash, std::string_view table, int64_t seq,
                       const std::vector<Value>& values) {
  Sha256 h;
  h.Update(prev_hash);
  h.Update("\n");
  h.Update(table);
  h.Update("\n");
  h.Update("I" + std::to_string(seq) + ";");
  for (const Value& v : values) {
    switch (v.kind) {
      case Value::kNull: h.Update("N;"); break;
      case Value::kInt: h.Update("I" + std::to_string(v.i) + ";"); break;
      case Value::kText:
      case Value::kBlob:
        h.Update((v.kind == Value::kText ? "T" : "B") + std::to_string(v.s.size()) + ":");
        h.Update(v.s);
        break;
    }
  }
  return HexDigest(h.Finish());
}

Value ReadColumn(sqlite3_stmt* st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return Value::Int(sqlite3_column_int64(st, i));
    case SQLITE_TEXT:
      return Value::Text(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i)),
                                     static_cast<size_t>(sqlite3_column_bytes(st, i))));
    case SQLITE_BLOB: {
      const void* p = sqlite3_column_blob(st, i);
      return Value::Blob(p ? std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st, i)))
                           : std::string());
    }
    default: return Value::Null();
  }
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

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
    if (sqlite3_step(has_meta.st) == SQLITE_ROW) schema_repaired_ = SchemaTampering();
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
  schema += "CREATE INDEX IF NOT EXISTS execution_starts_id ON execution_starts(execution_id);";
  schema += "CREATE INDEX IF NOT EXISTS execution_ends_id ON execution_ends(execution_id);";
  schema += "CREATE INDEX IF NOT EXISTS artifacts_execution ON artifacts(execution_id);";
  schema += "CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS llm_calls_session ON llm_calls(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS execution_starts_session ON execution_starts(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS validations_session ON validations(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS diagnostics_execution ON diagnostics(execution_id);";
  schema += "CREATE INDEX IF NOT EXISTS gate_events_session ON gate_events(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS mutations_session ON mutations(session_id);";
  schema += "CREATE INDEX IF NOT EXISTS mutations_execution ON mutations(execution_id);";
  schema += "CREATE INDEX IF NOT EXISTS artifacts_sha256 ON artifacts(sha256);";
  schema += "CREATE INDEX IF NOT EXISTS conversation_session ON conversation(session_id, agent_id);";
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
  return Write([&] {
    return Append("sessions",
                  {Value::Text(r.id), Value::Text(r.kind), Value::Text(r.workspace), Value::Int(r.created_at_ms)});
  });
}

Status Ledger::AddExecutionStart(const ExecutionStart& r) {
  return Write([&] {
    return Append("execution_starts",
                  {Value::Text(r.execution_id), Value::Text(r.session_id), Value::Text(r.agent_id), Value::Text(r.tool),
                   Value::Text(redactor_.Redact(r.args_json)), Value::Text(r.mode), Value::Text(r.worker_id),
                   Value::Int(r.started_at_ms), Value::Text(r.parent_id)});
  });
}

Status Ledger::AddExecutionEnd(const ExecutionEnd& r, std::vector<Artifact> artifacts,
                               const ValidationRecord* validation, const std::vector<DiagnosticRecord>& diagnostics) {
  return Write([&]() -> Status {
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
}

Status Ledger::AddMessage(const MessageRecord& m) {
  return Write([&] {
    return Append("messages", {Value::Text(m.id), Value::Text(m.session_id), Value::Text(m.agent_id),
                               Value::Text(m.role), Value::Text(m.mode), Value::Text(redactor_.Redact(m.text)),
                               Value::Text(m.status), Value::Int(m.created_at_ms)});
  });
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
  return Write([&] {
    return Append("llm_calls", {Value::Text(c.id), Value::Text(c.session_id), Value::Text(c.agent_id),
                                Value::Text(c.role), Value::Text(c.provider), Value::Text(c.model),
                                Value::Int(c.started_at_ms), Value::Int(c.duration_us), Value::Int(c.input_tokens),
                                Value::Int(c.output_tokens), Value::Int(c.cost_microusd), Value::Text(c.status),
                                Value::Int(c.attempts), Value::Text(redactor_.Redact(c.error))});
  });
}

Status Ledger::AddGateEvent(const GateEvent& g) {
  return Write([&] {
    return Append("gate_events", {Value::Text(g.id), Value::Text(g.session_id), Value::Text(g.agent_id),
                                  Value::Text(g.message_id), Value::Text(g.kind), Value::Text(g.execution_id),
                                  Value::Text(redactor_.Redact(g.detail_json)), Value::Int(g.created_at_ms)});
  });
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

StatusOr<VerifyReport> Ledger::Verify() {
  // The anchor before the snapshot: what it holds was committed before.
  std::optional<AnchorState> state;
  if (anchor_ != nullptr) {
    ASSIGN_OR_RETURN(state, anchor_->Read());
  }
  // One read transaction: a consistent snapshot even while others append.
  RETURN_IF_ERROR(Run("BEGIN"));
  StatusOr<VerifyReport> report = VerifySnapshot();
  if (report.ok() && report->ok && state && state->seq > 0) {
    Status s = CompareWithAnchor(*state);
    if (s.code() == StatusCode::kCorruption) {
      report->ok = false;
      report->short_of_anchor = true;
      report->problem = s.message();
    } else if (!s.ok()) {
      report = s;
    }
  }
  // The records first (the more specific finding), then the schema.
  if (report.ok() && report->ok) {
    if (std::string tampered = SchemaTampering(); !tampered.empty()) {
      report->ok = false;
      report->problem = "schema: " + tampered;
    }
  }
  Status committed = Run("COMMIT");
  if (!report.ok()) return report;
  RETURN_IF_ERROR(committed);
  if (anchor_ == nullptr) {
    report->anchor = anchor_note_;
  } else if (!state) {
    report->anchor = "none yet (" + anchor_->path() + ")";
    if (!anchor_note_.empty()) report->anchor += "; " + anchor_note_;
  } else {
    report->anchor = (state->seq > 0 ? "record " + std::to_string(state->seq) : std::string("no record yet")) + " (" +
                     anchor_->path() + ")";
    if (!state->resets.empty()) {
      const AnchorReset& last = state->resets.back();
      report->anchor += ", after " + Plural(state->generation, "reset", "resets") + "; the last moved " +
                        (last.moved_to.empty() ? std::string("nothing") : last.moved_to) + " aside";
    }
    if (!anchor_note_.empty()) report->anchor += "; " + anchor_note_;
  }
  return report;
}

std::string Ledger::SchemaTampering() {
  // What the file's schema says of itself must be what this code made:
  // the version the tables present belong to, and every chained table's
  // append-only triggers. Neither is covered by the chain (no record holds
  // them), so a change to them leaves every hash intact.
  std::string version;
  {
    Stmt v;
    if (sqlite3_prepare_v2(db_, "SELECT value FROM main.meta WHERE key = 'schema_version'", -1, &v.st, nullptr) !=
            SQLITE_OK ||
        sqlite3_step(v.st) != SQLITE_ROW) {
      return "meta.schema_version is missing";
    }
    version = ColumnText(v.st, 0);
  }
  int v = SupportedSchema(version) ? std::stoi(version) : 0;
  if (v == 0) return "meta.schema_version is " + version + ", which no Odin wrote";
  std::set<std::string> tables, triggers;
  {
    Stmt s;
    sqlite3_prepare_v2(db_, "SELECT type, name, tbl_name, sql FROM main.sqlite_schema", -1, &s.st, nullptr);
    while (sqlite3_step(s.st) == SQLITE_ROW) {
      std::string type = ColumnText(s.st, 0), name = ColumnText(s.st, 1), sql = ColumnText(s.st, 3);
      if (type == "table") tables.insert(name);
      if (type == "trigger" && sql.find("RAISE(ABORT, 'the ledger is append-only')") != std::string::npos &&
          name ==
              ColumnText(s.st, 2) + (sql.find(" BEFORE UPDATE ") != std::string::npos ? "_no_UPDATE" : "_no_DELETE")) {
        triggers.insert(name);
      }
    }
  }
  // Version 5 added mutations, 6 conversation.
  auto since = [](const std::string& table) {
    return table == "conversation" ? 6 : table == "mutations" ? 5 : kOldestSchemaVersion;
  };
  for (const TableDef& t : Tables()) {
    std::string name = t.name;
    bool belongs = since(name) <= v;
    if (!belongs && tables.count(name) != 0) {
      return "meta.schema_version says " + version + ", but the table " + name + " of version " +
             std::to_string(since(name)) + " is there (the version was changed)";
    }
    if (belongs && tables.count(name) == 0) {
      return "meta.schema_version says " + version + ", but the table " + name + " is missing";
    }
    if (!belongs) continue;
    for (const char* op : {"UPDATE", "DELETE"}) {
      if (triggers.count(name + "_no_" + op) == 0) {
        return "the append-only trigger " + name + "_no_" + op + " is missing or changed (records of " + name +
               " could be " + (op == std::string("UPDATE") ? "edited" : "deleted") + " without an error)";
      }
    }
  }
  return "";
}

StatusOr<VerifyReport> Ledger::VerifySnapshot() {
  // Walk every chained table in seq order at once (a k-way merge), recomputing
  // each record's hash from the one before.
  struct Cursor {
    const TableDef* def;
    Stmt stmt;
    bool has_row = false;
  };
  std::vector<std::unique_ptr<Cursor>> cursors;
  for (const TableDef& t : Tables()) {
    auto c = std::make_unique<Cursor>();
    c->def = &t;
    std::string sql = "SELECT seq";
    for (const Column& col : t.columns) sql += std::string(", ") + col.name;
    sql += std::string(", hash FROM ") + t.name + " ORDER BY seq";
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &c->stmt.st, nullptr);
    if (rc != SQLITE_OK) return SqliteError("verify", rc);
    rc = sqlite3_step(c->stmt.st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError("verify", rc);
    c->has_row = rc == SQLITE_ROW;
    cursors.push_back(std::move(c));
  }
  VerifyReport report;
  std::string prev = kGenesisHash;
  int64_t expected_seq = 1;
  for (;;) {
    Cursor* next = nullptr;
    for (auto& c : cursors) {
      if (c->has_row &&
          (next == nullptr || sqlite3_column_int64(c->stmt.st, 0) < sqlite3_column_int64(next->stmt.st, 0))) {
        next = c.get();
      }
    }
    if (next == nullptr) break;
    sqlite3_stmt* st = next->stmt.st;
    int64_t seq = sqlite3_column_int64(st, 0);
    std::string where = "record " + std::to_string(seq) + " (" + next->def->name + ")";
    if (seq != expected_seq) {
      report.ok = false;
      report.problem = seq > expected_seq
                           ? "record " + std::to_string(expected_seq) + " is missing (deleted?); next is " + where
                           : where + " is duplicated";
      return report;
    }
    std::vector<Value> values;
    int ncols = static_cast<int>(next->def->columns.size());
    for (int i = 1; i <= ncols; ++i) values.push_back(ReadColumn(st, i));
    std::string stored = ColumnText(st, ncols + 1);
    std::string computed = HashRecord(prev, next->def->name, seq, values);
    if (stored != computed) {
      report.ok = false;
      std::string id = values.empty() || values[0].kind != Value::kText ? "" : " " + values[0].s;
      report.problem = where + id + ": contents do not match its hash (edited behind the ledger's back)";
      return report;
    }
    prev = stored;
    ++report.records;
    ++expected_seq;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError("verify", rc);
    next->has_row = rc == SQLITE_ROW;
  }
  return report;
}

namespace {

std::mutex g_failures_mu;
std::set<std::string>& ShownFailures() {
  static std::set<std::string>* shown = new std::set<std::string>();
  return *shown;
}

// What identifies a failure: the message after its last "ledger " (the
// callers' contexts differ, the ledger's own words do not).
std::string FailureKey(std::string_view message) {
  size_t at = message.rfind("ledger ");
  return std::string(at == std::string_view::npos ? message : message.substr(at));
}

}  // namespace

void LogLedgerWriteFailure(const Status& failure) {
  if (failure.ok()) return;
  bool first;
  {
    std::lock_guard<std::mutex> lock(g_failures_mu);
    // Bounded: a daemon whose writes keep failing in new words says the
    // first 64 and logs the rest at debug level.
    first = ShownFailures().size() < 64 && ShownFailures().insert(FailureKey(failure.message())).second;
  }
  if (first) {
    spdlog::error("{}", failure.message());
  } else {
    spdlog::debug("{}", failure.message());
  }
}

bool LedgerFailureShown(std::string_view text) {
  std::lock_guard<std::mutex> lock(g_failures_mu);
  std::string key = FailureKey(text);
  for (const std::string& shown : ShownFailures()) {
    if (key.find(shown) != std::string::npos || shown.find(key) != std::string::npos) return true;
  }
  return false;
}

}  // namespace odin
