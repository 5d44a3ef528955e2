#include "index/index_db.h"
#include "workspace/workspace_files.h"
#include "base/file_util.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>

namespace odin::index {
namespace {

// Removes the index's files (it lives in Odin's state directory: through
// the safe file layer, nothing followed).
void RemoveDbFiles(const std::string& path) {
  StatusOr<WorkspaceFiles> dir = WorkspaceFiles::Open(DirName(path));
  if (!dir.ok()) return;
  std::string name = path.substr(path.rfind('/') + 1);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) (void)dir->Remove(name + suffix);
}

// Bumped whenever the schema or what the extractor produces changes: an
// index of another version is rebuilt, never half-read.
constexpr char kSchemaVersion[] = "1";

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, language TEXT NOT NULL,"
    " sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, lines INTEGER NOT NULL,"
    " has_errors INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS symbols(id TEXT PRIMARY KEY, file INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " name TEXT NOT NULL, qname TEXT NOT NULL, start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL,"
    " start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, parent TEXT) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS refs(file INTEGER NOT NULL, from_id TEXT, name TEXT NOT NULL, call INTEGER NOT NULL,"
    " count INTEGER NOT NULL, lines TEXT NOT NULL);";

// The secondary indexes, which a bulk load drops and makes again.
constexpr char kIndexes[] =
    "CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);"
    "CREATE INDEX IF NOT EXISTS symbols_qname ON symbols(qname);"
    "CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file);"
    "CREATE INDEX IF NOT EXISTS refs_name ON refs(name);"
    "CREATE INDEX IF NOT EXISTS refs_file ON refs(file);";
constexpr char kDropIndexes[] =
    "DROP INDEX IF EXISTS symbols_name; DROP INDEX IF EXISTS symbols_qname; DROP INDEX IF EXISTS symbols_file;"
    "DROP INDEX IF EXISTS refs_name; DROP INDEX IF EXISTS refs_file;";

// Reads a statement's rows one by one, resetting it when done.
class Rows {
 public:
  explicit Rows(sqlite3_stmt* s) : s_(s) {}
  ~Rows() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;
  Rows& Bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Rows& Bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Rows& BindNull(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(s_); }
  std::string Text(int i) const {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s_, i));
  }
  int64_t Int(int i) const { return sqlite3_column_int64(s_, i); }

 private:
  sqlite3_stmt* s_;
};

Status SqlError(sqlite3* db, const std::string& what) {
  return Status::Internal("symbol index: " + what, sqlite3_errmsg(db));
}

std::string JoinLines(const std::vector<uint32_t>& lines) {
  std::string out;
  for (uint32_t l : lines) {
    if (!out.empty()) out += ',';
    out += std::to_string(l);
  }
  return out;
}

std::vector<uint32_t> SplitLines(const std::string& text) {
  std::vector<uint32_t> out;
  uint32_t v = 0;
  bool any = false;
  for (char ch : text) {
    if (ch >= '0' && ch <= '9') {
      v = v * 10 + static_cast<uint32_t>(ch - '0');
      any = true;
    } else if (any) {
      out.push_back(v);
      v = 0;
      any = false;
    }
  }
  if (any) out.push_back(v);
  return out;
}

size_t EditDistance(const std::string& a, const std::string& b, size_t cap) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t best = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost =
          tolower(static_cast<unsigned char>(a[i - 1])) == tolower(static_cast<unsigned char>(b[j - 1])) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      best = std::min(best, cur[j]);
    }
    if (best > cap) return cap + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The columns every symbol query selects, and how to read them.
constexpr char kSymbolColumns[] =
    "s.id, f.path, f.language, s.kind, s.name, s.qname, s.start_byte, s.end_byte, s.start_line, s.end_line, "
    "s.parent, f.has_errors";

