// The lsp host's check command (a compiler or cargo check on a copy of the
// file or its crate, where no server validates) and the end of a job: the
// diagnostics accepted, the outcome and the result sent back.
#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "tools/check_output.h"
#include "tools/tool_result.h"
#include "workers/lsp_host_internal.h"

namespace odin::lsp_host_internal {

void Host::StartCheck(const std::string& why_no_server, bool fresh) {
  Job& j = *job_;
  j.server = nullptr;
  if (in().check_command().empty()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, why_no_server);
  if (!in().server().name().empty() && !why_no_server.empty()) j.fallback_reason = why_no_server;
  if (temp_dir_.empty()) {
    StatusOr<std::string> dir = MakeTempDir("odin-check");
    if (!dir.ok()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, dir.status().message());
    temp_dir_ = *dir;
  }
  const std::string& path = in().path();
  std::string shown;
  for (const std::string& a : in().check_command()) shown += (shown.empty() ? "" : " ") + a;
  std::string program = BaseName(in().check_command(0));
  // cargo's diagnostics of other files are the crate's as it is now on
  // disk: a baseline kept from before another file changed would be stale.
  if (fresh) j.baseline_step = program == "cargo" ? in().want_baseline() : NeedBaseline(shown);
  const std::string& content = j.baseline_step ? in().baseline_content() : in().content();

  CommandSpec spec;
  spec.cwd = o_.worker.workspace;
  spec.env = CurrentEnvironment();
  spec.kill_escaped_descendants = false;  // the language servers are our children too
  if (program == "cargo") {
    // cargo checks the crate: a copy of it, with this file as asked about.
    std::string root = CargoRoot(o_.worker.workspace, path);
    if (root.empty()) {
      return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR,
                    "no Cargo.toml above " + path + " in the workspace, so no crate for cargo check");
    }
    if (cargo_dir_.empty() && cargo_refused_.empty()) {
      StatusOr<std::string> dir = MakeTempDir("odin-cargo");
      if (!dir.ok()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, dir.status().message());
      cargo_dir_ = *dir;
      cargo_refused_ = StrayCargoConfig(cargo_dir_);
    }
    if (!cargo_refused_.empty()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, cargo_refused_);
    Crate& crate = cargo_mirrors_[root];
    if (!crate.mirror) {
      crate.mirror =
          std::make_unique<CargoMirror>(root, JoinPath(cargo_dir_, "crate-" + std::to_string(++cargo_made_)));
    }
    crate.last_use = ++cargo_uses_;
    if (cargo_mirrors_.size() > kMaxCargoMirrors) {
      auto oldest = std::min_element(cargo_mirrors_.begin(), cargo_mirrors_.end(), [](const auto& a, const auto& b) {
        return a.second.last_use < b.second.last_use;
      });
      RemoveTree(oldest->second.mirror->mirror());
      RemoveTree(oldest->second.mirror->target_dir());
      cargo_mirrors_.erase(oldest);
    }
    CargoMirror* mirror = cargo_mirrors_[root].mirror.get();
    Status copied = mirror->Sync();
    if (copied.ok()) copied = mirror->Put(path, content);
    if (!copied.ok()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, copied.message());
    j.check_copy = mirror->mirror() + "/";
    j.check_real = root + "/";
    j.check_relative_to = root;
    spec.cwd = mirror->mirror();
    // Its own target directory, kept warm between checks; nothing of the
    // workspace's target/ is read or written.
    std::erase_if(spec.env, [](const std::string& e) {
      return e.starts_with("CARGO_TARGET_DIR=") || e.starts_with("CARGO_BUILD_TARGET_DIR=") ||
             e.starts_with("CARGO_TERM_COLOR=");
    });
    spec.env.push_back("CARGO_TARGET_DIR=" + mirror->target_dir());
    spec.env.push_back("CARGO_TERM_COLOR=never");
    j.check_output_cap = kMaxCargoOutput;
    mirror->ForgetDepInfo();
    j.cargo = mirror;
  } else {
    j.check_copy = JoinPath(temp_dir_, BaseName(path));
    j.check_real = path;
    j.check_relative_to.clear();
    Status written = WriteFileAtomic(j.check_copy, content);
    if (!written.ok()) return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR, written.message());
  }
  bool compiler =
      program == "g++" || program == "gcc" || program == "c++" || program == "cc" || program.rfind("clang", 0) == 0;
  if (compiler) {
    // The flags compile_commands.json gives the file, when there is one.
    for (const char* db : {"compile_commands.json", "build/compile_commands.json"}) {
      StatusOr<std::string> text = ReadFileToString(JoinPath(o_.worker.workspace, db));
      if (!text.ok()) continue;
      std::string dir;
      spec.argv = SyntaxCheckFromCompileDb(*text, path, j.check_copy, &dir);
      if (!spec.argv.empty()) {
        if (!dir.empty()) spec.cwd = dir;
        break;
      }
    }
  }
  if (spec.argv.empty()) {
    for (const std::string& arg : in().check_command()) {
      std::string a = arg;
      for (size_t pos = a.find("{file}"); pos != std::string::npos; pos = a.find("{file}", pos)) {
        a.replace(pos, 6, j.check_copy);
        pos += j.check_copy.size();
      }
      spec.argv.push_back(a);
    }
  }
  // The copy lives elsewhere: "quoted" includes still resolve beside the real file.
  if (compiler) spec.argv.insert(spec.argv.begin() + 1, {"-iquote", DirName(path)});
  j.out.set_validator(shown);
  j.check_output.clear();
  j.check_output_cut = false;
  StatusOr<std::unique_ptr<CommandRun>> run = CommandRun::Start(spec, 64 * 1024, 64 * 1024, clock_);
  if (!run.ok()) {
    return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR,
                  (why_no_server.empty() ? "" : why_no_server + "; ") + run.status().message());
  }
  j.check = std::move(*run);
  j.phase = Phase::kChecking;
  j.sent_at = clock_->Now();
  j.deadline = j.sent_at + milliseconds(in().check_timeout_ms());
}

