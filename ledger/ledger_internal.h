#pragma once
// What the ledger's files share, private to ledger/ (ledger.cc writes and
// verifies, ledger_queries.cc reads, ledger_reset.cc resets): how rows come
// back out of SQLite, and where a ledger and its anchor live.

#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "ledger/ledger.h"

namespace odin::ledger_internal {

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
