#include "gates/validation_gate.h"

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/ids.h"
#include "ledger/memory_query.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/text_file.h"
#include "tools/tool_catalog.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {

namespace {

Diag ToDiag(const v1::Diagnostic& d) {
  return {d.path(), d.line(), d.column(), d.severity(), d.code(), d.message(), d.source()};
}

std::string Plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// What an edit-mode call may still do while the session is blocked: look,
// ask the ledger, re-validate, and fix.
bool AllowedWhileBlocked(const std::string& tool) {
  switch (HandlerOf(tool)) {
    case ToolHandler::kFileRead:
    case ToolHandler::kSearch:
    case ToolHandler::kMemoryQuery:
    case ToolHandler::kLspCheck:
    case ToolHandler::kCommandOutput:
    case ToolHandler::kStopCommand:
    case ToolHandler::kFileWrite: return true;
    default: return false;
  }
}

}  // namespace

ValidationGate::ValidationGate(const ValidationOptions& options, std::string workspace, ProgramLookup lookup)
    : o_(options), workspace_(std::move(workspace)), lookup_(std::move(lookup)) {}

std::vector<FileVerdict> ValidationGate::Verdicts() const {
  std::vector<FileVerdict> out;
  for (const auto& [path, f] : files_) {
    if (f.has_verdict) out.push_back(f.verdict);
  }
  return out;
}

std::vector<FileVerdict> ValidationGate::Blocking() const {
  std::vector<FileVerdict> out;
  for (const FileVerdict& v : Verdicts()) {
    if (IsBlocking(v.status)) out.push_back(v);
  }
  return out;
}

Status ValidationGate::CheckBlocked(const std::string& tool) const {
  if (AllowedWhileBlocked(tool)) return Status::OK();
  std::vector<FileVerdict> blocking = Blocking();
  if (blocking.empty()) return Status::OK();
  std::string why;
  for (const FileVerdict& v : blocking) {
    why += "\n- " + DisplayPath(v.path, workspace_) + ": " + VerdictName(v.status) + " after " + v.mutation_id +
           " (lsp_check " + v.check_id + ")";
    if (!v.summary.empty()) why += "\n" + v.summary;
    if (!v.reason.empty()) why += "\n  " + v.reason;
  }
  return Status::FailedPrecondition(
      tool, "the session is blocked until these files validate:" + why +
                "\nAllowed now: Read, LS, Glob, Grep, memory_query, lsp_check, and edits or commands that fix the "
                "errors");
}

Status ValidationGate::Resume(Ledger* ledger, const std::vector<std::string>& session_ids,
                              const std::vector<ExecutionRow>& rows) {
  std::vector<ValidationRecord> validations;
  for (const std::string& id : session_ids) {
    ASSIGN_OR_RETURN(std::vector<ValidationRecord> own, ledger->ListValidations(id));
    validations.insert(validations.end(), own.begin(), own.end());
  }
  std::map<std::string, const ValidationRecord*> validation_of;  // by lsp_check id
  for (const ValidationRecord& v : validations) validation_of[v.execution_id] = &v;
  std::map<std::string, std::vector<FileVerdict>> history;  // by path
  for (const ExecutionRow& row : rows) {
    if (!row.end || row.end->status != "ok") continue;
    auto v = validation_of.find(row.start.execution_id);
    if (v != validation_of.end()) {
      const ValidationRecord& r = *v->second;
      FileState& f = files_[r.path];
      if (!r.mutation_id.empty() || f.has_verdict) {  // else: a look at a file the session did not change
        f.has_verdict = true;
        f.verdict = {r.path,         r.mutation_id,
                     r.execution_id, ParseVerdict(r.status),
                     r.validator,    static_cast<int>(r.new_errors),
                     r.summary,      r.reason};
        history[r.path].push_back(f.verdict);
      }
      if (!f.original_known) {
        // The files' original contents come back from the artifacts that keep them.
        ASSIGN_OR_RETURN(std::vector<Artifact> artifacts, ledger->ListArtifacts(r.execution_id));
        for (const Artifact& a : artifacts) {
          if (a.kind != "original" && a.kind != "original_absent") continue;
          f.original_known = f.original_recorded = true;
          f.existed = a.kind == "original";
          f.original = a.content;
          f.baseline_known = !f.existed;  // diagnosed again when needed
        }
      }
      continue;
    }
    // A rollback (a write made for an lsp_check) brings back the verdict
    // before that check.
    if (WriteFormOf(row.start.tool) == WriteForm::kWhole && validation_of.count(row.start.parent_id)) {
      const std::string& path = validation_of[row.start.parent_id]->path;
      std::vector<FileVerdict>& h = history[path];
      if (!h.empty()) h.pop_back();
      FileState& f = files_[path];
      f.has_verdict = !h.empty();
      if (!h.empty()) f.verdict = h.back();
    }
  }
  for (auto it = files_.begin(); it != files_.end();) {
    it = it->second.has_verdict || it->second.original_known ? std::next(it) : files_.erase(it);
  }
  return Status::OK();
}

