// The lsp host's state machine: a job's phases, from a server's start to its
// diagnostics or a references answer, over the servers it keeps warm. The
// check command's run and the job's end are in lsp_host_check.cc; the class
// is declared in lsp_host_internal.h.
#include "workers/lsp_host.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "odin/v1/worker.pb.h"
#include "tools/check_output.h"
#include "tools/exec_command.h"
#include "tools/lsp_client.h"
#include "tools/tool_result.h"
#include "workers/cargo_mirror.h"
#include "workers/importers.h"
#include "workers/lsp_host_internal.h"
#include "workers/worker_channel.h"

namespace odin::lsp_host_internal {

void Host::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest: StartJob(env.tool_request()); break;
    case v1::Envelope::kCancel:
      if (job_ && env.cancel().execution_id() == job_->req.execution_id()) {
        v1::ToolResult r;
        bool timeout = env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT;
        FailResult(
            &r, timeout ? v1::TOOL_STATUS_TIMED_OUT : v1::TOOL_STATUS_CANCELLED,
            timeout ? Status::DeadlineExceeded("lsp_check", "out of time") : Status::Cancelled("lsp_check cancelled"));
        r.set_exit_reason(timeout ? v1::EXIT_REASON_TIMEOUT : v1::EXIT_REASON_KILLED);
        FinishCall(std::move(r));
      }
      break;
    default: break;
  }
}

void Host::StartJob(const v1::ToolRequest& req) {
  if (job_) {
    v1::ToolResult r;
    r.set_execution_id(req.execution_id());
    FailResult(&r, v1::TOOL_STATUS_ERROR, Status::FailedPrecondition("lsp host " + o_.worker.worker_id, "is busy"));
    return channel_->QueueResult(std::move(r));
  }
  // What it does is what its typed request holds; the tool's name is only
  // what messages call it.
  bool check = req.has_validation() && !req.validation().path().empty();
  bool references = !check && req.has_references() && !req.references().path().empty();
  if (!check && !references) {
    v1::ToolResult r;
    r.set_execution_id(req.execution_id());
    FailResult(&r, v1::TOOL_STATUS_ERROR,
               Status::InvalidArgument("the lsp host runs only lsp_check with a file to validate and "
                                       "lsp_references with a position"));
    return channel_->QueueResult(std::move(r));
  }
  job_.emplace();
  Job& j = *job_;
  j.req = req;
  j.started = clock_->Now();
  j.references = references;
  if (references) return StartReferences();
  const v1::LanguageServer& ls = in().server();
  if (ls.name().empty() || ls.command().empty()) return StartCheck("no language server serves this file");
  j.server_name = ls.name();
  std::string why;
  Server* server = Acquire(ls, &why);
  if (server == nullptr) return StartCheck(why);
  j.server = server;
  j.out.set_validator(ls.name());
  j.baseline_step = NeedBaseline(ls.name());
  if (server->lsp->ready()) {
    j.phase = Phase::kDiagnosing;
    return SendContent();
  }
  j.phase = Phase::kStarting;
  j.deadline = server->lsp->started_at() + milliseconds(in().start_timeout_ms());
}

Host::Server* Host::Acquire(const v1::LanguageServer& ls, std::string* why) {
  Server& server = servers_[ls.name()];
  std::vector<std::string> command(ls.command().begin(), ls.command().end());
  if (server.command != command) {  // first use, or the configuration changed
    server = Server();
    server.command = command;
  }
  if (!server.given_up.empty()) {
    *why = server.given_up;
    return nullptr;
  }
  if (server.lsp == nullptr || server.lsp->dead()) {
    server.lsp.reset();
    server.docs.clear();
    LspServerOptions lo{command, CurrentEnvironment(), o_.worker.workspace, STDERR_FILENO};
    StatusOr<std::unique_ptr<LspServer>> lsp = LspServer::Start(lo, clock_);
    if (!lsp.ok()) {
      server.given_up = ls.name() + " cannot start: " + lsp.status().message();
      *why = server.given_up;
      return nullptr;
    }
    server.lsp = std::move(*lsp);
  }
  return &server;
}

void Host::Ready() {
  if (job_->references) return AskReferences();
  job_->phase = Phase::kDiagnosing;
  SendContent();
}