SymbolRow ReadSymbol(const Rows& r) {
  SymbolRow s;
  s.id = r.Text(0);
  s.path = r.Text(1);
  s.language = ParseLanguage(r.Text(2));
  int64_t kind = r.Int(3);
  s.kind = kind >= 0 && kind <= static_cast<int64_t>(SymbolKind::kVariable) ? static_cast<SymbolKind>(kind)
                                                                            : SymbolKind::kVariable;
  s.name = r.Text(4);
  s.qualified_name = r.Text(5);
  s.start_byte = static_cast<uint32_t>(r.Int(6));
  s.end_byte = static_cast<uint32_t>(r.Int(7));
  s.start_line = static_cast<uint32_t>(r.Int(8));
  s.end_line = static_cast<uint32_t>(r.Int(9));
  s.parent_id = r.Text(10);
  s.file_has_errors = r.Int(11) != 0;
  return s;
}

bool EndsWithQualified(const std::string& qname, const std::string& query) {
  if (qname.size() <= query.size() || qname.compare(qname.size() - query.size(), query.size(), query) != 0)
    return false;
  size_t at = qname.size() - query.size();
  return (at >= 1 && qname[at - 1] == '.') || (at >= 2 && qname[at - 1] == ':' && qname[at - 2] == ':');
}

}  // namespace

StatusOr<std::unique_ptr<IndexDb>> IndexDb::Open(const std::string& path, std::string* note) {
  auto open_db = [&](sqlite3** db) -> Status {
    int rc =
        sqlite3_open_v2(path.c_str(), db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, nullptr);
    if (rc != SQLITE_OK) return Status::Internal("symbol index: cannot open " + path, sqlite3_errstr(rc));
    sqlite3_busy_timeout(*db, 5000);
    return Status::OK();
  };
  // The version the file says, or why it cannot be read.
  auto check = [](sqlite3* db, std::string* version) -> int {
    // A cache of what the files say: a crash loses at most the last
    // transaction, which the next look parses again. A large page cache
    // keeps a full index's writes out of the kernel.
    int rc = sqlite3_exec(db,
                          "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;"
                          "PRAGMA temp_store=MEMORY;",
                          nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt* s = nullptr;
    rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema'", -1, &s, nullptr);
    if (rc != SQLITE_OK) {
      // No meta table: a new file, or not ours.
      sqlite3_stmt* any = nullptr;
      int rc2 = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &any, nullptr);
      int64_t tables = -1;
      if (rc2 == SQLITE_OK && sqlite3_step(any) == SQLITE_ROW) tables = sqlite3_column_int64(any, 0);
      sqlite3_finalize(any);
      if (rc2 != SQLITE_OK) return rc2;
      *version = tables == 0 ? "" : "unknown";
      return SQLITE_OK;
    }
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(s, 0);
      *version = t == nullptr ? "unknown" : reinterpret_cast<const char*>(t);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      *version = "unknown";
      rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc;
  };
  sqlite3* db = nullptr;
  RETURN_IF_ERROR(open_db(&db));
  std::string version;
  int rc = check(db, &version);
  if (rc != SQLITE_OK || (!version.empty() && version != kSchemaVersion)) {
    *note = rc != SQLITE_OK ? "symbol index " + path + " could not be read (" + sqlite3_errstr(rc) + "): rebuilding it"
                            : "symbol index " + path + " is of another version (" + version + "): rebuilding it";
    sqlite3_close_v2(db);
    RemoveDbFiles(path);
    db = nullptr;
    RETURN_IF_ERROR(open_db(&db));
    rc = check(db, &version);
    if (rc != SQLITE_OK) {
      Status s = Status::Internal("symbol index: cannot create " + path, sqlite3_errstr(rc));
      sqlite3_close_v2(db);
      return s;
    }
  }
  std::unique_ptr<IndexDb> out(new IndexDb(db, path));
  RETURN_IF_ERROR(out->Exec(kSchema));
  RETURN_IF_ERROR(out->Exec(kIndexes));
  if (version.empty()) {
    std::string sql = std::string("INSERT OR REPLACE INTO meta(key, value) VALUES('schema', '") + kSchemaVersion + "')";
    RETURN_IF_ERROR(out->Exec(sql.c_str()));
  }
  return out;
}

