#include "coordinator/runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/file_util.h"
#include "base/secrets.h"
#include "coordinator/config_loader.h"
#include "coordinator/llm_config.h"
#include "coordinator/protected_paths.h"
#include "sandbox/sandbox_options.h"

namespace odin {

int CpuCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

Runtime::~Runtime() {
  if (coordinator_) coordinator_->Shutdown(milliseconds(200));
  coordinator_.reset();
  if (worker_log_fd_ >= 0) close(worker_log_fd_);
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Start(const RuntimeFlags& flags) {
  ASSIGN_OR_RETURN(Workspace ws, FindWorkspace(flags.dir));
  ASSIGN_OR_RETURN(LoadedConfig loaded, LoadConfig(ws, EnvironmentMap()));
  PrintConfigNotices(loaded);
  return Start(flags, ws, loaded.config);
}

StatusOr<std::unique_ptr<Runtime>> Runtime::Start(const RuntimeFlags& flags, const Workspace& workspace,
                                                  const Config& loaded_config) {
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->workspace_ = workspace;
  const Workspace& ws = rt->workspace_;
  rt->config_ = loaded_config;
  const Config& config = rt->config_;

  SandboxPolicy policy = config.sandbox_require ? SandboxPolicy::kRequire : SandboxPolicy::kAuto;
  if (!flags.sandbox.empty()) {
    ASSIGN_OR_RETURN(policy, ParseSandboxPolicy(flags.sandbox));
  }
  RETURN_IF_ERROR(PrepareStateDir(ws));

  std::string log_path = JoinPath(ws.state_dir, "worker.log");
  struct stat st;
  bool too_big = stat(log_path.c_str(), &st) == 0 && st.st_size > (1 << 20);
  rt->worker_log_fd_ = open(log_path.c_str(),
                            O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (too_big ? O_TRUNC : 0), 0644);
  if (rt->worker_log_fd_ < 0) return PosixError("cannot open " + log_path, errno);

  ASSIGN_OR_RETURN(rt->transport_, ZmqWorkerTransport::Create());

  // Workers get the environment without secrets; the ledger learns the
  // secrets' values so it can redact them wherever they show up.
  std::vector<std::string> env = CurrentEnvironment();
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(env);
  std::vector<std::string> worker_env = ScrubEnvironment(env);

  CoordinatorOptions co;
  co.session_kind = flags.session_kind;
  co.workspace = ws.root;
  co.mode = flags.mode;
  co.artifact_cap_bytes = config.artifact_cap_bytes;
  co.file_cache = config.file_cache;
  co.pool.size = flags.workers > 0 ? flags.workers
                                   : (config.worker_count > 0 ? config.worker_count : CpuCount());
  co.pool.heartbeat_interval = milliseconds(config.heartbeat_ms);
  std::string bin = ExecutableDir();
  std::string endpoint = rt->transport_->endpoint();
  std::string socket_dir = rt->transport_->socket_dir();
  int log_fd = rt->worker_log_fd_;
  std::string bwrap = config.bwrap_path;
  int heartbeat_ms = config.heartbeat_ms;
  co.pool.start_policy =
      flags.mode == "ask" || flags.mode == "plan" ? WorkerPolicy::kReadonly : WorkerPolicy::kWritable;
  co.validation = config.validation;
  co.validation.enabled = config.validation.enabled && flags.validate;
  co.memory_forced = flags.profile == "strict";
  co.breakers = config.breakers;
  co.command_rules = config.permissions;
  co.approval = flags.approval;
  co.pool.subagent_size = config.subagent_concurrency > 0 ? config.subagent_concurrency : 2 * CpuCount();
  co.subagent_timeout = seconds(config.subagent_timeout_seconds);
  co.subagent_stall = config.stall;
  // Home directories and configured secrets show empty inside the sandbox.
  // Toolchains installed there (pyenv, cargo, ~/.local/bin: the top
  // directory of each PATH entry below a hidden one) stay visible, read-only,
  // so programs run; the rest (~/.ssh, ~/.aws, ...) does not.
  std::vector<std::string> hidden = config.sandbox_hide;
  if (config.sandbox_hide_home) {
    const char* home = getenv("HOME");
    if (home != nullptr && *home != '\0') hidden.push_back(home);
    if (std::find(hidden.begin(), hidden.end(), "/root") == hidden.end()) hidden.push_back("/root");
  }
  Config::Limits limits = config.sandbox_limits;
  co.command_limits.cpu_seconds = limits.cpu_seconds;
  co.command_limits.file_size_bytes = limits.file_size_mb << 20;
  co.command_limits.open_files = limits.open_files;
  co.command_limits.address_space_bytes = limits.address_space_mb << 20;
  std::vector<std::string> toolchains;
  std::string path_var = getenv("PATH") ? getenv("PATH") : "";
  for (size_t start = 0; start <= path_var.size();) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string entry = path_var.substr(start, end - start);
    start = end + 1;
    for (const std::string& h : hidden) {
      if (h.size() > 1 && entry.size() > h.size() + 1 && entry.compare(0, h.size(), h) == 0 && entry[h.size()] == '/') {
        std::string top = entry.substr(0, entry.find('/', h.size() + 1));
        if (std::find(toolchains.begin(), toolchains.end(), top) == toolchains.end()) toolchains.push_back(top);
      }
    }
  }
  // Credentials that live in toolchain directories stay hidden.
  std::vector<std::string> masked;
  for (const std::string& top : toolchains) {
    for (const char* secret : {"credentials", "credentials.toml", "share/keyrings", ".credentials.json", "auth.json",
                               "hosts.yml"}) {
      std::string p = JoinPath(top, secret);
      if (PathExists(p)) masked.push_back(p);
    }
  }
  StatusOr<std::string> lsp_dir = RealPath(JoinPath(bin, "../lsp"));
  std::string bundled_lsp = lsp_dir.ok() ? *lsp_dir : "";
  co.pool.spawn_spec = [=](const std::string& worker_id, WorkerPolicy worker_policy) {
    SpawnOptions o;
    o.argv = {JoinPath(bin, "odin-sandbox"), "--workspace", ws.root, "--readonly", ws.state_dir,
              "--writable", socket_dir, "--policy", SandboxPolicyName(policy)};
    // Worker pools are keyed by policy: ask and plan get a read-only
    // workspace, so the operating system enforces what the mode gate says;
    // the lsp host and subagents only ever read it.
    if (worker_policy != WorkerPolicy::kWritable) o.argv.push_back("--workspace-readonly");
    // Protected paths stay read-only where the workspace is writable.
    for (const std::string& rel : ProtectedRelativePaths()) {
      std::string p = JoinPath(ws.root, rel);
      if (worker_policy == WorkerPolicy::kWritable && p != ws.state_dir && PathExists(p)) {
        o.argv.insert(o.argv.end(), {"--readonly", p});
      }
    }
    for (const std::string& p : hidden) o.argv.insert(o.argv.end(), {"--hide", p});
    for (const std::string& p : toolchains) o.argv.insert(o.argv.end(), {"--readonly", p});
    for (const std::string& p : masked) o.argv.insert(o.argv.end(), {"--mask", p});
    if (limits.processes > 0) o.argv.insert(o.argv.end(), {"--pids-max", std::to_string(limits.processes)});
    if (limits.memory_mb > 0) {
      o.argv.insert(o.argv.end(), {"--memory-max", std::to_string(limits.memory_mb << 20)});
    }
    // The language servers the setup installs beside the binaries (a private
    // /tmp would hide them when the build lives under /tmp).
    if (worker_policy == WorkerPolicy::kLspHost && !bundled_lsp.empty()) {
      o.argv.insert(o.argv.end(), {"--readonly", bundled_lsp});
    }
    if (!bwrap.empty()) {
      o.argv.push_back("--bwrap");
      o.argv.push_back(bwrap);
    }
    o.argv.push_back("--");
    const char* program = worker_policy == WorkerPolicy::kLspHost    ? "odin-lsp-host"
                           : worker_policy == WorkerPolicy::kSubagent ? "odin-subagent"
                                                                      : "odin-worker";
    o.argv.insert(o.argv.end(), {JoinPath(bin, program), "--connect", endpoint, "--id", worker_id,
                                 "--workspace", ws.root, "--heartbeat-ms", std::to_string(heartbeat_ms)});
    o.env = worker_env;
    o.stderr_fd = log_fd;
    // SIGTERM, not SIGKILL: without namespaces the launcher uses it to kill
    // the worker's whole tree before it goes.
    o.parent_death_signal = SIGTERM;
    return o;
  };

  // Workers start first: their sandboxes come up on another core while the
  // ledger opens. A ledger that fails to open takes them down again (the
  // Runtime's destructor).
  rt->coordinator_ = std::make_unique<Coordinator>(std::move(co), RealClock::Get(), &rt->launcher_,
                                                   rt->transport_.get());
  RETURN_IF_ERROR(rt->coordinator_->StartWorkers());
  ASSIGN_OR_RETURN(rt->ledger_, Ledger::Open(ws.ledger_path, std::move(redactor)));
  if (flags.resume_session.empty()) {
    RETURN_IF_ERROR(rt->coordinator_->AttachLedger(rt->ledger_.get()));
  } else {
    RETURN_IF_ERROR(rt->coordinator_->ResumeSession(rt->ledger_.get(), flags.resume_session));
  }
  return rt;
}

}  // namespace odin
