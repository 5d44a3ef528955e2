#pragma once
// Ledger: the execution ledger, an append-only SQLite database (WAL mode) at
// <workspace>/.odin/odin.db.
//
// Every record (a session, the start of a call, the end of a call, an
// artifact) is one row, numbered by a ledger-wide sequence and carrying a
// SHA-256 chained to the previous record's hash, so Verify() detects any row
// edited, inserted or deleted behind the ledger's back. Rows are never updated
// or deleted (triggers refuse it). A call's start and its end are separate
// records: a crash mid-call leaves a start with no end, shown as "started".
// Secrets are redacted by the Redactor before anything is written.
//
// Several processes may append to one ledger; SQLite's write lock orders them
// and each append re-reads the chain head if another process wrote meanwhile.
//
// The chain cannot show records missing at its end, so the newest record is
// also anchored outside the workspace after each commit (ledger_anchor.h): a
// ledger that ends before its anchor, is missing or empty is refused by every
// Open, never silently started anew; `odin ledger reset` (Reset) is the
// deliberate way to start over.
//
// Thread-safety: none; one Ledger belongs to one loop.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/secrets.h"
#include "base/status.h"
#include "ledger/ledger_anchor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace odin {

struct SessionRecord {
  std::string id;
  std::string kind;       // "exec", "tool", "agent"
  std::string workspace;  // absolute path
  int64_t created_at_ms = 0;
};

// One entry of an agent's conversation as the model saw it, in order: a
// user message, an assistant message with its tool calls, the tool
// results, a compaction, a clear, the odin process that owns the session.
// Enough to rebuild the conversation on resume.
struct ConversationEntry {
  std::string id;
  std::string session_id;
  std::string agent_id;
  std::string kind;          // user, assistant, tool_results, compaction, clear, owner
  std::string content_json;  // the entry (secrets redacted like every record)
  int64_t created_at_ms = 0;
};

struct ExecutionStart {
  std::string execution_id;
  std::string session_id;
  std::string agent_id;  // "main" for the top-level agent
  std::string tool;
  std::string args_json;  // canonical
  std::string mode;       // "ask", "plan", "edit" (or "exec" for odin exec)
  std::string worker_id;
  int64_t started_at_ms = 0;
  std::string parent_id;  // the execution this one serves (a write's lsp_check), or ""
};

struct ExecutionEnd {
  std::string execution_id;
  std::string status;  // ok, error, rejected, timed_out, crashed, cancelled
  std::optional<int> exit_code;
  std::string exit_reason;  // normal, timeout, killed, crashed, sandbox_setup_failed, ...
  int64_t finished_at_ms = 0;
  int64_t duration_us = 0;
  std::string output_head;  // bytes
  std::string output_tail;  // bytes
  int64_t output_bytes = 0;
  std::string error;        // "" when none
  std::string result_json;  // the tool's structured result (never file contents), or ""
};

struct Artifact {
  std::string id;
  std::string execution_id;
  std::string kind;        // "output": the command's combined output
  std::string content;     // bytes, possibly cut at the configured cap
  int64_t size = 0;        // size of the whole original, in bytes
  bool truncated = false;  // content holds only the first bytes of the original
  std::string sha256;      // of content as stored (filled by the ledger)
};

// A message of the conversation: what the user asked, what the agent answered.
struct MessageRecord {
  std::string id;
  std::string session_id;
  std::string agent_id;
  std::string role;  // "user" or "assistant"
  std::string mode;  // ask, plan, edit
  std::string text;
  std::string status;  // user: "queued"; assistant: done, error, cancelled, max_turns
  int64_t created_at_ms = 0;
};

// One request to a model, with what it cost.
struct LlmCallRecord {
  std::string id;
  std::string session_id;
  std::string agent_id;
  std::string role;      // "planner" or "utility"
  std::string provider;  // openai, anthropic, demo
  std::string model;
  int64_t started_at_ms = 0;
  int64_t duration_us = 0;
  int64_t input_tokens = 0;  // all of the request's, the cache's included
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;   // of input_tokens: served from the provider's prompt cache
  int64_t cache_write_tokens = 0;  // of input_tokens: written to it
  int64_t cost_microusd = 0;       // millionths of a US dollar; -1: the model has no price
  std::string status;              // ok, error
  int64_t attempts = 1;            // HTTP requests it took, retries included
  std::string error;
};

