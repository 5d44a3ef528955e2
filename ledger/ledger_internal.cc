#include "ledger/ledger_internal.h"

#include "base/file_util.h"

namespace odin::ledger_internal {

std::string ColumnText(sqlite3_stmt* st, int i) {
  const unsigned char* p = sqlite3_column_text(st, i);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st, i)))
           : std::string();
}

std::string ColumnBlob(sqlite3_stmt* st, int i) {
  const void* p = sqlite3_column_blob(st, i);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st, i))) : std::string();
}

const char kExecutionColumns[] =
    "s.seq, s.execution_id, s.session_id, s.agent_id, s.tool, s.args_json, s.mode, s.worker_id, "
    "s.started_at_ms, s.parent_id, e.seq, e.status, e.exit_code, e.exit_reason, e.finished_at_ms, e.duration_us, "
    "e.output_head, e.output_tail, e.output_bytes, e.error, e.result_json "
    "FROM execution_starts s LEFT JOIN execution_ends e ON e.execution_id = s.execution_id";

ExecutionRow ReadExecution(sqlite3_stmt* st) {
  ExecutionRow row;
  row.seq = sqlite3_column_int64(st, 0);
  row.start.execution_id = ColumnText(st, 1);
  row.start.session_id = ColumnText(st, 2);
  row.start.agent_id = ColumnText(st, 3);
  row.start.tool = ColumnText(st, 4);
  row.start.args_json = ColumnText(st, 5);
  row.start.mode = ColumnText(st, 6);
  row.start.worker_id = ColumnText(st, 7);
  row.start.started_at_ms = sqlite3_column_int64(st, 8);
  row.start.parent_id = ColumnText(st, 9);
  if (sqlite3_column_type(st, 10) != SQLITE_NULL) {
    ExecutionEnd e;
    e.execution_id = row.start.execution_id;
    e.status = ColumnText(st, 11);
    if (sqlite3_column_type(st, 12) != SQLITE_NULL) e.exit_code = sqlite3_column_int(st, 12);
    e.exit_reason = ColumnText(st, 13);
    e.finished_at_ms = sqlite3_column_int64(st, 14);
    e.duration_us = sqlite3_column_int64(st, 15);
    e.output_head = ColumnBlob(st, 16);
    e.output_tail = ColumnBlob(st, 17);
    e.output_bytes = sqlite3_column_int64(st, 18);
    e.error = ColumnText(st, 19);
    e.result_json = ColumnText(st, 20);
    row.end = std::move(e);
  }
  return row;
}

const char kValidationColumns[] =
    "execution_id, session_id, agent_id, mutation_id, path, status, validator, new_errors, reason, summary, "
    "latency_us, created_at_ms FROM validations";

ValidationRecord ReadValidation(sqlite3_stmt* st) {
  ValidationRecord v;
  v.execution_id = ColumnText(st, 0);
  v.session_id = ColumnText(st, 1);
  v.agent_id = ColumnText(st, 2);
  v.mutation_id = ColumnText(st, 3);
  v.path = ColumnText(st, 4);
  v.status = ColumnText(st, 5);
  v.validator = ColumnText(st, 6);
  v.new_errors = sqlite3_column_int64(st, 7);
  v.reason = ColumnText(st, 8);
  v.summary = ColumnText(st, 9);
  v.latency_us = sqlite3_column_int64(st, 10);
  v.created_at_ms = sqlite3_column_int64(st, 11);
  return v;
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return JoinPath(cwd, path);
}

// The anchor of the ledger at path, or null with *note saying why none is kept.
std::unique_ptr<LedgerAnchor> AnchorFor(const std::string& path, const LedgerOptions& o, std::string* note) {
  if (!o.anchored) {
    *note = "not kept (turned off)";
    return nullptr;
  }
  std::string dir = o.anchor_dir;
  if (dir.empty()) {
    StatusOr<std::string> d = LedgerAnchor::DefaultDir();
    if (!d.ok()) {
      *note = "not kept: " + d.status().message();
      return nullptr;
    }
    dir = *d;
  }
  return std::make_unique<LedgerAnchor>(dir, path);
}

// A file name for SQLite's URI form (percent-encoding what would end the path).
std::string UriPath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace odin::ledger_internal
