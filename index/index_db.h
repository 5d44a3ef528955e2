#pragma once
// IndexDb: the symbol index of one workspace, in its own SQLite file
// (.odin/index.db, never the ledger). It is a cache of what the files say:
// a file of another schema version, or one SQLite cannot read, is replaced
// by an empty index (and the caller told so), then filled again.
//
// The coordinator owns it: it writes what the read-only workers parsed and
// answers the query tools from it. Thread-safety: none.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/symbols.h"

struct sqlite3;
struct sqlite3_stmt;

namespace odin::index {

// What the index remembers of a file's state on disk, to tell whether it
// must be parsed again.
struct FileStamp {
  int64_t size = -1;
  int64_t mtime_ns = 0;
  std::string sha256;
};

struct FileRecord {
  std::string path;  // relative to the workspace
  Language language = Language::kNone;
  std::string sha256;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  uint32_t lines = 0;
  bool has_errors = false;
};

// A symbol as the queries return it.
struct SymbolRow {
  std::string id;
  std::string path;
  Language language = Language::kNone;
  SymbolKind kind = SymbolKind::kFunction;
  std::string name;
  std::string qualified_name;
  uint32_t start_byte = 0, end_byte = 0, start_line = 0, end_line = 0;
  std::string parent_id;
  bool file_has_errors = false;
};

// A name used somewhere: which file and symbol use it, where.
struct ReferenceRow {
  std::string path;
  std::string from_id;  // "" at file level
  std::string from_qualified_name;
  std::string from_name;  // its last part, as written
  std::string name;
  bool call = false;
  uint32_t count = 0;
  std::vector<uint32_t> lines;
};

struct IndexStats {
  int64_t files = 0, symbols = 0, references = 0, lines = 0, files_with_errors = 0;
  std::map<std::string, int64_t> files_by_language;
};

class IndexDb {
 public:
  // Opens (creating) the index at path. When the file is of another
  // version or cannot be read, it is replaced and *note says so in one line.
  static StatusOr<std::unique_ptr<IndexDb>> Open(const std::string& path, std::string* note);
  ~IndexDb();
  IndexDb(const IndexDb&) = delete;
  IndexDb& operator=(const IndexDb&) = delete;

  // A value of the index's own (meta table), "" when unset.
  StatusOr<std::string> GetMeta(const std::string& key);
  Status SetMeta(const std::string& key, const std::string& value);

  // Every indexed file's stamp, by path.
  StatusOr<std::map<std::string, FileStamp>> Stamps();

  // Writes happen in a transaction: Begin, any number of Put/Remove, Commit.
  Status Begin();
  Status Commit();
  // Abandons the open transaction, if any (after a failed write).
  void Rollback();
  // Replaces what the index holds of file.path with symbols.
  Status Put(const FileRecord& file, const FileSymbols& symbols);
  // Only the stamp changed (a touch): the symbols stand.
  Status Restamp(const std::string& path, int64_t size, int64_t mtime_ns);
  Status Remove(const std::string& path);
  // Empties the index (odin index --rebuild): the file is made again.
  Status Clear();
  // Many files are about to be written (a first index, a rebuild): the
  // secondary indexes go until EndBulk makes them again, which is faster
  // than keeping them up to date row by row. Queries wait for EndBulk.
  Status BeginBulk();
  Status EndBulk();

  // Symbols whose name or qualified name is query, or whose qualified name
  // ends with a separator and query ("Server::Start" finds
  // "app::Server::Start"); with prefix, whose name starts with query. Kind
  // and path (a file, or a folder prefix) narrow it. At most limit rows.
  StatusOr<std::vector<SymbolRow>> FindSymbols(const std::string& query, bool prefix, std::optional<SymbolKind> kind,
                                               const std::string& path, size_t limit);
  // The indexed names nearest to query (edit distance), at most limit.
  StatusOr<std::vector<std::string>> ClosestNames(const std::string& query, size_t limit);
  StatusOr<std::optional<SymbolRow>> SymbolById(const std::string& id);
  // A file's symbols in order of position.
  StatusOr<std::vector<SymbolRow>> FileSymbolsOf(const std::string& path);
  StatusOr<std::optional<FileRecord>> File(const std::string& path);
  // The uses of name, across the workspace, at most limit.
  StatusOr<std::vector<ReferenceRow>> ReferencesTo(const std::string& name, size_t limit);
  // Symbols most used from other files: (symbol, number of files using its
  // name), best first.
  StatusOr<std::vector<std::pair<SymbolRow, int64_t>>> MostReferenced(size_t limit);
  StatusOr<IndexStats> Stats();

 private:
  IndexDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const char* sql);
  StatusOr<sqlite3_stmt*> Prepare(const char* sql);
  StatusOr<int64_t> FileId(const std::string& path);

  void CloseStatements();

  sqlite3* db_;
  std::string path_;
  std::map<const char*, sqlite3_stmt*> statements_;
};

}  // namespace odin::index