IndexDb::~IndexDb() {
  CloseStatements();
  sqlite3_close_v2(db_);
}

void IndexDb::CloseStatements() {
  for (auto& [sql, s] : statements_) sqlite3_finalize(s);
  statements_.clear();
}

Status IndexDb::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::Internal("symbol index", err != nullptr ? err : "error");
    sqlite3_free(err);
    return s;
  }
  return Status::OK();
}

StatusOr<sqlite3_stmt*> IndexDb::Prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return it->second;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) return SqlError(db_, "prepare");
  statements_[sql] = s;
  return s;
}

StatusOr<std::string> IndexDb::GetMeta(const std::string& key) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT value FROM meta WHERE key = ?1"));
  Rows r(s);
  r.Bind(1, key);
  int rc = r.Step();
  if (rc == SQLITE_ROW) return r.Text(0);
  if (rc == SQLITE_DONE) return std::string();
  return SqlError(db_, "read meta");
}

Status IndexDb::SetMeta(const std::string& key, const std::string& value) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)"));
  Rows r(s);
  r.Bind(1, key).Bind(2, value);
  if (r.Step() != SQLITE_DONE) return SqlError(db_, "write meta");
  return Status::OK();
}

Status IndexDb::Begin() { return Exec("BEGIN IMMEDIATE"); }
Status IndexDb::Commit() { return Exec("COMMIT"); }
void IndexDb::Rollback() {
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

StatusOr<std::map<std::string, FileStamp>> IndexDb::Stamps() {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT path, size, mtime_ns, sha256 FROM files"));
  Rows r(s);
  std::map<std::string, FileStamp> out;
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) out[r.Text(0)] = {r.Int(1), r.Int(2), r.Text(3)};
  if (rc != SQLITE_DONE) return SqlError(db_, "read files");
  return out;
}

StatusOr<int64_t> IndexDb::FileId(const std::string& path) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT id FROM files WHERE path=?1"));
  Rows r(s);
  r.Bind(1, path);
  int rc = r.Step();
  if (rc == SQLITE_ROW) return r.Int(0);
  if (rc == SQLITE_DONE) return int64_t{-1};
  return SqlError(db_, "read files");
}

Status IndexDb::Remove(const std::string& path) {
  ASSIGN_OR_RETURN(int64_t id, FileId(path));
  if (id < 0) return Status::OK();
  for (const char* sql :
       {"DELETE FROM symbols WHERE file=?1", "DELETE FROM refs WHERE file=?1", "DELETE FROM files WHERE id=?1"}) {
    ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(sql));
    Rows r(s);
    r.Bind(1, id);
    if (r.Step() != SQLITE_DONE) return SqlError(db_, "remove " + path);
  }
  return Status::OK();
}

Status IndexDb::Clear() {
  // Deleting rows one by one costs seconds on a large index; a new file
  // costs nothing.
  CloseStatements();
  sqlite3_close_v2(db_);
  db_ = nullptr;
  RemoveDbFiles(path_);
  std::string note;
  ASSIGN_OR_RETURN(std::unique_ptr<IndexDb> fresh, Open(path_, &note));
  std::swap(db_, fresh->db_);
  return Status::OK();
}

Status IndexDb::BeginBulk() { return Exec(kDropIndexes); }
Status IndexDb::EndBulk() { return Exec(kIndexes); }

Status IndexDb::Restamp(const std::string& path, int64_t size, int64_t mtime_ns) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("UPDATE files SET size=?2, mtime_ns=?3 WHERE path=?1"));
  Rows r(s);
  r.Bind(1, path).Bind(2, size).Bind(3, mtime_ns);
  if (r.Step() != SQLITE_DONE) return SqlError(db_, "restamp " + path);
  return Status::OK();
}