void ValidationGate::NoteWrite(const std::string& path, const v1::ToolResult& write) {
  NoteChange(path, !write.sha256_before().empty(), &write.content_before());
}

bool ValidationGate::Covers(const std::string& path) const { return ResolveValidator(o_, path, lookup_).any(); }

void ValidationGate::NoteChange(const std::string& path, bool existed, const std::string* before) {
  FileState& f = files_[path];
  // The file as it was before the session first changed it: the baseline.
  // (After a resume it comes from the ledger; a file the ledger has nothing
  // of starts here.) A file with a verdict was changed before, even if its
  // bytes then were not known: what is there now is not its original.
  if (f.original_known || f.has_verdict) return;
  f.existed = existed;
  f.original_known = !existed || before != nullptr;
  f.original_recorded = false;
  f.original = before != nullptr ? *before : "";
  f.baseline.clear();
  f.baseline_known = !existed;
  f.baseline_validator.clear();
}

std::optional<ValidationGate::CheckRequest> ValidationGate::PrepareCheck(const std::string& path,
                                                                         const std::string& content,
                                                                         v1::ToolResult* no_validator) {
  FileValidator v = ResolveValidator(o_, path, lookup_);
  if (!v.any()) {
    no_validator->set_status(v1::TOOL_STATUS_OK);
    no_validator->mutable_validation()->set_outcome(v1::VALIDATION_OUTCOME_NO_VALIDATOR);
    no_validator->mutable_validation()->set_reason(
        "no language server or check command is configured (or installed) for " + DisplayPath(path, workspace_));
    return std::nullopt;
  }
  v1::ValidationInput in;
  in.set_path(path);
  in.set_content(content);
  auto f = files_.find(path);
  if (f != files_.end() && f->second.original_known && f->second.existed) {
    // The host diagnoses it too unless it would use the validator whose
    // diagnostics of it are known already.
    in.set_want_baseline(true);
    in.set_baseline_content(f->second.original);
    if (f->second.baseline_known) in.set_baseline_validator(f->second.baseline_validator);
  }
  if (!v.server_name.empty()) {
    v1::LanguageServer* ls = in.mutable_server();
    ls->set_name(v.server_name);
    for (const std::string& a : v.server_command) ls->add_command(a);
    ls->set_language_id(v.language_id);
  }
  for (const std::string& a : v.check_command) in.add_check_command(a);
  in.set_start_timeout_ms(v.start_timeout_ms);
  in.set_file_timeout_ms(v.file_timeout_ms);
  in.set_settle_ms(v.settle_ms);
  in.set_check_timeout_ms(o_.check_timeout_ms);
  CheckRequest request;
  auto input = std::make_shared<v1::ToolRequest>();
  *input->mutable_validation() = std::move(in);
  request.input = std::move(input);
  // The host enforces every step's timeout itself; this deadline only
  // catches a host that hangs.
  request.timeout =
      milliseconds(int64_t{v.start_timeout_ms} + 2 * (int64_t{v.file_timeout_ms} + int64_t{o_.check_timeout_ms})) +
      seconds(10);
  return request;
}

