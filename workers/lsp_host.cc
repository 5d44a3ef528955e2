// Long file: the lsp host is one state machine (a job's phases, from a server's
// start to its diagnostics, a check command or a references answer) over the
// servers it keeps warm; split, its phases would reach into each other's state.
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
#include "workers/worker_channel.h"

namespace odin {
namespace {

constexpr char kLspCheckTool[] = "lsp_check";
constexpr char kLspReferencesTool[] = "lsp_references";
constexpr int kMaxLocations = 5000;  // of one references answer
constexpr int kMaxServerStarts = 2;  // failures to start before a server is given up for the session
constexpr size_t kMaxCheckOutput = 256 * 1024;
// cargo checks a whole crate (or workspace): one line per diagnostic, and a
// legacy crate's warnings can run to thousands.
constexpr size_t kMaxCargoOutput = 4 << 20;
constexpr size_t kMaxCargoMirrors = 4;  // crates kept warm; the least recently checked goes
constexpr Duration kFirstPublishSettle = milliseconds(2500);

std::string Ms(Duration d) { return std::to_string(ToMillis(d)) + " ms"; }

std::string BaseName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

bool IsScriptFile(const std::string& path) {
  static const char* kExtensions[] = {".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"};
  return std::any_of(std::begin(kExtensions), std::end(kExtensions),
                     [&](const char* ext) { return path.ends_with(ext) && !path.ends_with(".d.ts"); });
}

// Whether the relative specifier spec, imported from a file in dir, names
// path: "./heap", "./heap.js" (TypeScript's ESM style, for heap.ts),
// "./heap/index".
bool Names(const std::string& dir, const std::string& spec, const std::string& path) {
  std::string target = std::filesystem::path(dir + "/" + spec).lexically_normal().string();
  if (target == path) return true;
  std::string stem = path.substr(0, path.find_last_of('.'));
  std::string target_stem = target;
  for (const char* ext : {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"}) {
    if (target.ends_with(ext)) {
      target_stem = target.substr(0, target.size() - strlen(ext));
      break;
    }
  }
  return target_stem == stem || target + "/index" == stem;
}

// The TypeScript and JavaScript files of the workspace that import path by a
// relative specifier (import, export ... from, require, import()), at most
// max of them, from a bounded walk that skips dependencies, build output and
// hidden directories: where a change to what path exports shows its errors.
std::vector<std::string> Importers(const std::string& workspace, const std::string& path, size_t max) {
  static const std::regex kSpecifier(
      // Bounded repetitions: libstdc++'s matcher recurses per character, and
      // a file is anyone's bytes.
      R"re((?:\bfrom\s{0,8}|\bimport\s{0,8}\(\s{0,8}|\brequire\s{0,8}\(\s{0,8}|\bimport\s{1,8})['"](\.{1,2}/[^'"\n]{1,400})['"])re");
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(workspace,
                                                   std::filesystem::directory_options::skip_permission_denied, ec);
  int looked = 0, entries = 0;  // script files read, entries seen: bounded in a tree of any size
  for (; !ec && it != std::filesystem::recursive_directory_iterator() && out.size() < max && looked < 5000 &&
         entries < 50000;
       it.increment(ec)) {
    ++entries;
    const std::filesystem::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    if (e.is_directory(ec)) {
      if (name.starts_with(".") || name == "node_modules" || name == "dist" || name == "build" || name == "out") {
        it.disable_recursion_pending();
      }
      continue;
    }
    std::string file = e.path().string();
    if (!e.is_regular_file(ec) || file == path || !IsScriptFile(file)) continue;
    ++looked;
    StatusOr<std::string> text = ReadRegularFile(file, 512 * 1024);
    if (!text.ok()) continue;
    std::string dir = e.path().parent_path().string();
    for (std::sregex_iterator m(text->begin(), text->end(), kSpecifier), end; m != end; ++m) {
      if (Names(dir, (*m)[1].str(), path)) {
        out.push_back(file);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class Host : public CommandRun::Sink, public WorkerLogic {
 public:
  Host(const LspHostOptions& o, Clock* clock) : o_(o), clock_(clock) {}
  ~Host() override {
    RemoveTempDir();
    if (!cargo_dir_.empty()) RemoveTree(cargo_dir_);
  }

  void Attach(WorkerChannel* channel) override { channel_ = channel; }
  void Handle(const v1::Envelope& env) override;
  void AddWatchFds(std::vector<PollFd>* fds) override;
  SteadyTime NextTimer() const override;
  void Service() override;
  void Stop() override;

  void OnOutput(OutputStreamId, std::string_view data) override {
    if (!job_) return;
    std::string& out = job_->check_output;
    size_t room = job_->check_output_cap - std::min(out.size(), job_->check_output_cap);
    if (data.size() > room) job_->check_output_cut = true;
    out.append(data.substr(0, room));
  }

 private:
  struct Doc {
    int64_t version = 0;
    std::string sha256;  // of the text the server has
    SteadyTime used{};
  };
  struct Server {
    std::vector<std::string> command;
    std::unique_ptr<LspServer> lsp;
    int start_failures = 0;
    bool versioned = false;           // it has published a version: every publish must carry the one sent
    bool unversioned_known = false;   // a whole check went by on publishes without a version
    std::string given_up;             // why it is not started again
    std::map<std::string, Doc> docs;  // open documents, by path
  };
  enum class Phase { kStarting, kDiagnosing, kChecking, kOpening, kAsking };
  struct Job {
    v1::ToolRequest req;
    bool references = false;  // lsp_references, not lsp_check
    int64_t request_id = 0;   // of the references request sent
    int64_t pull_id = 0;      // of the diagnostics asked for, where the server is asked rather than waited for
    // Where a server is asked (TypeScript's): the files that import the one
    // validated, asked about too, so an error the change causes in them
    // counts (their baseline is taken with the file's). Found once per job.
    std::optional<std::vector<std::string>> dependents;
    std::vector<int64_t> dependent_pulls;  // in the order of dependents
    Phase phase = Phase::kStarting;
    bool baseline_step = false;  // what is being diagnosed is the baseline
    Server* server = nullptr;
    std::string server_name;
    int64_t version = 0;
    uint64_t seq_floor = 0;
    SteadyTime sent_at{};
    SteadyTime deadline{};
    SteadyTime started{};
    std::unique_ptr<CommandRun> check;
    std::string check_output;
    size_t check_output_cap = kMaxCheckOutput;
    bool check_output_cut = false;  // past the cap: diagnostics may be missing
    CargoMirror* cargo = nullptr;   // the crate cargo check runs in (kept while its job runs)
    std::string check_copy;
    std::string check_real;         // what check_copy stands for in the output
    std::string check_relative_to;  // where the output's relative paths are (cargo's)
    std::string fallback_reason;    // why the check command stands in for the server
    v1::ValidationOutput out;
  };

  const v1::ValidationInput& in() const { return job_->req.validation(); }
  const v1::ReferencesInput& refs() const { return job_->req.references(); }
  void StartJob(const v1::ToolRequest& req);
  // The running server named by ls, started if it is not; null (and why)
  // when it cannot start or was given up.
  Server* Acquire(const v1::LanguageServer& ls, std::string* why);
  // The server is ready: what the job does with it.
  void Ready();
  // lsp_references: syncs the file and asks; then finishes with the answer.
  void StartReferences();
  void AskReferences();
  void SendReferencesRequest();
  void FinishReferences(const LspReferences* answer, const std::string& reason);
  // Opens path in the server with text, or changes it to text; returns the
  // version sent (the current one when the server has the text already and
  // force is false).
  int64_t Sync(Server& server, const std::string& path, const std::string& language_id, const std::string& text,
               bool force);
  void Advance();
  // Sends the next content (baseline or final) to the server.
  void SendContent();
  // Validates with the check command; fresh unless it continues a check
  // command's run on the baseline.
  void StartCheck(const std::string& why_no_server, bool fresh = true);
  void Accept(std::vector<v1::Diagnostic> diagnostics);
  // A server's diagnostics of the file being validated, as the job reports them.
  std::vector<v1::Diagnostic> FromServer(const std::vector<LspDiagnostic>& items) const;
  std::vector<v1::Diagnostic> FromServer(const std::vector<LspDiagnostic>& items, const std::string& path) const;
  void ForgetPull();
  void Finish(v1::ValidationOutcome outcome, const std::string& reason);
  void FinishCall(v1::ToolResult result);
  void RemoveTempDir();
  // How long a publish without a version must stand before it is taken.
  // Until the server is known to publish without versions, long enough for
  // the versioned one that may follow: gopls publishes what it found on
  // disk (the file as the write left it) without a version right after a
  // didOpen, and the version sent only later (0.9 s later in the sandbox);
  // taken as the baseline, the disk's new error would not count as new.
  Duration Settle(const Server& server) const {
    Duration settle = milliseconds(in().settle_ms());
    return server.unversioned_known ? settle : std::max(settle, kFirstPublishSettle);
  }
  // Whether a publish without a version, which came before the deadline,
  // is still in its settle (it is then taken when the settle ends).
  bool SettlePending(const Server& server) const {
    const Job& j = *job_;
    if (j.pull_id != 0 || server.versioned || !server.lsp) return false;
    const PublishedDiagnostics* pd = server.lsp->Latest(in().path());
    return pd != nullptr && pd->seq > j.seq_floor && !pd->version && pd->at < j.deadline;
  }
  // Whether the baseline must be diagnosed first, by this validator.
  bool NeedBaseline(const std::string& validator) const {
    return in().want_baseline() && in().baseline_validator() != validator;
  }

  const LspHostOptions& o_;
  Clock* clock_;
  WorkerChannel* channel_ = nullptr;
  std::map<std::string, Server> servers_;  // by name
  std::optional<Job> job_;
  std::string temp_dir_;
  // The crates cargo check runs in, and their target directories: kept for
  // the host's life (a job's temp_dir_ is not), so cargo's builds stay warm.
  std::string cargo_dir_;
  std::string cargo_refused_;  // why cargo cannot check here, once known
  struct Crate {
    std::unique_ptr<CargoMirror> mirror;
    uint64_t last_use = 0;
  };
  std::map<std::string, Crate> cargo_mirrors_;  // by the crate's directory
  uint64_t cargo_uses_ = 0;
  int cargo_made_ = 0;
};

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
  bool check = req.tool() == kLspCheckTool && req.has_validation() && !req.validation().path().empty();
  bool references = req.tool() == kLspReferencesTool && req.has_references() && !req.references().path().empty();
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

}  // namespace

int RunLspHost(const LspHostOptions& options, Clock* clock) {
  // Orphans of the servers come back to us, so nothing outlives the host.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  Host host(options, clock);
  return RunWorkerLoop(options.worker, {v1::WORKER_KIND_LSP_HOST, {kLspCheckTool, kLspReferencesTool}}, clock, &host);
}

}  // namespace odin
