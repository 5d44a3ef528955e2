#pragma once
// What the ledger's files share, private to ledger/ (ledger.cc writes and
// verifies, ledger_queries.cc reads, ledger_reset.cc resets): how rows come
// back out of SQLite, and where a ledger and its anchor live.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger.h"

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

}  // namespace odin

namespace odin::ledger_internal {

using Value = Ledger::Value;

// The hash chain's encoding (ledger_schema.cc): the tables, their SQL, the
// bytes each record's hash covers. The writer and the verifiers share it,
// so the encoding has one definition.
struct Column {
  const char* name;
  const char* type;
};
struct TableDef {
  const char* name;
  std::vector<Column> columns;  // besides seq (first) and hash (last)
};

// The chained tables, in the order the chain was defined. Adding a column
// changes hashes: bump kSchemaVersion.
const std::vector<TableDef>& Tables();
// 5 added the mutations table, 6 the conversation table, 7 llm_cache. An older ledger
// is upgraded in place by the first writer (its records and hashes stay as
// they are); a reader of one sees those tables empty.
constexpr int kSchemaVersion = 7;
constexpr int kOldestSchemaVersion = 4;
bool SupportedSchema(const std::string& version);
// The CREATE TABLE statement of a chained table (prefix: "" or "TEMP ").
std::string CreateTableSql(const TableDef& t, const char* prefix);
// The hash before the first record.
extern const std::string kGenesisHash;
// The bytes a record's hash covers: the previous hash, the table, then every
// column with a type tag and a length, so no two records encode alike.
std::string HashRecord(const std::string& prev_hash, std::string_view table, int64_t seq,
                       const std::vector<Value>& values);
Value ReadColumn(sqlite3_stmt* st, int i);
// "1 record", "2 records".
std::string Plural(int64_t n, const char* one, const char* many);

std::string ColumnText(sqlite3_stmt* st, int i);
std::string ColumnBlob(sqlite3_stmt* st, int i);

// Finalizes a statement when it goes out of scope.
struct Stmt {
  sqlite3_stmt* st = nullptr;
  ~Stmt() { sqlite3_finalize(st); }
};

// "<columns> FROM execution_starts s LEFT JOIN execution_ends e ...", read by ReadExecution.
extern const char kExecutionColumns[];
ExecutionRow ReadExecution(sqlite3_stmt* st);

// "<columns> FROM validations", read by ReadValidation.
extern const char kValidationColumns[];
ValidationRecord ReadValidation(sqlite3_stmt* st);

// The names of the hash-chained tables (ledger.cc).
std::vector<std::string> ChainedTables();

// path made absolute (against the current directory).
std::string AbsolutePath(const std::string& path);
// The anchor of the ledger at path, or null with *note saying why none is kept.
std::unique_ptr<LedgerAnchor> AnchorFor(const std::string& path, const LedgerOptions& o, std::string* note);
// A file name for SQLite's URI form (percent-encoding what would end the path).
std::string UriPath(const std::string& path);

}  // namespace odin::ledger_internal