ValidationGate::Judgement ValidationGate::Judge(const std::string& path, const std::string& content,
                                                const std::string& mutation_id, const v1::ToolResult* write,
                                                v1::ToolResult* r) {
  std::string shown = DisplayPath(path, workspace_);
  auto f = files_.find(path);
  bool counts = f != files_.end();  // the session changed the file
  const v1::ValidationOutput& out = r->validation();

  Judgement j;
  FileVerdict& verdict = j.verdict;
  verdict.path = path;
  verdict.check_id = r->execution_id();
  // A re-check the model asked for follows the file's last write.
  verdict.mutation_id =
      mutation_id.empty() && counts && f->second.has_verdict ? f->second.verdict.mutation_id : mutation_id;
  verdict.validator = out.validator();
  if (r->status() != v1::TOOL_STATUS_OK) {
    // The host crashed, hung or was cancelled: nothing says the file is good.
    verdict.status = Verdict::kTimedOut;
    verdict.reason = "the lsp host did not answer: " +
                     (r->has_error() ? r->error().message() : std::string(ToolStatusName(r->status())));
  } else if (out.outcome() == v1::VALIDATION_OUTCOME_DIAGNOSED) {
    if (counts && out.baseline_done()) {
      f->second.baseline.clear();
      for (const v1::Diagnostic& d : out.baseline()) f->second.baseline.push_back(ToDiag(d));
      f->second.baseline_known = true;
      f->second.baseline_validator = out.validator();
    }
    std::vector<Diag> after;
    for (const v1::Diagnostic& d : out.diagnostics()) after.push_back(ToDiag(d));
    std::vector<bool> is_new(after.size(), true);
    if (counts && !f->second.baseline.empty()) {  // the line map (a diff) only when there is a baseline to move
      is_new = MarkNew(f->second.baseline, after, path, MapLines(f->second.original, content));
    }
    std::vector<Diag> fresh;
    for (size_t i = 0; i < after.size(); ++i) {
      const Diag& d = after[i];
      j.diagnostics.push_back({r->execution_id(), d.path, d.line, d.column, d.severity, d.code, d.message, d.source,
                               static_cast<bool>(is_new[i])});
      if (is_new[i]) fresh.push_back(d);
      if (is_new[i] && d.severity == 1) ++verdict.new_errors;
    }
    verdict.status = verdict.new_errors > 0 ? Verdict::kErrors : Verdict::kClean;
    verdict.summary = SummarizeDiagnostics(fresh, workspace_);
    verdict.reason = out.reason();  // e.g. why a check command stood in for the server
  } else if (out.outcome() == v1::VALIDATION_OUTCOME_NO_VALIDATOR) {
    verdict.status = Verdict::kNoValidator;
    verdict.reason = out.reason();
    if (counts && f->second.has_verdict && IsBlocking(f->second.verdict.status)) {
      // Nothing can check the file now, and the last word on it was bad:
      // it stays unverified.
      verdict.status = Verdict::kTimedOut;
      verdict.reason = "no validator could check it (" + out.reason() + "); the last verdict was " +
                       VerdictName(f->second.verdict.status);
    }
  } else {
    verdict.status = Verdict::kTimedOut;
    verdict.reason = out.outcome() == v1::VALIDATION_OUTCOME_TIMED_OUT ? out.reason() : "the lsp host gave no outcome";
  }

  // What the model reads.
  std::string text;
  std::string by = verdict.validator.empty() ? "" : " (" + verdict.validator + ")";
  std::string note = verdict.reason.empty() ? "" : "(" + verdict.reason + ")\n";
  switch (verdict.status) {
    case Verdict::kClean: text = "clean: no new errors in " + shown + by + "\n" + note; break;
    case Verdict::kErrors:
      text = counts ? "errors: " + Plural(verdict.new_errors, "new error", "new errors") + " in " + shown + by + ":\n" +
                          verdict.summary + note
                    : "errors: " + Plural(verdict.new_errors, "error", "errors") + " in " + shown + by +
                          " (the session has not changed this file, so they do not block):\n" + verdict.summary;
      break;
    case Verdict::kTimedOut:
      text = "timed_out: " + verdict.reason + ". " + shown + " is unverified, which blocks completion until it " +
             "validates (edit it again or run lsp_check on it).\n";
      break;
    case Verdict::kNoValidator: text = "no_validator: " + verdict.reason + " (not verified; does not block)\n"; break;
  }
  v1::ValidationVerdict* v = r->mutable_verdict();
  v->set_execution_id(r->execution_id());
  v->set_path(path);
  v->set_status(VerdictName(verdict.status));
  v->set_new_errors(static_cast<uint32_t>(verdict.new_errors));
  v->set_summary(verdict.summary);
  v->set_validator(verdict.validator);
  v->set_reason(verdict.reason);
  v->set_counts(counts);

  if (counts) {
    if (f->second.has_verdict) j.previous = f->second.verdict;
    f->second.verdict = verdict;
    f->second.has_verdict = true;
    j.failed = IsBlocking(verdict.status);
  }

  // Optionally roll a write that brought new errors back.
  if (write != nullptr && verdict.status == Verdict::kErrors && o_.revert_on_new_errors && f->second.existed) {
    if (!IsValidUtf8(write->content_before())) {
      // WriteFile carries text: bytes that are not UTF-8 would not survive.
      text += "(not rolled back: the file's earlier content is not valid UTF-8)\n";
    } else {
      j.rollback_id = NewId("ex");
      j.content_before = write->content_before();
      v->set_revert_execution_id(j.rollback_id);
      text += "The edit was rolled back (" + j.rollback_id + "): the file is as it was before " + mutation_id +
              ". Do not make the same edit again; change your approach.\n";
    }
  }

  r->set_output_head(text);
  r->set_output_tail("");
  r->set_output_total_bytes(text.size());
  j.record.execution_id = r->execution_id();
  j.record.mutation_id = mutation_id;
  j.record.path = path;
  j.record.status = VerdictName(verdict.status);
  j.record.validator = verdict.validator;
  j.record.new_errors = verdict.new_errors;
  j.record.reason = verdict.reason;
  j.record.summary = verdict.summary;
  j.record.latency_us = static_cast<int64_t>(out.latency_us());
  if (counts && f->second.original_known && !f->second.original_recorded) {
    // The file before the session changed it, so a resumed session keeps
    // its baseline.
    f->second.original_recorded = true;
    const std::string& original = f->second.original;
    j.artifacts.push_back({NewId("art"), r->execution_id(), f->second.existed ? "original" : "original_absent",
                           original, static_cast<int64_t>(original.size()), false, ""});
  }
  return j;
}

void ValidationGate::RolledBack(const std::string& path, const std::optional<FileVerdict>& previous) {
  auto f = files_.find(path);
  if (f == files_.end()) return;
  f->second.has_verdict = previous.has_value();
  if (previous) f->second.verdict = *previous;
}

void ValidationGate::RollbackFailed(const std::string& path, const FileVerdict& kept) {
  auto f = files_.find(path);
  if (f == files_.end()) return;
  f->second.verdict = kept;  // the errors stay, and block
  f->second.has_verdict = true;
}

}  // namespace odin
