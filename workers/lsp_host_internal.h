#pragma once
// The lsp host's one class, private to lsp_host.cc (the job's phases over
// the servers) and lsp_host_check.cc (the check command and the job's end):
// one state machine whose phases share the job's state.

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "tools/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/lsp_client.h"
#include "workers/cargo_mirror.h"
#include "workers/lsp_host.h"
#include "workers/worker_channel.h"
#include "workers/worker_loop.h"

namespace odin::lsp_host_internal {

inline constexpr int kMaxLocations = 5000;  // of one references answer
inline constexpr int kMaxServerStarts = 2;  // failures to start before a server is given up for the session
inline constexpr size_t kMaxCheckOutput = 256 * 1024;
// cargo checks a whole crate (or workspace): one line per diagnostic, and a
// legacy crate's warnings can run to thousands.
inline constexpr size_t kMaxCargoOutput = 4 << 20;
inline constexpr size_t kMaxCargoMirrors = 4;  // crates kept warm; the least recently checked goes
inline constexpr Duration kFirstPublishSettle = milliseconds(2500);

inline std::string Ms(Duration d) { return std::to_string(ToMillis(d)) + " ms"; }
inline std::string BaseName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

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

}  // namespace odin::lsp_host_internal
