#include "ledger/ledger.h"

// The ledger's verifiers: the whole chain recomputed against its anchor
// (Verify), a snapshot's (VerifySnapshot), the schema's own tampering; and
// the one log of the ledger's write failures.

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

using namespace ledger_internal;

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
  // Version 5 added mutations, 6 conversation, 7 llm_cache.
  auto since = [](const std::string& table) {
    return table == "llm_cache" ? 7 : table == "conversation" ? 6 : table == "mutations" ? 5 : kOldestSchemaVersion;
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