// What validated one file after a mutation (or when the model asked), and
// the verdict: clean, errors, timed_out or no_validator.
struct ValidationRecord {
  std::string execution_id;  // the lsp_check execution
  std::string session_id;
  std::string agent_id;
  std::string mutation_id;  // the write it validates; "" when the model asked
  std::string path;         // absolute
  std::string status;       // clean, errors, timed_out, no_validator
  std::string validator;    // "clangd", "g++ -fsyntax-only", ...
  int64_t new_errors = 0;   // errors not in the baseline
  std::string reason;       // why timed_out or no_validator
  std::string summary;      // what the model was shown
  int64_t latency_us = 0;   // content sent to diagnostics received
  int64_t created_at_ms = 0;
};

// One diagnostic a validation found.
struct DiagnosticRecord {
  std::string execution_id;  // the lsp_check execution
  std::string path;          // absolute
  int64_t line = 0;          // 1-based
  int64_t column = 0;        // 1-based
  int64_t severity = 1;      // 1 error, 2 warning, 3 information, 4 hint
  std::string code;
  std::string message;
  std::string source;
  bool is_new = false;  // not in the baseline
};

// A decision of a gate the conversation cannot see otherwise: a backpressure
// check's result ("check"), a refused completion ("completion_refused"), a
// run given up ("not_converged").
struct GateEvent {
  std::string id;
  std::string session_id;
  std::string agent_id;
  std::string message_id;
  std::string kind;
  std::string execution_id;  // the execution it concerns, if any
  std::string detail_json;
  int64_t created_at_ms = 0;
};

// One path a call changed (or that changed between calls): the one record
// of change that the report, changed_files, memory_query and undo read.
// File-tool writes and commands' change sets alike become these.
struct MutationRecord {
  std::string id;  // "mut_..."
  std::string session_id;
  std::string agent_id;
  std::string execution_id;   // the call that made it; "" for an external change
  std::string source;         // file_tool, command, external, undo
  std::string path;           // absolute; for an ignored summary, the ignored directory
  std::string change;         // created, modified, deleted, ignored (a summary of `entries` changes)
  std::string file_type;      // file, symlink, directory, other (after; before for a deletion)
  std::string before_sha256;  // "" when it did not exist or is not known
  int64_t before_size = -1;   // -1: did not exist, or not known
  int64_t before_mode = -1;   // permission bits; -1 as above
  std::string after_sha256;   // "" when deleted
  int64_t after_size = -1;
  int64_t after_mode = -1;
  std::string link_target;      // a symlink's target (after; before for a deletion)
  std::string before_artifact;  // the artifact holding the before-image, "" if none is kept
  bool undoable = false;
  int64_t entries = 1;       // >1 only for an ignored summary
  int64_t lines_added = -1;  // -1: not known (binary, or no before-image)
  int64_t lines_removed = -1;
  std::string note;  // why not undoable, what was put back, ...
  int64_t created_at_ms = 0;
};

// A file's content before a mutation, stored once per distinct content
// (content-addressed by its SHA-256) as an artifact of kind "before_image".
struct BeforeImage {
  std::string sha256;  // of content
  std::string content;
};

struct SessionUsage {
  int64_t llm_calls = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cost_microusd = 0;   // of the calls with a price
  int64_t unpriced_calls = 0;  // calls whose model has no price
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
};

// A call as the ledger knows it: its start, and its end if recorded.
struct ExecutionRow {
  int64_t seq = 0;
  ExecutionStart start;
  std::optional<ExecutionEnd> end;
};

struct VerifyReport {
  int64_t records = 0;  // records checked
  bool ok = true;
  std::string problem;           // first bad record, or what is missing, when !ok
  bool short_of_anchor = false;  // the problem: records missing (deleted, truncated) or rewritten past the anchor
  std::string anchor;            // what the anchor holds, for people ("record 57 (path)", "none yet", ...)
};

struct LedgerOptions {
  // The directory of the anchors (ledger_anchor.h); "": LedgerAnchor::DefaultDir().
  std::string anchor_dir;
  // false: keep no anchor at all (only for benchmarks that measure its cost).
  bool anchored = true;
  // OpenReadOnly: open a ledger that falls short of its anchor all the same,
  // so that Verify() can report what is missing (odin ledger verify).
  bool allow_short = false;
};

// What Ledger::Reset did.
struct LedgerResetReport {
  int64_t generation = 0;    // the new chain's (resets so far)
  int64_t anchored_seq = 0;  // the old chain's anchored head
  int64_t found_seq = 0;     // the old ledger's own head (-1: unreadable; 0: no ledger or no records)
  std::string moved_to;      // where the old ledger went; "" if there was none
  std::string anchor_path;
};