void Host::StartReferences() {
  Job& j = *job_;
  const v1::LanguageServer& ls = refs().server();
  j.server_name = ls.name();
  if (ls.name().empty() || ls.command().empty())
    return FinishReferences(nullptr, "no language server serves this file");
  std::string why;
  Server* server = Acquire(ls, &why);
  if (server == nullptr) return FinishReferences(nullptr, why);
  j.server = server;
  if (server->lsp->ready()) return AskReferences();
  j.phase = Phase::kStarting;
  j.deadline = server->lsp->started_at() + milliseconds(refs().start_timeout_ms());
}

void Host::AskReferences() {
  Job& j = *job_;
  Server& server = *j.server;
  if (!server.lsp->finds_references()) return FinishReferences(nullptr, j.server_name + " does not find references");
  const std::string& path = refs().path();
  auto doc = server.docs.find(path);
  bool had = doc != server.docs.end() && doc->second.sha256 == Sha256Hex(refs().content());
  j.seq_floor = server.lsp->publish_count();
  Sync(server, path, refs().server().language_id(), refs().content(), /*force=*/false);
  if (had && server.lsp->Latest(path) != nullptr) return SendReferencesRequest();
  // A server asked before it has analysed the file (and, pyright, before it
  // has found the workspace's other files) answers with nothing: the
  // request waits for the file's first diagnostics, or half the time.
  j.phase = Phase::kOpening;
  j.deadline = clock_->Now() + milliseconds(refs().answer_timeout_ms() / 2);
}

void Host::SendReferencesRequest() {
  Job& j = *job_;
  j.request_id = j.server->lsp->AskReferences(refs().path(), refs().line(), refs().character());
  j.phase = Phase::kAsking;
  j.sent_at = clock_->Now();
  j.deadline = j.sent_at + milliseconds(refs().answer_timeout_ms());
}

void Host::FinishReferences(const LspReferences* answer, const std::string& reason) {
  Job& j = *job_;
  v1::ReferencesOutput out;
  out.set_server(j.server_name);
  out.set_answered(answer != nullptr && !answer->error);
  out.set_reason(answer != nullptr && answer->error ? j.server_name + " answered with an error: " + answer->message
                                                    : reason);
  if (out.answered()) {
    for (const LspLocation& l : answer->locations) {
      if (out.locations_size() >= kMaxLocations) break;
      v1::SourceLocation* loc = out.add_locations();
      loc->set_path(l.path);
      loc->set_line(l.line);
      loc->set_column(l.column);
    }
  }
  v1::ToolResult r;
  r.set_status(v1::TOOL_STATUS_OK);
  r.set_exit_reason(v1::EXIT_REASON_NORMAL);
  std::string text = out.answered() ? j.server_name + ": " + std::to_string(out.locations_size()) + " references\n"
                                    : "no answer: " + out.reason() + "\n";
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  *r.mutable_references() = std::move(out);
  FinishCall(std::move(r));
}

