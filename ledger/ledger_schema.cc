#include <sqlite3.h>

#include <string>
#include <vector>

#include "base/sha256.h"
#include "ledger/ledger_internal.h"

namespace odin::ledger_internal {

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
      // Of an llm_calls record, the tokens served from the provider's prompt
      // cache and written to it (when there were any).
      {"llm_cache",
       {{"call_id", "TEXT NOT NULL"},
        {"cache_read_tokens", "INTEGER NOT NULL"},
        {"cache_write_tokens", "INTEGER NOT NULL"}}},
  };
  return kTables;
}

bool SupportedSchema(const std::string& version) {
  for (int v = kOldestSchemaVersion; v <= kSchemaVersion; ++v) {
    if (version == std::to_string(v)) return true;
  }
  return false;
}

std::string CreateTableSql(const TableDef& t, const char* prefix) {
  std::string sql = std::string("CREATE ") + prefix + "TABLE IF NOT EXISTS " + t.name + " (seq INTEGER PRIMARY KEY";
  for (const Column& c : t.columns) sql += std::string(", ") + c.name + " " + c.type;
  return sql + ", hash TEXT NOT NULL) STRICT;";
}
const std::string kGenesisHash(64, '0');

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

}  // namespace odin::ledger_internal