// Told of each record as it is committed (after its transaction, never
// for one that failed), unredacted: an observer takes from it only what it
// may pass on (telemetry/: ids, names, statuses, counts). Called on the
// ledger's thread; it must not block.
class LedgerObserver {
 public:
  virtual ~LedgerObserver() = default;
  virtual void OnSession(const SessionRecord& session) {}
  virtual void OnExecutionStart(const ExecutionStart& start) {}
  virtual void OnExecutionEnd(const ExecutionEnd& end, const ValidationRecord* validation) {}
  virtual void OnMessage(const MessageRecord& message) {}
  virtual void OnLlmCall(const LlmCallRecord& call) {}
  virtual void OnGateEvent(const GateEvent& event) {}
};

class Ledger {
 public:
  // Opens (creating if needed) the ledger at path (absolute) for appending.
  // Returns Corruption naming the file if it is not a readable ledger, or if
  // it is missing, empty or ends before its anchor (then nothing is created).
  // A ledger without an anchor is anchored at its head; if the anchor
  // directory cannot be written, the ledger works unanchored and says so
  // (anchor_note()).
  static StatusOr<std::unique_ptr<Ledger>> Open(const std::string& path, Redactor redactor,
                                                const LedgerOptions& options = {});
  // Opens an existing ledger for reading, writing nothing (a read-only
  // directory is fine). NotFound if there is none and its anchor, if any,
  // says it never held a record; else Corruption as Open (unless
  // options.allow_short).
  static StatusOr<std::unique_ptr<Ledger>> OpenReadOnly(const std::string& path, const LedgerOptions& options = {});
  // Starts over deliberately (odin ledger reset): moves the ledger file aside
  // (never deletes it) and starts a new generation of the anchor, recording
  // the old head, when, and where the old file went. Unavailable if another
  // process has the ledger open.
  static StatusOr<LedgerResetReport> Reset(const std::string& path, int64_t now_ms, const LedgerOptions& options = {});
  // Flushes (Flush), then closes.
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Makes the records committed so far survive a crash of the machine, not
  // only of the process (one fdatasync of the WAL; nothing if nothing was
  // committed since the last Flush). Closing does it too; an owner that is
  // about to close may call it earlier, while other work (workers exiting)
  // overlaps the wait.
  void Flush();
  // A secret learnt after Open (a refreshed OAuth token): redacted from
  // every record written from now on. Same thread as the records.
  void AddSecret(std::string name, std::string value) { redactor_.AddSecret(std::move(name), std::move(value)); }

  // The observer of the records written from now on (null: none). Not
  // owned; it outlives the ledger or is unset first.
  void set_observer(LedgerObserver* observer) { observer_ = observer; }

  Status AddSession(const SessionRecord& session);
  Status AddExecutionStart(const ExecutionStart& start);
  // Records the end of a call and its artifacts (and, for lsp_check, its
  // validation and diagnostics), in one transaction.
  Status AddExecutionEnd(const ExecutionEnd& end, std::vector<Artifact> artifacts,
                         const ValidationRecord* validation = nullptr,
                         const std::vector<DiagnosticRecord>& diagnostics = {});
  Status AddGateEvent(const GateEvent& event);
  // Records mutations in one transaction, with the before-images they need
  // (each stored once: one already in the ledger is reused). A mutation
  // whose before_sha256 matches an image gets that artifact's id. Images
  // are kept as they were, never redacted: undo must restore the bytes.
  Status AddMutations(std::vector<MutationRecord> mutations, const std::vector<BeforeImage>& images = {});
  // A session's mutations, oldest first; one execution's.
  StatusOr<std::vector<MutationRecord>> ListMutations(const std::string& session_id);
  StatusOr<std::vector<MutationRecord>> ListMutationsOf(const std::string& execution_id);
  // The newest mutations of the whole ledger, newest first.
  StatusOr<std::vector<MutationRecord>> ListRecentMutations(int limit);
  // A session's messages, oldest first; one by id or unique prefix.
  StatusOr<std::vector<MessageRecord>> ListMessages(const std::string& session_id);
  StatusOr<MessageRecord> FindMessage(const std::string& id_or_prefix);
  // The content of a before-image artifact. NotFound if there is none.
  StatusOr<std::string> ReadBeforeImage(const std::string& artifact_id);

  Status AddMessage(const MessageRecord& message);
  // Appends entries in one transaction.
  Status AddConversation(const std::vector<ConversationEntry>& entries);
  // An agent's conversation entries in a session, in order.
  StatusOr<std::vector<ConversationEntry>> ListConversation(const std::string& session_id, const std::string& agent_id);
  // Every session of this ledger, oldest first.
  StatusOr<std::vector<SessionRecord>> ListSessions();
  Status AddLlmCall(const LlmCallRecord& call);
  // Totals of a session's model calls (those started at since_ms or later;
  // of one agent's, if agent_id is not empty).
  StatusOr<SessionUsage> UsageOf(const std::string& session_id, int64_t since_ms = 0, const std::string& agent_id = "");
  // A session's validations and gate events, oldest first.
  StatusOr<std::vector<ValidationRecord>> ListValidations(const std::string& session_id);
  StatusOr<std::vector<GateEvent>> ListGateEvents(const std::string& session_id);
  // The newest `limit` gate events of one kind in every session, newest first.
  StatusOr<std::vector<GateEvent>> ListGateEventsOfKind(const std::string& kind, int limit);
  StatusOr<std::vector<DiagnosticRecord>> ListDiagnostics(const std::string& execution_id);