int64_t Host::Sync(Server& server, const std::string& path, const std::string& language_id, const std::string& text,
                   bool force) {
  std::string sha = Sha256Hex(text);
  auto doc = server.docs.find(path);
  int64_t version = 1;
  if (doc != server.docs.end()) {
    version = doc->second.version + 1;
    if (doc->second.sha256 == sha) {
      if (!force) {
        doc->second.used = clock_->Now();
        return doc->second.version;
      }
      // The server has this text already and would not publish again: open
      // the document afresh (versions keep rising), so it is diagnosed now,
      // headers and all.
      server.lsp->DidClose(path);
      server.docs.erase(doc);
      doc = server.docs.end();
    }
  }
  if (doc == server.docs.end()) {
    // Keep the number of open documents bounded: close the least recently used.
    if (static_cast<int>(server.docs.size()) >= o_.max_open_documents) {
      auto oldest = std::min_element(server.docs.begin(), server.docs.end(),
                                     [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      server.lsp->DidClose(oldest->first);
      server.docs.erase(oldest);
    }
    server.lsp->DidOpen(path, language_id, version, text);
    doc = server.docs.emplace(path, Doc{}).first;
  } else {
    server.lsp->DidChange(path, version, text);
  }
  doc->second.version = version;
  doc->second.sha256 = sha;
  doc->second.used = clock_->Now();
  return version;
}

void Host::SendContent() {
  Job& j = *job_;
  Server& server = *j.server;
  const std::string& text = j.baseline_step ? in().baseline_content() : in().content();
  j.seq_floor = server.lsp->publish_count();
  ForgetPull();
  // A server that can be asked is asked (unchanged text is then not reopened:
  // the answer covers it); the rest are made to publish again.
  bool pull = server.lsp->pulls_diagnostics();
  j.version = Sync(server, in().path(), in().server().language_id(), text, /*force=*/!pull);
  if (pull) j.pull_id = server.lsp->PullDiagnostics(in().path());
  // The files that import it, where an existing file's baseline is known or
  // taken (a file the session made has no importers of its own yet).
  if (pull && in().want_baseline() && IsScriptFile(in().path())) {
    if (!j.dependents) j.dependents = Importers(o_.worker.workspace, in().path(), 20);
    for (const std::string& d : *j.dependents) {
      StatusOr<std::string> dep = ReadRegularFile(d, 4 << 20);
      if (!dep.ok()) continue;
      Sync(server, d,
           d.ends_with(".js") || d.ends_with(".jsx") || d.ends_with(".mjs") || d.ends_with(".cjs") ? "javascript"
                                                                                                   : "typescript",
           *dep, /*force=*/false);
      j.dependent_pulls.push_back(server.lsp->PullDiagnostics(d));
    }
  }
  j.sent_at = clock_->Now();
  j.deadline = j.sent_at + milliseconds(in().file_timeout_ms());
}

void Host::Advance() {
  if (!job_) return;
  Job& j = *job_;
  SteadyTime now = clock_->Now();
  const std::string& name = j.server_name;
  if (j.phase == Phase::kStarting) {
    Server& server = *j.server;
    if (server.lsp->dead()) {
      std::string why = name + " exited while starting: " + server.lsp->death();
      server.lsp.reset();
      j.server = nullptr;
      if (++server.start_failures >= kMaxServerStarts) server.given_up = why;
      return j.references ? FinishReferences(nullptr, why) : StartCheck(why);
    }
    if (server.lsp->ready()) {
      j.out.set_server_start_us(
          static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(now - server.lsp->started_at()).count()));
      return Ready();
    }
    if (now >= j.deadline) {
      server.lsp.reset();  // killed; the next call starts it afresh
      server.docs.clear();
      j.server = nullptr;
      std::string why = name + " did not start within " +
                        Ms(milliseconds(j.references ? refs().start_timeout_ms() : in().start_timeout_ms()));
      // After the second time, the server is given up (the check command
      // takes its place); this time the file is unverified.
      if (++server.start_failures >= kMaxServerStarts) server.given_up = why;
      if (j.references) return FinishReferences(nullptr, why);
      return Finish(v1::VALIDATION_OUTCOME_TIMED_OUT, why);
    }
    return;
  }
  if (j.phase == Phase::kDiagnosing) {
    Server& server = *j.server;
    if (server.lsp->dead()) {
      std::string why = name + " exited while diagnosing " + BaseName(in().path()) + ": " + server.lsp->death();
      server.lsp.reset();
      server.docs.clear();
      return Finish(v1::VALIDATION_OUTCOME_TIMED_OUT, why);
    }
    if (j.pull_id != 0) {
      if (const PulledDiagnostics* pulled = server.lsp->Pulled(j.pull_id)) {
        if (!pulled->error) {
          // The importers' answers too, unless the time is up (then what
          // came: an importer that cannot be asked is not the file's fault).
          std::vector<v1::Diagnostic> all = FromServer(pulled->items);
          bool all_in = true;
          for (size_t i = 0; i < j.dependent_pulls.size(); ++i) {
            const PulledDiagnostics* dep = server.lsp->Pulled(j.dependent_pulls[i]);
            if (dep == nullptr) {
              all_in = false;
              continue;
            }
            if (dep->error) continue;
            for (v1::Diagnostic& d : FromServer(dep->items, (*j.dependents)[i])) all.push_back(std::move(d));
          }
          if (!all_in && now < j.deadline) return;
          for (int64_t id : j.dependent_pulls) server.lsp->ForgetPulled(id);
          j.dependent_pulls.clear();
          return Accept(std::move(all));
        }
        // Refused: the publishes decide, as for a server that cannot be asked.
        spdlog::warn("{} did not give diagnostics of {} when asked ({}); waiting for its publish", name,
                     BaseName(in().path()), pulled->message);
        ForgetPull();
      }
    }
    const PublishedDiagnostics* pd = server.lsp->Latest(in().path());
    if (j.pull_id == 0 && pd != nullptr && pd->seq > j.seq_floor) {
      // Versioned: only the version sent counts. Unversioned: the last
      // publish, once the settle passed without another.
      if (pd->version) server.versioned = true;
      bool fresh = pd->version ? *pd->version == j.version : !server.versioned && now >= pd->at + Settle(server);
      if (fresh) {
        if (!pd->version) server.unversioned_known = true;
        return Accept(FromServer(pd->items));
      }
    }
    // The file's time bounds the wait for a first publish; one without a
    // version that came in time has its settle still (a slow server's
    // answer is not a timeout).
    if (now >= j.deadline && !SettlePending(server)) {
      std::string what = j.pull_id != 0 ? " gave no diagnostics of " + BaseName(in().path()) + " when asked"
                                        : " published no diagnostics for version " + std::to_string(j.version) +
                                              " of " + BaseName(in().path());
      return Finish(v1::VALIDATION_OUTCOME_TIMED_OUT,
                    name + what + " within " + Ms(milliseconds(in().file_timeout_ms())));
    }
    return;
  }
  if (j.phase == Phase::kOpening || j.phase == Phase::kAsking) {
    Server& server = *j.server;
    if (server.lsp->dead()) {
      std::string why = name + " exited while finding references: " + server.lsp->death();
      server.lsp.reset();
      server.docs.clear();
      j.server = nullptr;
      return FinishReferences(nullptr, why);
    }
    if (j.phase == Phase::kOpening) {
      const PublishedDiagnostics* pd = server.lsp->Latest(refs().path());
      if ((pd != nullptr && pd->seq > j.seq_floor) || now >= j.deadline) return SendReferencesRequest();
      return;
    }
    if (const LspReferences* answer = server.lsp->References(j.request_id)) return FinishReferences(answer, "");
    if (now >= j.deadline) {
      return FinishReferences(nullptr, name + " did not answer within " + Ms(milliseconds(refs().answer_timeout_ms())));
    }
    return;
  }
  // Checking.
  if (j.check->done()) {
    v1::ToolResult r;
    j.check->FillResult(&r);
    std::string output = j.check_output;
    std::string program = BaseName(in().check_command(0));
    std::vector<CheckDiagnostic> parsed = ParseCheckOutput(output, program == "cargo" ? 0 : r.exit_code(), j.check_copy,
                                                           j.check_real, program, j.check_relative_to);
    if (program == "cargo" && r.exit_code() != 0 &&
        std::none_of(parsed.begin(), parsed.end(), [](const CheckDiagnostic& c) { return c.diag.severity == 1; })) {
      // cargo failed before it could say anything of the code (a manifest
      // it cannot read, a dependency not on this machine, a build script):
      // nothing was checked, which is not the same as a clean file.
      std::string first;
      for (size_t pos = 0; pos < output.size() && first.empty();) {
        size_t end = std::min(output.find('\n', pos), output.size());
        if (output.compare(pos, 6, "error:") == 0 || output.compare(pos, 6, "error[") == 0) {
          first = output.substr(pos, std::min<size_t>(end - pos, 300));
        }
        pos = end + 1;
      }
      if (first.empty()) first = "exit code " + std::to_string(r.exit_code());
      // The copy's directory, with or without a slash after it, is the crate's.
      std::string copy_dir = j.check_copy.substr(0, j.check_copy.size() - 1);
      for (size_t at = first.find(copy_dir); at != std::string::npos; at = first.find(copy_dir, at)) {
        size_t after = at + copy_dir.size();
        if (after < first.size() && (isalnum(static_cast<unsigned char>(first[after])) || first[after] == '-')) {
          at = after;  // crate-1 in crate-12 or crate-1-target
          continue;
        }
        first.replace(at, copy_dir.size(), j.check_relative_to);
        at += j.check_relative_to.size();
      }
      return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR,
                    "cargo check could not check " + j.check_relative_to + ": " + first);
    }
    if (program == "cargo" && !j.baseline_step &&
        std::none_of(parsed.begin(), parsed.end(),
                     [&](const CheckDiagnostic& c) { return c.diag.severity == 1 && c.path == in().path(); }) &&
        !j.cargo->Compiled(in().path())) {
      // Nothing cargo built read the file (a test, an example or a bench,
      // a module no `mod` names, a crate outside the workspace's members,
      // or one a broken dependency kept from building): not checked. (An
      // error in the file says it was: rustc may write no dep-info when
      // parsing fails.)
      auto error =
          std::find_if(parsed.begin(), parsed.end(), [](const CheckDiagnostic& c) { return c.diag.severity == 1; });
      return Finish(v1::VALIDATION_OUTCOME_NO_VALIDATOR,
                    error != parsed.end()
                        ? "cargo check stopped at errors in other crates before it built " + in().path() +
                              " (the first: " + error->path + ":" + std::to_string(error->diag.line) + ": " +
                              error->diag.message.substr(0, 200) + ")"
                        : "cargo check built nothing that includes " + in().path() +
                              " (tests, examples, benches and files no `mod` names are not checked)");
    }
    if (j.check_output_cut && !j.baseline_step) {
      // What was cut may hold the change's new error: an error of its own,
      // which no baseline has, so the change is never clean on a part.
      CheckDiagnostic cut;
      cut.path = in().path();
      cut.diag.severity = 1;
      cut.diag.message = j.out.validator() + " printed more than " + std::to_string(j.check_output_cap >> 10) +
                         " KiB; the diagnostics past that were cut, so the change is unverified";
      cut.diag.source = program;
      parsed.push_back(std::move(cut));
    }
    std::vector<v1::Diagnostic> diagnostics;
    for (CheckDiagnostic& c : parsed) {
      v1::Diagnostic d;
      d.set_path(c.path);
      d.set_line(c.diag.line);
      d.set_column(c.diag.column);
      d.set_severity(c.diag.severity);
      d.set_code(c.diag.code);
      d.set_message(c.diag.message);
      d.set_source(c.diag.source);
      diagnostics.push_back(std::move(d));
    }
    return Accept(std::move(diagnostics));
  }
  if (now >= j.deadline) {
    return Finish(v1::VALIDATION_OUTCOME_TIMED_OUT,
                  j.out.validator() + " did not finish within " + Ms(milliseconds(in().check_timeout_ms())));
  }
}