Status IndexDb::Put(const FileRecord& file, const FileSymbols& symbols) {
  RETURN_IF_ERROR(Remove(file.path));
  ASSIGN_OR_RETURN(sqlite3_stmt * fs,
                   Prepare("INSERT INTO files(path, language, sha256, size, mtime_ns, lines, has_errors) "
                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  {
    Rows r(fs);
    r.Bind(1, file.path)
        .Bind(2, std::string(LanguageName(file.language)))
        .Bind(3, file.sha256)
        .Bind(4, file.size)
        .Bind(5, file.mtime_ns)
        .Bind(6, static_cast<int64_t>(file.lines))
        .Bind(7, int64_t{file.has_errors ? 1 : 0});
    if (r.Step() != SQLITE_DONE) return SqlError(db_, "write " + file.path);
  }
  int64_t id = sqlite3_last_insert_rowid(db_);
  std::vector<std::string> ids;
  ids.reserve(symbols.symbols.size());
  for (const Symbol& sym : symbols.symbols) {
    ids.push_back(SymbolId(file.language, file.path, sym.kind, sym.qualified_name, sym.disambiguator));
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * ss, Prepare("INSERT OR REPLACE INTO symbols(id, file, kind, name, qname, start_byte, "
                                              "end_byte, start_line, end_line, parent) "
                                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  for (size_t i = 0; i < symbols.symbols.size(); ++i) {
    const Symbol& sym = symbols.symbols[i];
    Rows r(ss);
    r.Bind(1, ids[i])
        .Bind(2, id)
        .Bind(3, static_cast<int64_t>(sym.kind))
        .Bind(4, sym.name)
        .Bind(5, sym.qualified_name)
        .Bind(6, static_cast<int64_t>(sym.start_byte))
        .Bind(7, static_cast<int64_t>(sym.end_byte))
        .Bind(8, static_cast<int64_t>(sym.start_line))
        .Bind(9, static_cast<int64_t>(sym.end_line));
    if (sym.parent >= 0 && static_cast<size_t>(sym.parent) < ids.size()) {
      r.Bind(10, ids[static_cast<size_t>(sym.parent)]);
    } else {
      r.BindNull(10);
    }
    if (r.Step() != SQLITE_DONE) return SqlError(db_, "write symbols of " + file.path);
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * rs, Prepare("INSERT INTO refs(file, from_id, name, call, count, lines) "
                                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6)"));
  for (const Reference& ref : symbols.references) {
    Rows r(rs);
    r.Bind(1, id);
    if (ref.from >= 0 && static_cast<size_t>(ref.from) < ids.size()) {
      r.Bind(2, ids[static_cast<size_t>(ref.from)]);
    } else {
      r.BindNull(2);
    }
    r.Bind(3, ref.name)
        .Bind(4, int64_t{ref.call ? 1 : 0})
        .Bind(5, static_cast<int64_t>(ref.count))
        .Bind(6, JoinLines(ref.lines));
    if (r.Step() != SQLITE_DONE) return SqlError(db_, "write references of " + file.path);
  }
  return Status::OK();
}

StatusOr<std::vector<SymbolRow>> IndexDb::FindSymbols(const std::string& query, bool prefix,
                                                      std::optional<SymbolKind> kind, const std::string& path,
                                                      size_t limit) {
  // The candidates come by name (an index lookup); a qualified query is
  // looked up by its last part and checked against the qualified name.
  std::string last = query;
  size_t colon = query.rfind("::"), dot = query.rfind('.');
  size_t cut = std::string::npos, skip = 0;
  if (colon != std::string::npos) cut = colon, skip = 2;
  if (dot != std::string::npos && (cut == std::string::npos || dot > cut)) cut = dot, skip = 1;
  if (cut != std::string::npos) last = query.substr(cut + skip);
  bool qualified = cut != std::string::npos;
  // Two statements, made once (Prepare caches by the text's address): by
  // exact name, or by a range of names for a prefix.
  auto select = [](const char* match) {
    return std::string("SELECT ") + kSymbolColumns + " FROM symbols s JOIN files f ON f.id = s.file WHERE " + match +
           " AND (?3 < 0 OR s.kind = ?3) AND (?4 = '' OR f.path = ?4 OR substr(f.path, 1, length(?5)) = ?5)"
           " ORDER BY f.path, s.start_byte LIMIT ?6";
  };
  static const std::string kByName = select("s.name = ?1");
  static const std::string kByPrefix = select("s.name >= ?1 AND s.name < ?2");
  const std::string& text = prefix && !qualified ? kByPrefix : kByName;
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(text.c_str()));
  Rows r(s);
  std::string folder = path.empty() ? std::string() : (path.back() == '/' ? path : path + "/");
  r.Bind(1, last).Bind(2, last + "\xff\xff\xff").Bind(3, kind ? static_cast<int64_t>(*kind) : int64_t{-1});
  r.Bind(4, path).Bind(5, folder).Bind(6, static_cast<int64_t>(qualified ? limit * 20 : limit));
  std::vector<SymbolRow> out;
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) {
    SymbolRow row = ReadSymbol(r);
    if (qualified && row.qualified_name != query && !EndsWithQualified(row.qualified_name, query)) continue;
    if (prefix && !qualified && row.name.compare(0, last.size(), last) != 0) continue;
    out.push_back(std::move(row));
    if (out.size() >= limit) break;
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(db_, "find symbols");
  return out;
}

StatusOr<std::vector<std::string>> IndexDb::ClosestNames(const std::string& query, size_t limit) {
  std::string last = query.substr(query.find_last_of(".:") == std::string::npos ? 0 : query.find_last_of(".:") + 1);
  int64_t slack = std::max<int64_t>(2, static_cast<int64_t>(last.size()) / 3);
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT DISTINCT name FROM symbols WHERE length(name) BETWEEN ?1 AND ?2 LIMIT 200000"));
  Rows r(s);
  r.Bind(1, static_cast<int64_t>(last.size()) - slack).Bind(2, static_cast<int64_t>(last.size()) + slack);
  std::vector<std::pair<size_t, std::string>> scored;
  size_t cap = static_cast<size_t>(slack) + 1;
  std::string lower = last;
  for (char& ch : lower) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) {
    std::string name = r.Text(0);
    size_t d = EditDistance(last, name, cap);
    std::string lname = name;
    for (char& ch : lname) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    if (!lower.empty() && lname.find(lower) != std::string::npos) d = std::min<size_t>(d, 1);
    if (d <= cap) scored.emplace_back(d, std::move(name));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "closest names");
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, name] : scored) {
    if (out.size() >= limit) break;
    out.push_back(std::move(name));
  }
  return out;
}

StatusOr<std::optional<SymbolRow>> IndexDb::SymbolById(const std::string& id) {
  static const std::string sql =
      std::string("SELECT ") + kSymbolColumns + " FROM symbols s JOIN files f ON f.id = s.file WHERE s.id = ?1";
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(sql.c_str()));
  Rows r(s);
  r.Bind(1, id);
  int rc = r.Step();
  if (rc == SQLITE_ROW) return std::optional<SymbolRow>(ReadSymbol(r));
  if (rc == SQLITE_DONE) return std::optional<SymbolRow>();
  return SqlError(db_, "read symbol");
}

