#pragma once
// The rows of a ledger query, for integration tests that check what was
// recorded: each row's columns joined by '|'. (SQLite stays out of
// test_util.h.)

#include <sqlite3.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace odin::testing {

// Runs sql (one optional text parameter, bound when not empty) on the ledger
// at db_path, read-only. A query that does not prepare is a test failure.
inline std::vector<std::string> LedgerRows(const std::string& db_path, const std::string& sql,
                                           const std::string& bind = "") {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << "bad query: " << sqlite3_errmsg(db) << ": " << sql;
    } else {
      if (!bind.empty()) sqlite3_bind_text(st, 1, bind.c_str(), -1, SQLITE_TRANSIENT);
      while (sqlite3_step(st) == SQLITE_ROW) {
        std::string row;
        for (int i = 0; i < sqlite3_column_count(st); ++i) {
          const unsigned char* v = sqlite3_column_text(st, i);
          row += (i ? "|" : "") + std::string(v ? reinterpret_cast<const char*>(v) : "");
        }
        out.push_back(row);
      }
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

}  // namespace odin::testing
