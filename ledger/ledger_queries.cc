// The ledger's readers: sessions, executions, validations, diagnostics,
// gate events, artifacts and usage, as records.
#include <sqlite3.h>

#include "ledger/ledger.h"
#include "ledger/ledger_internal.h"

namespace odin {

using namespace ledger_internal;

StatusOr<std::vector<ValidationRecord>> Ledger::ListValidations(const std::string& session_id) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kValidationColumns + " WHERE session_id = ? ORDER BY seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list validations", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<ValidationRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) out.push_back(ReadValidation(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list validations", rc);
  return out;
}

StatusOr<std::vector<DiagnosticRecord>> Ledger::ListDiagnostics(const std::string& execution_id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT execution_id, path, line, column, severity, code, message, source, is_new "
                              "FROM diagnostics WHERE execution_id = ? ORDER BY seq",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list diagnostics", rc);
  sqlite3_bind_text(s.st, 1, execution_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<DiagnosticRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    DiagnosticRecord d;
    d.execution_id = ColumnText(s.st, 0);
    d.path = ColumnText(s.st, 1);
    d.line = sqlite3_column_int64(s.st, 2);
    d.column = sqlite3_column_int64(s.st, 3);
    d.severity = sqlite3_column_int64(s.st, 4);
    d.code = ColumnText(s.st, 5);
    d.message = ColumnText(s.st, 6);
    d.source = ColumnText(s.st, 7);
    d.is_new = sqlite3_column_int(s.st, 8) != 0;
    out.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return SqliteError("list diagnostics", rc);
  return out;
}

StatusOr<std::vector<GateEvent>> Ledger::ReadGateEvents(sqlite3_stmt* st) {
  std::vector<GateEvent> out;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    out.push_back({ColumnText(st, 0), ColumnText(st, 1), ColumnText(st, 2), ColumnText(st, 3), ColumnText(st, 4),
                   ColumnText(st, 5), ColumnText(st, 6), sqlite3_column_int64(st, 7)});
  }
  if (rc != SQLITE_DONE) return SqliteError("list gate events", rc);
  return out;
}

StatusOr<std::vector<GateEvent>> Ledger::ListGateEvents(const std::string& session_id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT id, session_id, agent_id, message_id, kind, execution_id, detail_json, "
                              "created_at_ms FROM gate_events WHERE session_id = ? ORDER BY seq",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list gate events", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  return ReadGateEvents(s.st);
}

StatusOr<std::vector<GateEvent>> Ledger::ListGateEventsOfKind(const std::string& kind, int limit) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT id, session_id, agent_id, message_id, kind, execution_id, detail_json, "
                              "created_at_ms FROM gate_events WHERE kind = ? ORDER BY seq DESC LIMIT ?",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list gate events", rc);
  sqlite3_bind_text(s.st, 1, kind.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(s.st, 2, limit);
  return ReadGateEvents(s.st);
}

StatusOr<SessionUsage> Ledger::UsageOf(const std::string& session_id, int64_t since_ms, const std::string& agent_id) {
  Stmt s;
  // cost_microusd is -1 for a call whose model has no price.
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT COUNT(*), COALESCE(SUM(l.input_tokens),0), COALESCE(SUM(l.output_tokens),0), "
                              "COALESCE(SUM(MAX(l.cost_microusd,0)),0), COALESCE(SUM(l.cost_microusd < 0),0), "
                              "COALESCE(SUM(c.cache_read_tokens),0), COALESCE(SUM(c.cache_write_tokens),0) "
                              "FROM llm_calls l LEFT JOIN llm_cache c ON c.call_id = l.id WHERE l.session_id = ? "
                              "AND l.started_at_ms >= ? AND (? = '' OR l.agent_id = ?)",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("usage", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s.st, 2, since_ms);
  sqlite3_bind_text(s.st, 3, agent_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.st, 4, agent_id.c_str(), -1, SQLITE_TRANSIENT);
  if ((rc = sqlite3_step(s.st)) != SQLITE_ROW) return SqliteError("usage", rc);
  SessionUsage u;
  u.llm_calls = sqlite3_column_int64(s.st, 0);
  u.input_tokens = sqlite3_column_int64(s.st, 1);
  u.output_tokens = sqlite3_column_int64(s.st, 2);
  u.cost_microusd = sqlite3_column_int64(s.st, 3);
  u.unpriced_calls = sqlite3_column_int64(s.st, 4);
  u.cache_read_tokens = sqlite3_column_int64(s.st, 5);
  u.cache_write_tokens = sqlite3_column_int64(s.st, 6);
  return u;
}

StatusOr<std::vector<ExecutionRow>> Ledger::ListExecutions(int limit) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kExecutionColumns + " ORDER BY s.seq DESC LIMIT ?";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list executions", rc);
  sqlite3_bind_int(s.st, 1, limit);
  std::vector<ExecutionRow> rows;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) rows.push_back(ReadExecution(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list executions", rc);
  return rows;
}

StatusOr<std::vector<ExecutionRow>> Ledger::ListToolExecutions(const std::string& tool) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kExecutionColumns + " WHERE s.tool = ? ORDER BY s.seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list executions of a tool", rc);
  sqlite3_bind_text(s.st, 1, tool.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<ExecutionRow> rows;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) rows.push_back(ReadExecution(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list executions of a tool", rc);
  return rows;
}

StatusOr<std::vector<ExecutionRow>> Ledger::ListSessionExecutions(const std::string& session_id) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kExecutionColumns + " WHERE s.session_id = ? ORDER BY s.seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list session executions", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<ExecutionRow> rows;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) rows.push_back(ReadExecution(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list session executions", rc);
  return rows;
}

StatusOr<SessionRecord> Ledger::FindSession(const std::string& id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_, "SELECT id, kind, workspace, created_at_ms FROM sessions WHERE id = ?", -1, &s.st,
                              nullptr);
  if (rc != SQLITE_OK) return SqliteError("find session", rc);
  sqlite3_bind_text(s.st, 1, id.c_str(), -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(s.st);
  if (rc == SQLITE_DONE) return Status::NotFound("session " + id, "no such session in the ledger");
  if (rc != SQLITE_ROW) return SqliteError("find session", rc);
  return SessionRecord{ColumnText(s.st, 0), ColumnText(s.st, 1), ColumnText(s.st, 2), sqlite3_column_int64(s.st, 3)};
}

StatusOr<ExecutionRow> Ledger::FindExecution(const std::string& id) {
  for (char c : id) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Status::InvalidArgument("execution id '" + id + "'", "unexpected character");
    }
  }
  Stmt s;
  std::string sql = std::string("SELECT ") + kExecutionColumns +
                    " WHERE s.execution_id = ?1 OR s.execution_id LIKE ?2 ORDER BY s.execution_id = ?1 DESC LIMIT 2";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("find execution", rc);
  std::string like = id + "%";
  sqlite3_bind_text(s.st, 1, id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.st, 2, like.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<ExecutionRow> rows;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) rows.push_back(ReadExecution(s.st));
  if (rc != SQLITE_DONE) return SqliteError("find execution", rc);
  if (rows.empty()) return Status::NotFound("execution " + id, "no such execution in the ledger");
  if (rows.size() > 1 && rows[0].start.execution_id != id) {
    return Status::InvalidArgument("execution " + id, "ambiguous prefix; give more characters");
  }
  return rows[0];
}