SteadyTime Host::NextTimer() const {
  if (!job_) return SteadyTime::max();
  SteadyTime t = job_->deadline;
  if (job_->phase == Phase::kDiagnosing && job_->server != nullptr && job_->server->lsp) {
    const PublishedDiagnostics* pd = job_->server->lsp->Latest(in().path());
    if (pd != nullptr && pd->seq > job_->seq_floor && !pd->version) {
      SteadyTime settled = pd->at + Settle(*job_->server);
      t = SettlePending(*job_->server) ? settled : std::min(t, settled);
    }
  }
  if (job_->check) {
    if (auto c = job_->check->NextTimer()) t = std::min(t, *c);
  }
  return t;
}

void Host::AddWatchFds(std::vector<PollFd>* fds) {
  for (auto& [name, server] : servers_) {
    if (server.lsp) server.lsp->AddWatchFds(fds);
  }
  if (job_ && job_->check) job_->check->AddWatchFds(true, fds);
}

void Host::Service() {
  for (auto& [name, server] : servers_) {
    if (server.lsp) server.lsp->Service();
  }
  if (job_ && job_->check) job_->check->Service(true, this);
  Advance();
}

void Host::Stop() {
  job_.reset();
  servers_.clear();  // kills the servers
  KillAllDescendants();
}

}  // namespace odin::lsp_host_internal

namespace odin {

using lsp_host_internal::Host;

int RunLspHost(const LspHostOptions& options, Clock* clock) {
  // Orphans of the servers come back to us, so nothing outlives the host.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  Host host(options, clock);
  return RunWorkerLoop(options.worker, {v1::WORKER_KIND_LSP_HOST, {kLspCheckTool, kLspReferencesTool}}, clock, &host);
}

}  // namespace odin