void Host::Accept(std::vector<v1::Diagnostic> diagnostics) {
  Job& j = *job_;
  if (j.baseline_step) {
    for (v1::Diagnostic& d : diagnostics) *j.out.add_baseline() = std::move(d);
    j.baseline_step = false;
    j.out.set_baseline_done(true);
    if (j.phase == Phase::kChecking) {
      j.check.reset();
      return StartCheck("", /*fresh=*/false);
    }
    return SendContent();
  }
  for (v1::Diagnostic& d : diagnostics) *j.out.add_diagnostics() = std::move(d);
  j.out.set_latency_us(
      static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - j.sent_at).count()));
  Finish(v1::VALIDATION_OUTCOME_DIAGNOSED, j.fallback_reason);
}

std::vector<v1::Diagnostic> Host::FromServer(const std::vector<LspDiagnostic>& items) const {
  return FromServer(items, in().path());
}

std::vector<v1::Diagnostic> Host::FromServer(const std::vector<LspDiagnostic>& items, const std::string& path) const {
  std::vector<v1::Diagnostic> diagnostics;
  for (const LspDiagnostic& l : items) {
    v1::Diagnostic d;
    d.set_path(path);
    d.set_line(l.line);
    d.set_column(l.column);
    d.set_severity(l.severity);
    d.set_code(l.code);
    d.set_message(l.message);
    d.set_source(l.source.empty() ? job_->server_name : l.source);
    diagnostics.push_back(std::move(d));
  }
  return diagnostics;
}

void Host::ForgetPull() {
  Job& j = *job_;
  if (j.pull_id != 0 && j.server != nullptr && j.server->lsp) j.server->lsp->ForgetPulled(j.pull_id);
  j.pull_id = 0;
  for (int64_t id : j.dependent_pulls) {
    if (j.server != nullptr && j.server->lsp) j.server->lsp->ForgetPulled(id);
  }
  j.dependent_pulls.clear();
}

void Host::Finish(v1::ValidationOutcome outcome, const std::string& reason) {
  Job& j = *job_;
  j.out.set_outcome(outcome);
  j.out.set_reason(reason);
  v1::ToolResult r;
  r.set_status(v1::TOOL_STATUS_OK);
  r.set_exit_reason(v1::EXIT_REASON_NORMAL);
  size_t errors = 0;
  for (const v1::Diagnostic& d : j.out.diagnostics()) errors += d.severity() == 1;
  std::string text;
  switch (outcome) {
    case v1::VALIDATION_OUTCOME_DIAGNOSED:
      text = j.out.validator() + ": " + std::to_string(j.out.diagnostics_size()) + " diagnostics, " +
             std::to_string(errors) + " errors\n";
      break;
    case v1::VALIDATION_OUTCOME_TIMED_OUT: text = "timed out: " + reason + "\n"; break;
    default: text = "no validator: " + reason + "\n";
  }
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  *r.mutable_validation() = std::move(j.out);
  FinishCall(std::move(r));
}

void Host::FinishCall(v1::ToolResult r) {
  Job& j = *job_;
  r.set_execution_id(j.req.execution_id());
  if (j.request_id != 0 && j.server != nullptr && j.server->lsp) j.server->lsp->ForgetReferences(j.request_id);
  ForgetPull();
  r.set_duration_us(static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - j.started).count()));
  if (j.check) j.check->KillNow();
  job_.reset();
  RemoveTempDir();
  channel_->QueueResult(std::move(r));
  channel_->Flush();
}

void Host::RemoveTempDir() {
  if (temp_dir_.empty()) return;
  RemoveTree(temp_dir_);
  temp_dir_.clear();
}

}  // namespace odin::lsp_host_internal