StatusOr<std::vector<Artifact>> Ledger::ListArtifacts(const std::string& execution_id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT id, execution_id, kind, content, size, truncated, sha256 FROM artifacts "
                              "WHERE execution_id = ? ORDER BY seq",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list artifacts", rc);
  sqlite3_bind_text(s.st, 1, execution_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<Artifact> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    Artifact a;
    a.id = ColumnText(s.st, 0);
    a.execution_id = ColumnText(s.st, 1);
    a.kind = ColumnText(s.st, 2);
    a.content = ColumnBlob(s.st, 3);
    a.size = sqlite3_column_int64(s.st, 4);
    a.truncated = sqlite3_column_int(s.st, 5) != 0;
    a.sha256 = ColumnText(s.st, 6);
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE) return SqliteError("list artifacts", rc);
  return out;
}

namespace {

constexpr char kMutationColumns[] =
    "id, session_id, agent_id, execution_id, source, path, change, file_type, before_sha256, before_size, "
    "before_mode, after_sha256, after_size, after_mode, link_target, before_artifact, undoable, entries, "
    "lines_added, lines_removed, note, created_at_ms FROM mutations";

MutationRecord ReadMutation(sqlite3_stmt* st) {
  MutationRecord m;
  int i = 0;
  auto text = [&] { return ColumnText(st, i++); };
  auto num = [&] { return sqlite3_column_int64(st, i++); };
  m.id = text();
  m.session_id = text();
  m.agent_id = text();
  m.execution_id = text();
  m.source = text();
  m.path = text();
  m.change = text();
  m.file_type = text();
  m.before_sha256 = text();
  m.before_size = num();
  m.before_mode = num();
  m.after_sha256 = text();
  m.after_size = num();
  m.after_mode = num();
  m.link_target = text();
  m.before_artifact = text();
  m.undoable = num() != 0;
  m.entries = num();
  m.lines_added = num();
  m.lines_removed = num();
  m.note = text();
  m.created_at_ms = num();
  return m;
}

}  // namespace