  // Newest first.
  StatusOr<std::vector<ExecutionRow>> ListExecutions(int limit);
  // Every call of one tool, oldest first.
  StatusOr<std::vector<ExecutionRow>> ListToolExecutions(const std::string& tool);
  // The calls of one session, oldest first.
  StatusOr<std::vector<ExecutionRow>> ListSessionExecutions(const std::string& session_id);
  StatusOr<SessionRecord> FindSession(const std::string& id);
  // By full id or unique prefix. NotFound / InvalidArgument (ambiguous).
  StatusOr<ExecutionRow> FindExecution(const std::string& id_or_prefix);
  StatusOr<std::vector<Artifact>> ListArtifacts(const std::string& execution_id);

  // Recomputes the whole hash chain and compares its end with the anchor.
  // The report names the first bad record, or the records missing.
  StatusOr<VerifyReport> Verify();

  const std::string& path() const { return path_; }
  // Why this ledger keeps no anchor ("" if it keeps one).
  const std::string& anchor_note() const { return anchor_note_; }

  // A column value (defined in ledger.cc).
  struct Value;

 private:
  struct Head {
    int64_t seq = 0;
    std::string hash;
  };

  Ledger(sqlite3* db, std::string path, Redactor redactor);
  Status Init();
  // The newest record and the hash of record seq (NotFound if absent).
  // REQUIRES: inside a transaction, for a consistent answer.
  StatusOr<Head> ReadHead();
  StatusOr<std::string> HashAt(int64_t seq);
  // OK iff the ledger reaches the anchor with the same record there; else
  // Corruption saying what is missing. REQUIRES: inside a transaction.
  Status CompareWithAnchor(const AnchorState& anchor);
  // Compares the ledger with the anchor as read before (if one is kept); with
  // adopt, an anchor behind the ledger (none yet, or a writer that died
  // between its commit and the anchor) is moved to the ledger's head.
  Status CheckAnchor(const std::optional<AnchorState>& state, bool adopt);
  Status Exec(const std::string& sql);
  Status Append(const char* table, std::vector<Value> values);
  Status LoadHead();
  StatusOr<VerifyReport> VerifySnapshot();
  // What was changed in the schema behind the ledger's back (a trigger
  // dropped, the version changed); "" when nothing was.
  std::string SchemaTampering();
  Status RefreshHead();
  // Runs body in one write transaction; on failure nothing of it is kept.
  Status Write(const std::function<Status()>& body);
  Status SqliteError(const std::string& context, int rc) const;
  // The gate events a prepared SELECT of their eight columns returns.
  StatusOr<std::vector<GateEvent>> ReadGateEvents(sqlite3_stmt* st);
  // A prepared statement for sql, prepared once and reset for reuse. Returns
  // null (with *rc set) if sql does not prepare.
  sqlite3_stmt* Cached(const std::string& sql, int* rc);
  // Runs a statement without results (BEGIN, COMMIT) from the cache.
  Status Run(const char* sql);

  sqlite3* db_;
  std::string path_;
  Redactor redactor_;
  int64_t head_seq_ = 0;
  std::string head_hash_;
  int64_t data_version_ = -1;
  std::map<std::string, sqlite3_stmt*> statements_;  // owned; finalized on close
  std::unique_ptr<LedgerAnchor> anchor_;             // null: none kept (anchor_note_ says why)
  int64_t anchor_generation_ = 0;                    // the anchor's generation when opened
  std::string anchor_note_;
  std::string schema_repaired_;  // what Init found changed in the schema, and put right
  bool writer_ = false;          // opened by Open: its WAL is flushed on close
  bool unflushed_ = false;       // committed since the last Flush
  LedgerObserver* observer_ = nullptr;
};

// A write the ledger refused (a full disk, a read-only file): logged as an
// error the first time each distinct failure is seen in this process, and at
// debug level after, so a full disk is one line, not one per record.
void LogLedgerWriteFailure(const Status& failure);
// Whether text holds a failure LogLedgerWriteFailure has shown already (a
// run's last line need not say it again).
bool LedgerFailureShown(std::string_view text);

}  // namespace odin
