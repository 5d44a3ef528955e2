#pragma once
// ValidationGate: gate 3 of DESIGN.md, the verdicts on the files a session
// changed, and the blocked state they make.
//
// After a write succeeds, the coordinator asks the lsp host (a language
// server, else a check command) to validate the file, as an lsp_check
// execution of its own; this class decides what the host is asked
// (PrepareCheck) and what its answer means (Judge). Only diagnostics that are
// new against the file as it was before the session first changed it count
// (NoteWrite remembers that content; the host diagnoses it too, once). The
// verdict is clean, errors, timed_out or no_validator. While the latest
// verdict of any file is errors or timed_out the session is blocked:
// CheckBlocked refuses edit-mode calls other than reads, memory_query,
// lsp_check and corrective writes, and Blocking() says why.
//
// The coordinator owns the calls, the ledger and the write queues; this
// class owns only what it knows of each file. Passive; thread-safety: none.

#include <map>
#include <optional>
#include <string>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "tools/tool_catalog.h"
#include "base/status.h"
#include "gates/validation.h"
#include "gates/validators.h"
#include "ledger/ledger.h"
#include "planner/tool_host.h"

namespace odin {

namespace v1 {
class ToolRequest;
class ToolResult;
}  // namespace v1

class ValidationGate {
 public:
  ValidationGate(const ValidationOptions& options, std::string workspace, ProgramLookup lookup);

  // The latest verdict of every file the session changed, sorted by path.
  std::vector<FileVerdict> Verdicts() const;
  // Those whose latest verdict is errors or timed_out: while there are any,
  // the session is blocked. Sorted by path.
  std::vector<FileVerdict> Blocking() const;
  // FailedPrecondition, naming the blocking files, if the blocked state
  // refuses an edit-mode call of `tool`; OK otherwise.
  Status CheckBlocked(const std::string& tool) const;

  // Rebuilds the verdicts and the files' original contents from the records
  // of sessions (a session, and what a fork of it was copied from), in the
  // order things happened (a rollback brings back the verdict before the
  // check that caused it).
  Status Resume(Ledger* ledger, const std::vector<std::string>& session_ids, const std::vector<ExecutionRow>& rows);

  // A write to path succeeded and is about to be validated: remembers the
  // file as it was before the session first changed it (the baseline).
  void NoteWrite(const std::string& path, const v1::ToolResult& write);
  // The same for a file a command changed: existed says whether it was
  // there before; before is its content then, or null when not known (then
  // no baseline: every error in it counts as new).
  void NoteChange(const std::string& path, bool existed, const std::string* before);

  // Whether a language server or check command is there for path.
  bool Covers(const std::string& path) const;
  // What serves path: its language server and check command, if any.
  FileValidator ValidatorFor(const std::string& path) const { return ResolveValidator(o_, path, lookup_); }

  // What to send the lsp host to validate `content` as path. Returns nullopt
  // when nothing is configured or installed for the file; *no_validator is
  // then the check's result, known here.
  struct CheckRequest {
    std::shared_ptr<v1::ToolRequest> input;  // its validation set
    Duration timeout{};                      // catches a host that hangs
  };
  std::optional<CheckRequest> PrepareCheck(const std::string& path, const std::string& content,
                                           v1::ToolResult* no_validator);

  // The verdict on a finished lsp_check of `content` as `path`. `write` is
  // the result of the write it validates (null for a check the model asked
  // for), `mutation_id` that write's execution id. Rewrites *r: the verdict,
  // and the text the model reads in place of the output.
  struct Judgement {
    FileVerdict verdict;
    bool failed = false;                  // errors or timed_out on a file the session changed
    std::string rollback_id;              // non-empty: roll the write back, as this execution
    std::string content_before;           // what the rollback writes
    std::optional<FileVerdict> previous;  // the file's verdict before this one
    ValidationRecord record;              // for the ledger, with:
    std::vector<DiagnosticRecord> diagnostics;
    std::vector<Artifact> artifacts;  // the file's original content, the first time
  };
  Judgement Judge(const std::string& path, const std::string& content, const std::string& mutation_id,
                  const v1::ToolResult* write, v1::ToolResult* r);

  // A rollback ended: the verdict before the write holds again, or, if the
  // rollback failed, `kept` (the errors) stays.
  void RolledBack(const std::string& path, const std::optional<FileVerdict>& previous);
  void RollbackFailed(const std::string& path, const FileVerdict& kept);

 private:
  // What the session knows of a file it changed.
  struct FileState {
    std::string original;  // before the session's first write to it
    bool original_known = false;
    bool existed = false;
    bool original_recorded = false;  // kept in the ledger (an artifact of an lsp_check)
    bool baseline_known = false;
    std::string baseline_validator;  // whose diagnostics `baseline` holds
    std::vector<Diag> baseline;      // the validator's diagnostics of `original`
    bool has_verdict = false;
    FileVerdict verdict;
  };

  const ValidationOptions& o_;
  std::string workspace_;
  ProgramLookup lookup_;
  std::map<std::string, FileState> files_;  // by absolute path
};

}  // namespace odin