StatusOr<std::vector<MutationRecord>> Ledger::ListMutations(const std::string& session_id) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kMutationColumns + " WHERE session_id = ? ORDER BY seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list mutations", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<MutationRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) out.push_back(ReadMutation(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list mutations", rc);
  return out;
}

StatusOr<std::vector<MutationRecord>> Ledger::ListMutationsOf(const std::string& execution_id) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kMutationColumns + " WHERE execution_id = ? ORDER BY seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list mutations", rc);
  sqlite3_bind_text(s.st, 1, execution_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<MutationRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) out.push_back(ReadMutation(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list mutations", rc);
  return out;
}

StatusOr<std::vector<MutationRecord>> Ledger::ListRecentMutations(int limit) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kMutationColumns + " ORDER BY seq DESC LIMIT ?";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list mutations", rc);
  sqlite3_bind_int(s.st, 1, limit);
  std::vector<MutationRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) out.push_back(ReadMutation(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list mutations", rc);
  return out;
}

namespace {

constexpr char kMessageColumns[] = "id, session_id, agent_id, role, mode, text, status, created_at_ms FROM messages";

MessageRecord ReadMessage(sqlite3_stmt* st) {
  return {ColumnText(st, 0), ColumnText(st, 1), ColumnText(st, 2), ColumnText(st, 3),
          ColumnText(st, 4), ColumnText(st, 5), ColumnText(st, 6), sqlite3_column_int64(st, 7)};
}

}  // namespace

StatusOr<std::vector<MessageRecord>> Ledger::ListMessages(const std::string& session_id) {
  Stmt s;
  std::string sql = std::string("SELECT ") + kMessageColumns + " WHERE session_id = ? ORDER BY seq";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list messages", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<MessageRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) out.push_back(ReadMessage(s.st));
  if (rc != SQLITE_DONE) return SqliteError("list messages", rc);
  return out;
}

StatusOr<std::vector<ConversationEntry>> Ledger::ListConversation(const std::string& session_id,
                                                                  const std::string& agent_id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT id, session_id, agent_id, kind, content_json, created_at_ms FROM conversation "
                              "WHERE session_id = ? AND agent_id = ? ORDER BY seq",
                              -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("list conversation", rc);
  sqlite3_bind_text(s.st, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.st, 2, agent_id.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<ConversationEntry> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    out.push_back({ColumnText(s.st, 0), ColumnText(s.st, 1), ColumnText(s.st, 2), ColumnText(s.st, 3),
                   ColumnText(s.st, 4), sqlite3_column_int64(s.st, 5)});
  }
  if (rc != SQLITE_DONE) return SqliteError("list conversation", rc);
  return out;
}

StatusOr<std::vector<SessionRecord>> Ledger::ListSessions() {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_, "SELECT id, kind, workspace, created_at_ms FROM sessions ORDER BY seq", -1, &s.st,
                              nullptr);
  if (rc != SQLITE_OK) return SqliteError("list sessions", rc);
  std::vector<SessionRecord> out;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    out.push_back({ColumnText(s.st, 0), ColumnText(s.st, 1), ColumnText(s.st, 2), sqlite3_column_int64(s.st, 3)});
  }
  if (rc != SQLITE_DONE) return SqliteError("list sessions", rc);
  return out;
}

StatusOr<MessageRecord> Ledger::FindMessage(const std::string& id) {
  for (char c : id) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Status::InvalidArgument("message id '" + id + "'", "unexpected character");
    }
  }
  Stmt s;
  std::string sql =
      std::string("SELECT ") + kMessageColumns + " WHERE id = ?1 OR id LIKE ?2 ORDER BY id = ?1 DESC LIMIT 2";
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.st, nullptr);
  if (rc != SQLITE_OK) return SqliteError("find message", rc);
  std::string like = id + "%";
  sqlite3_bind_text(s.st, 1, id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s.st, 2, like.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<MessageRecord> rows;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) rows.push_back(ReadMessage(s.st));
  if (rc != SQLITE_DONE) return SqliteError("find message", rc);
  if (rows.empty()) return Status::NotFound("message " + id, "no such message in the ledger");
  if (rows.size() > 1 && rows[0].id != id) return Status::InvalidArgument("message " + id, "ambiguous prefix");
  return rows[0];
}

StatusOr<std::string> Ledger::ReadBeforeImage(const std::string& artifact_id) {
  Stmt s;
  int rc = sqlite3_prepare_v2(db_, "SELECT content FROM artifacts WHERE id = ? AND kind = 'before_image'", -1, &s.st,
                              nullptr);
  if (rc != SQLITE_OK) return SqliteError("read before-image", rc);
  sqlite3_bind_text(s.st, 1, artifact_id.c_str(), -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(s.st);
  if (rc == SQLITE_ROW) return ColumnBlob(s.st, 0);
  if (rc != SQLITE_DONE) return SqliteError("read before-image", rc);
  return Status::NotFound("ledger " + path_, "no before-image " + artifact_id);
}

}  // namespace odin