StatusOr<std::vector<SymbolRow>> IndexDb::FileSymbolsOf(const std::string& path) {
  static const std::string sql =
      std::string("SELECT ") + kSymbolColumns +
      " FROM symbols s JOIN files f ON f.id = s.file WHERE f.path = ?1 ORDER BY s.start_byte";
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(sql.c_str()));
  Rows r(s);
  r.Bind(1, path);
  std::vector<SymbolRow> out;
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) out.push_back(ReadSymbol(r));
  if (rc != SQLITE_DONE) return SqlError(db_, "read symbols");
  return out;
}

StatusOr<std::optional<FileRecord>> IndexDb::File(const std::string& path) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT path, language, sha256, size, mtime_ns, lines, has_errors FROM "
                                             "files WHERE path = ?1"));
  Rows r(s);
  r.Bind(1, path);
  int rc = r.Step();
  if (rc == SQLITE_DONE) return std::optional<FileRecord>();
  if (rc != SQLITE_ROW) return SqlError(db_, "read file");
  FileRecord f;
  f.path = r.Text(0);
  f.language = ParseLanguage(r.Text(1));
  f.sha256 = r.Text(2);
  f.size = r.Int(3);
  f.mtime_ns = r.Int(4);
  f.lines = static_cast<uint32_t>(r.Int(5));
  f.has_errors = r.Int(6) != 0;
  return std::optional<FileRecord>(std::move(f));
}

StatusOr<std::vector<ReferenceRow>> IndexDb::ReferencesTo(const std::string& name, size_t limit) {
  ASSIGN_OR_RETURN(sqlite3_stmt * s,
                   Prepare("SELECT f.path, r.from_id, coalesce(s.qname, ''), r.name, r.call, r.count, r.lines, "
                           "coalesce(s.name, '') "
                           "FROM refs r JOIN files f ON f.id = r.file LEFT JOIN symbols s ON s.id = r.from_id "
                           "WHERE r.name = ?1 ORDER BY f.path, r.lines LIMIT ?2"));
  Rows r(s);
  r.Bind(1, name).Bind(2, static_cast<int64_t>(limit));
  std::vector<ReferenceRow> out;
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) {
    ReferenceRow row;
    row.path = r.Text(0);
    row.from_id = r.Text(1);
    row.from_qualified_name = r.Text(2);
    row.from_name = r.Text(7);
    row.name = r.Text(3);
    row.call = r.Int(4) != 0;
    row.count = static_cast<uint32_t>(r.Int(5));
    row.lines = SplitLines(r.Text(6));
    out.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "read references");
  return out;
}

StatusOr<std::vector<std::pair<SymbolRow, int64_t>>> IndexDb::MostReferenced(size_t limit) {
  // A name's users are the files that use it, other than the one that
  // defines it; a name defined many times shares them out.
  static const std::string sql =
      std::string(
          "WITH uses AS (SELECT name, COUNT(DISTINCT file) AS files FROM refs GROUP BY name), "
          "defs AS (SELECT name, COUNT(*) AS n FROM symbols GROUP BY name) SELECT ") +
      kSymbolColumns +
      ", uses.files FROM symbols s JOIN files f ON f.id = s.file JOIN uses ON uses.name = s.name "
      "JOIN defs ON defs.name = s.name WHERE s.kind IN (0, 1, 2, 3, 4, 7) AND uses.files > 1 "
      "ORDER BY uses.files * 1.0 / defs.n DESC, f.path, s.start_byte LIMIT ?1";
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare(sql.c_str()));
  Rows r(s);
  r.Bind(1, static_cast<int64_t>(limit));
  std::vector<std::pair<SymbolRow, int64_t>> out;
  int rc;
  while ((rc = r.Step()) == SQLITE_ROW) out.emplace_back(ReadSymbol(r), r.Int(12));
  if (rc != SQLITE_DONE) return SqlError(db_, "rank symbols");
  return out;
}

StatusOr<IndexStats> IndexDb::Stats() {
  IndexStats st;
  ASSIGN_OR_RETURN(sqlite3_stmt * s, Prepare("SELECT language, COUNT(*), SUM(lines), SUM(has_errors) FROM files "
                                             "GROUP BY language ORDER BY language"));
  {
    Rows r(s);
    int rc;
    while ((rc = r.Step()) == SQLITE_ROW) {
      st.files_by_language[r.Text(0)] = r.Int(1);
      st.files += r.Int(1);
      st.lines += r.Int(2);
      st.files_with_errors += r.Int(3);
    }
    if (rc != SQLITE_DONE) return SqlError(db_, "stats");
  }
  for (auto [sql, field] : {std::pair{"SELECT COUNT(*) FROM symbols", &st.symbols},
                            std::pair{"SELECT COUNT(*) FROM refs", &st.references}}) {
    ASSIGN_OR_RETURN(sqlite3_stmt * q, Prepare(sql));
    Rows r(q);
    if (r.Step() != SQLITE_ROW) return SqlError(db_, "stats");
    *field = r.Int(0);
  }
  return st;
}

}  // namespace odin::index
