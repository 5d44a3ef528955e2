// odin doctor: what this machine gives Odin. Every sandbox layer is reported
// from a probe run through the real launcher, not from what should be true.
// Long file: one report of every layer, each section a few lines of probing
// and printing beside the others; split, they would only pass the same
// values around.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "config/approval_store.h"
#include "base/subprocess.h"
#include "base/version.h"
#include "cli/cli.h"
#include "sandbox/cgroup.h"
#include "sandbox/landlock.h"
#include "config/sandbox_settings.h"
#include "config/config_loader.h"
#include "gates/validators.h"
#include "workspace/overlay_changes.h"
#include "cli/cli_views.h"
#include "remote/curve_keys.h"
#include "session/runtime.h"
#include "ledger/ledger.h"
#include "workspace/watch_coverage.h"
#include "workspace/workspace.h"
#include "pool/worker_pool.h"
#include "sandbox/sandbox_options.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/workspace_overlay.h"
#include "session/resume.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using nlohmann::json;

struct Layer {
  std::string name;
  bool active;
  std::string detail;
};

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string ToolVersion(const std::string& path, const char* flag) {
  if (path.empty()) return "";
  StatusOr<CommandOutput> out = RunCommand({.argv = {path, flag}, .env = CurrentEnvironment()});
  return out.ok() ? FirstLine(out->output) : "";
}

// What the probe saw inside the sandbox.
struct Probe {
  bool ran = false;
  std::string sandbox;  // ODIN_SANDBOX
  std::string status;   // /proc/self/status
  std::string net_dev;  // /proc/net/dev
  std::string mounts;   // /proc/self/mountinfo
  int pid = 0;
  bool root_writable = true;
  bool state_hidden = false;    // .odin shows empty
  bool sysctl_writable = true;  // /proc/sys/kernel/core_pattern
  bool user_namespace = false;  // /proc/self/uid_map maps less than everything
  std::string uid_map;
  std::string id;                                  // uid and gid inside
  std::vector<std::string> readable_root_secrets;  // of the default list, what a command could read
  std::string failure;
};

// Runs a probe through the very sandbox a command of edit mode gets.
Probe RunProbe(const Workspace& ws, const WorkerSandbox& sandbox) {
  Probe p;
  std::string script =
      "echo \"sandbox=$ODIN_SANDBOX\"; echo pid=$$; echo \"id=$(id -u):$(id -g)\"; "
      "test -w / && echo root=rw || echo root=ro; "
      "test -w /proc/sys/kernel/core_pattern && echo sysctl=rw || echo sysctl=ro; "
      "if test -z \"$(ls -A '" +
      ws.state_dir +
      "' 2>/dev/null)\"; then echo state=hidden; else echo state=visible; fi; "
      "for f in /etc/shadow /etc/gshadow /etc/sudoers /root /home /var/lib/docker; do "
      "  if test -f \"$f\" && test -r \"$f\" && test -s \"$f\"; then echo \"readable=$f\"; "
      "  elif test -d \"$f\"; then for e in $(ls -A \"$f\" 2>/dev/null); do echo \"readable=$f/$e\"; done; fi; "
      "done; "
      "echo @uidmap; cat /proc/self/uid_map; "
      "echo @status; cat /proc/self/status; echo @net; cat /proc/net/dev; "
      "echo @mounts; cat /proc/self/mountinfo";
  SpawnOptions o;
  o.argv = sandbox.LauncherArgv(WorkerPolicy::kWritable);
  o.argv.insert(o.argv.end(), {"/bin/sh", "-c", script});
  o.env = ScrubEnvironment(CurrentEnvironment());
  StatusOr<CommandOutput> out = RunCommand(o);
  if (!out.ok()) {
    p.failure = out.status().message();
    return p;
  }
  if (out->exit_code != 0) {
    p.failure = FirstLine(out->output);
    return p;
  }
  p.ran = true;
  std::istringstream in(out->output);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("@", 0) == 0) {
      section = line;
      continue;
    }
    if (section == "@uidmap")
      p.uid_map += line + "\n";
    else if (section == "@status")
      p.status += line + "\n";
    else if (section == "@net")
      p.net_dev += line + "\n";
    else if (section == "@mounts")
      p.mounts += line + "\n";
    else if (line.rfind("odin-sandbox: WARNING", 0) == 0)
      continue;
    else if (line.rfind("sandbox=", 0) == 0)
      p.sandbox = line.substr(8);
    else if (line.rfind("pid=", 0) == 0)
      p.pid = atoi(line.c_str() + 4);
    else if (line == "root=ro")
      p.root_writable = false;
    else if (line == "sysctl=ro")
      p.sysctl_writable = false;
    else if (line == "state=hidden")
      p.state_hidden = true;
    else if (line.rfind("id=", 0) == 0)
      p.id = line.substr(3);
    else if (line.rfind("readable=", 0) == 0)
      p.readable_root_secrets.push_back(line.substr(9));
  }
  // The initial user namespace maps every uid: "0 0 4294967295".
  p.user_namespace = !p.uid_map.empty() && p.uid_map.find("4294967295") == std::string::npos;
  return p;
}

std::string StatusField(const std::string& status, const std::string& key) {
  size_t pos = status.find(key + ":");
  if (pos == std::string::npos) return "";
  size_t start = status.find_first_not_of(" \t", pos + key.size() + 1);
  return status.substr(start, status.find('\n', start) - start);
}

bool TmpIsPrivate(const std::string& mountinfo) {
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    // "... <mount point> <options> - <fs type> ..." (fields 5 and after " - ")
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    size_t dash = line.find(" - ");
    if (point == "/tmp" && dash != std::string::npos && line.compare(dash + 3, 5, "tmpfs") == 0) return true;
  }
  return false;
}

int CountInterfacesBesidesLoopback(const std::string& net_dev) {
  std::istringstream in(net_dev);
  std::string line;
  int n = 0, lineno = 0;
  while (std::getline(in, line)) {
    if (++lineno <= 2 || line.find(':') == std::string::npos) continue;
    std::string name = line.substr(0, line.find(':'));
    name.erase(0, name.find_first_not_of(' '));
    if (name != "lo") ++n;
  }
  return n;
}

// Where the settings come from, in one line: "user ~/.config/odin/odinconfig.json
// (absent); workspace odinconfig.json untrusted, ignoring llm.base_url (odin trust)".
std::string ConfigLine(const LoadedConfig& l) {
  std::string line = l.user_config_path.empty()
                         ? "user config: no config directory (set HOME or XDG_CONFIG_HOME)"
                         : "user " + l.user_config_path + (l.user_config_found ? "" : " (absent)");
  line += "; workspace odinconfig.json ";
  switch (l.trust) {
    case WorkspaceTrust::kNoConfig: return line + "absent";
    case WorkspaceTrust::kTrusted: return line + "trusted (sha256 " + l.security.sha256.substr(0, 12) + ")";
    case WorkspaceTrust::kUntrusted: line += "untrusted"; break;
    case WorkspaceTrust::kChanged: line += "untrusted (changed since odin trust)"; break;
  }
  std::string ignored;
  for (const std::string& k : l.ignored) ignored += (ignored.empty() ? "" : ", ") + k;
  line += ignored.empty() ? "" : ", ignoring " + ignored + " (odin trust)";
  return line + (l.trust_store_error.empty() ? "" : "; trust store unusable: " + l.trust_store_error);
}

}  // namespace

// Starts each configured MCP server once, as an agent session would (a
// "doctor" session in the ledger, ask mode's sandbox), and waits for each to
// be ready or failed.
std::string ProbeMcpServers(const GlobalFlags& g, const Workspace& ws, const Config& config, json* out) {
  *out = json::array();
  if (config.mcp_servers.empty()) return "no MCP servers\n";
  RuntimeFlags rf;
  rf.sandbox = g.sandbox;
  rf.network = g.network;
  rf.workers = 1;
  rf.session_kind = "doctor";
  rf.mode = "ask";
  rf.start_mcp = true;
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(rf, ws, config);
  if (!rt.ok()) return "cannot start the servers: " + rt.status().message() + "\n";
  Coordinator& coord = (*rt)->coordinator();
  int longest = 0;
  for (const auto& [name, spec] : config.mcp_servers) longest = std::max(longest, spec.startup_timeout_seconds);
  SteadyTime deadline = RealClock::Get()->Now() + seconds(longest + 2);
  auto starting = [&coord] {
    for (const McpRegistry::Server& s : coord.mcp().servers()) {
      if (s.state == McpRegistry::State::kStarting) return true;
    }
    return false;
  };
  while (starting() && RealClock::Get()->Now() < deadline) {
    Status polled = coord.Poll(milliseconds(100));
    if (!polled.ok()) break;
  }
  for (const McpRegistry::Server& s : coord.mcp().servers()) {
    json tools = json::array();
    for (const McpToolInfo& t : s.tools) tools.push_back({{"name", t.name}, {"read_only", t.read_only}});
    out->push_back({{"name", s.spec.name},
                    {"transport", McpTransportName(s.spec.transport)},
                    {"state", McpRegistry::StateName(s.state)},
                    {"error", s.error},
                    {"source", s.spec.source},
                    {"tools", tools}});
  }
  return DescribeMcpServers(coord.mcp());
}

// What commands wrote that waits in their overlays (.odin/overlay/ID/u)
// for no one: a crash cut the command off before its writes were applied.
// One entry per such directory, with what to do about it.
json WaitingWrites(const std::string& state_dir, Ledger* ledger) {
  json out = json::array();
  std::string root = CommandOverlayRoot(state_dir);
  StatusOr<WorkspaceFiles> state = WorkspaceFiles::Open(state_dir);
  StatusOr<std::vector<std::string>> ids = state.ok() ? state->List("overlay") : state.status();
  for (const std::string& id : ids.ok() ? *ids : std::vector<std::string>()) {
    if (id.starts_with("next-") || id.starts_with("probe-") || !ValidOverlayId(id) ||
        !state->Look("overlay/" + id).is_dir()) {
      continue;
    }
    std::string dir = root + "/" + id;
    StatusOr<std::vector<std::string>> upper = state->List("overlay/" + id + "/u");
    if (!upper.ok() || upper->empty()) continue;
    json w = {{"execution_id", id}, {"path", ".odin/overlay/" + id + "/u"}};
    StatusOr<ExecutionRow> row = ledger != nullptr ? ledger->FindExecution(id) : Status::NotFound(id, "no ledger");
    StatusOr<SessionRecord> session = row.ok() ? ledger->FindSession(row->start.session_id) : row.status();
    if (!LockOverlayDir(dir, /*exclusive=*/true).ok()) {
      w["state"] = "running";
      w["what"] = "a live worker holds it";
    } else if (!session.ok() || row->start.execution_id != id) {
      w["state"] = "unknown";
      w["what"] = "no call of this ledger's; its writes stay there";
    } else {
      w["session_id"] = session->id;
      StatusOr<std::vector<ConversationEntry>> entries = ledger->ListConversation(session->id, "main");
      // What a resume would do (session/agent_session.cc), but for a hold
      // (the resume's configuration decides that).
      std::string why = WhyAResumeLeavesWrites(session->kind, row->end.has_value(),
                                               entries.ok() && LastRanOnThisBoot(*entries), /*may_hold=*/false);
      if (!why.empty()) {
        w["state"] = "left";
        w["what"] = why + ": they stay there";
      } else {
        w["state"] = "cut_off";
        w["what"] = "`odin --resume " + session->id +
                    "` applies them (unless a workflow, a reviewer that can hold, or the strict profile is on)";
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

// Background commands the ledger shows started and never ended (the newest
// 64 starts): running in a live session's odin, or gone with an odin that
// was killed (a background command dies with its odin; a resume records
// its end as interrupted).
json BackgroundCommands(Ledger* ledger) {
  json out = json::array();
  if (ledger == nullptr) return out;
  StatusOr<std::vector<GateEvent>> started = ledger->ListGateEventsOfKind("background_started", 64);
  std::map<std::string, int64_t> owners;  // session -> its running odin's pid (0: none)
  for (const GateEvent& e : started.ok() ? *started : std::vector<GateEvent>()) {
    StatusOr<ExecutionRow> row = ledger->FindExecution(e.execution_id);
    if (!row.ok() || row->start.execution_id != e.execution_id || row->end.has_value()) continue;
    if (!owners.count(e.session_id)) {
      StatusOr<std::vector<ConversationEntry>> entries = ledger->ListConversation(e.session_id, "main");
      owners[e.session_id] = entries.ok() ? RunningOwner(*entries) : 0;
    }
    int64_t pid = owners[e.session_id];
    json d = ParseJson(e.detail_json);
    out.push_back({{"execution_id", e.execution_id},
                   {"session_id", e.session_id},
                   {"command", d.is_object() ? d.value("command", "") : ""},
                   {"state", pid > 0 ? "running" : "gone"},
                   {"what", pid > 0 ? "running in odin process " + std::to_string(pid)
                                    : std::string("went with its odin, which ended without recording its end")}});
  }
  return out;
}

int RunDoctor(const GlobalFlags& g, bool as_json) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) {
    std::cerr << "odin doctor: " << ws.status().message() << "\n";
    return kError;
  }
  // A broken config is what doctor is run to find: it is reported, and the
  // rest of the report uses the defaults.
  StatusOr<LoadedConfig> loaded = LoadConfig(*ws, EnvironmentMap());
  std::string config_error;
  if (!loaded.ok()) {
    config_error = loaded.status().message();
    loaded = LoadedConfig{};
  }
  const Config* config = &loaded->config;
  StatusOr<SandboxPolicy> parsed_policy = EffectiveSandboxPolicy(*config, g.sandbox);
  if (!parsed_policy.ok()) {
    std::cerr << "odin doctor: " << parsed_policy.status().message() << "\n";
    return kUsageError;
  }
  SandboxPolicy policy = *parsed_policy;
  WorkerSandbox sandbox = WorkerSandbox::Make(*ws, WorkerSandboxSettings(*config, *ws), policy, ExecutableDir());

  // Programs are found as the runtime finds them: PATH, then <bin>/../lsp.
  ProgramLookup lookup = DefaultProgramLookup(getenv("PATH") ? getenv("PATH") : "", ExecutableDir());
  std::string bwrap = config->bwrap_path.empty() ? lookup("bwrap") : config->bwrap_path;
  Probe probe = RunProbe(*ws, sandbox);
  bool namespaces = probe.ran && probe.sandbox == "bwrap";
  std::string why_not = !probe.ran ? probe.failure : namespaces ? "" : probe.sandbox;

  std::vector<Layer> layers;
  auto add = [&](std::string name, bool active, std::string detail) {
    layers.push_back({std::move(name), active, std::move(detail)});
  };
  add("bubblewrap", namespaces, namespaces ? bwrap + " (" + ToolVersion(bwrap, "--version") + ")" : why_not);
  if (probe.ran) {
    add("pid namespace", probe.pid <= 3, "the sandboxed program is pid " + std::to_string(probe.pid));
    int ifaces = CountInterfacesBesidesLoopback(probe.net_dev);
    add("no network", ifaces == 0,
        ifaces == 0 ? "no interface but loopback" : std::to_string(ifaces) + " interfaces besides loopback");
    std::string first_map;
    std::istringstream fields(FirstLine(probe.uid_map));
    for (std::string field; fields >> field;) first_map += (first_map.empty() ? "" : " ") + field;
    add("user namespace", probe.user_namespace,
        probe.user_namespace ? "uid map \"" + first_map + "\"; commands run as " + probe.id +
                                   (sandbox.run_uid() >= 0   ? " (the workspace's owner)"
                                    : sandbox.runs_as_root() ? " (root, mapped to the host's root)"
                                                             : "")
                             : "none: commands run in the host's user namespace as " + probe.id);
    std::string cap_eff = StatusField(probe.status, "CapEff");
    bool no_caps = !cap_eff.empty() && cap_eff.find_first_not_of('0') == std::string::npos;
    add("no capabilities", no_caps, "CapEff " + cap_eff + ", CapBnd " + StatusField(probe.status, "CapBnd"));
    add("read-only root", !probe.root_writable, probe.root_writable ? "/ is writable" : "/ is read-only");
    add("read-only /proc/sys", !probe.sysctl_writable,
        probe.sysctl_writable ? "/proc/sys/kernel/core_pattern is writable" : "kernel knobs read-only");
    add("private /tmp", TmpIsPrivate(probe.mounts), "a tmpfs of its own");
    add(".odin hidden", probe.state_hidden,
        probe.state_hidden ? ws->state_dir + " shows empty" : ws->state_dir + " is visible");
    if (sandbox.runs_as_root()) {
      // Toolchains installed below a hidden home stay visible on purpose.
      std::vector<std::string> exposed;
      for (const std::string& r : probe.readable_root_secrets) {
        bool toolchain =
            std::find(sandbox.toolchains().begin(), sandbox.toolchains().end(), r) != sandbox.toolchains().end();
        if (!toolchain) exposed.push_back(r);
      }
      probe.readable_root_secrets = exposed;
      std::string readable;
      for (const std::string& r : probe.readable_root_secrets) readable += (readable.empty() ? "" : ", ") + r;
      add("root's secrets hidden", probe.readable_root_secrets.empty(),
          probe.readable_root_secrets.empty()
              ? "commands run as root: shadow, sudoers, ssh host keys, /root, /home, /var/lib/docker hidden (but "
                "the toolchains in them); other files only root may read stay readable (sandbox.root_hidden)"
              : "readable: " + readable);
    }
    std::string nnp = StatusField(probe.status, "NoNewPrivs");
    add("no_new_privs", nnp == "1", nnp == "1" ? "set" : "not set");
    std::string seccomp = StatusField(probe.status, "Seccomp");
    add("seccomp filter", seccomp == "2",
        seccomp == "2" ? std::to_string(DeniedSyscalls().size()) +
                             " syscalls denied, Docker's default list among them (ptrace, open_by_handle_at, "
                             "mounts, namespaces, keyrings, the clock, modules, io_uring, bpf; without namespaces "
                             "also sockets other than AF_UNIX)"
                       : "none");
  }
  std::string cgroup_how;
  Status cgroup = SandboxCgroup::Probe(&cgroup_how);
  const Config::Limits& limits = config->sandbox_limits;
  bool limited = limits.processes > 0 || limits.memory_mb > 0;
  add("cgroup limits", cgroup.ok() && limited,
      !cgroup.ok() ? "none: " + cgroup.message() + " (RLIMIT_NPROC does not stop root)"
      : limited    ? cgroup_how + ": " + std::to_string(limits.processes) + " processes, " +
                      std::to_string(limits.memory_mb) + " MB per worker"
                : "off in odinconfig.json (sandbox.limits)");
  add("command rlimits", limits.cpu_seconds || limits.file_size_mb || limits.open_files || limits.address_space_mb,
      "cpu " + (limits.cpu_seconds ? std::to_string(limits.cpu_seconds) + " s" : std::string("-")) + ", file size " +
          (limits.file_size_mb ? std::to_string(limits.file_size_mb) + " MB" : std::string("-")) + ", open files " +
          (limits.open_files ? std::to_string(limits.open_files) : std::string("-")) + ", address space " +
          (limits.address_space_mb ? std::to_string(limits.address_space_mb) + " MB" : std::string("-")));
  int landlock = LandlockAbi();
  add("landlock fallback", landlock > 0 && !namespaces,
      landlock <= 0 ? "none: the kernel offers no Landlock"
      : namespaces  ? "available (ABI " + std::to_string(landlock) + "), used when bubblewrap cannot run" +
                         std::string(geteuid() == 0 ? " (as root only when chosen: --sandbox fallback)" : "")
                   : "confines writes to the workspace (ABI " + std::to_string(landlock) + ")");

  // Opened even when the file is missing: its anchor may say it should not be.
  std::string ledger_detail = "not created yet";
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(ws->ledger_path);
  if (ledger.ok() || ledger.status().code() != StatusCode::kNotFound) {
    if (!ledger.ok())
      ledger_detail = ledger.status().message();
    else {
      StatusOr<VerifyReport> report = (*ledger)->Verify();
      ledger_detail = !report.ok() ? report.status().message()
                      : report->ok ? std::to_string(report->records) + " records, hash chain intact"
                                   : "ALTERED: " + report->problem;
    }
  }
  json waiting = WaitingWrites(ws->state_dir, ledger.ok() ? ledger->get() : nullptr);
  json background = BackgroundCommands(ledger.ok() ? ledger->get() : nullptr);
  json views = IsolatedViews(*ws, ledger.ok() ? ledger->get() : nullptr);
  std::string rg = lookup("rg"), clangd = lookup("clangd");
  bool failed = (policy == SandboxPolicy::kRequire && !namespaces) || !config_error.empty();
  // The language servers the validation gate would use, and their check commands.
  struct Validator {
    std::string name, program, extensions, fallback;
  };
  std::vector<Validator> validators;
  for (const ServerSpec& server : config->validation.servers) {
    if (server.command.empty()) continue;
    std::string extensions;
    for (const std::string& e : server.extensions) extensions += (extensions.empty() ? "" : " ") + e;
    validators.push_back({server.name, lookup(server.command[0]), extensions,
                          FallbackChecks(config->validation, server.extensions, lookup)});
  }

  // A daemon serving the workspace: what it reports (through odin-rpc, which
  // speaks gRPC).
  std::optional<CommandOutput> daemon;
  if (ExistsBelow(ws->state_dir, "daemon.json")) {
    SpawnOptions so;
    so.argv = {ExecutableDir() + "/odin-rpc", "-C", ws->root, "status"};
    if (as_json) so.argv.push_back("--json");
    StatusOr<CommandOutput> ran = RunCommand(so);
    daemon = ran.ok() ? *ran : CommandOutput{1, ran.status().message()};
  }
  bool network = g.network || config->sandbox_network;
  std::string network_detail = network ? std::string("on: edit mode's commands reach the network (") +
                                             (g.network ? "--network" : "sandbox.network") + "); ask and plan never"
                                       : "off (--network or sandbox.network in your config turns it on)";
  json mcp_json;
  std::string mcp = ProbeMcpServers(g, *ws, *config, &mcp_json);
  // The reviewers the config's profile turns on (--profile may differ per run).
  Profile profile = Profile::kAuto;
  ParseProfile(config->profile, &profile);
  json reviewers = json::array();
  std::string reviewer_lines;
  for (ReviewRole role : kReviewRoles) {
    bool on = ReviewerOn(config->reviews, profile, role);
    const ReviewerSettings& s = config->reviews.of(role);
    std::string model = s.model.empty() ? "the utility model" : s.model;
    std::string extra;
    if (role == ReviewRole::kCritic) extra = ", max_rounds " + std::to_string(config->reviews.critic_max_rounds);
    if (role == ReviewRole::kDrift) {
      char p[32];
      snprintf(p, sizeof p, "%.2f", config->reviews.drift_probability);
      extra = ", every " + std::to_string(config->reviews.drift_every) + " changes and at random p=" + p + ", seed " +
              (config->reviews.drift_seed ? std::to_string(*config->reviews.drift_seed) : std::string("per session"));
    }
    reviewers.push_back({{"role", ReviewRoleName(role)},
                         {"on", on},
                         {"model", s.model},
                         {"prompt", s.prompt.empty() ? "odin" : "config"}});
    char line[512];
    std::string detail = on ? model + ", " + (s.prompt.empty() ? "Odin's prompt" : "the config's prompt") + extra : "";
    snprintf(line, sizeof line, "  %-11s %-4s %s\n", ReviewRoleName(role), on ? "on" : "off", detail.c_str());
    reviewer_lines += line;
  }
  std::string workflow = config->workflow.empty() ? "none (the hydrator routes, when on)" : config->workflow;
  // workers.remote: whether a coordinator here could listen for hosts.
  const Config::RemoteWorkers& r = config->remote;
  json remote = {{"launcher", r.launcher}};
  std::string remote_line = "off (workers.remote in your config; docs/remote.md)";
  if (r.launcher != "off") {
    std::string keys = r.keys.empty() ? DefaultKeysDir() : r.keys;
    StatusOr<CurveKeyPair> key = LoadKeyPair(JoinPath(keys, "coordinator.key"));
    StatusOr<std::set<std::string>> allowed = LoadAllowedHosts(JoinPath(keys, "allowed_hosts"));
    std::string kinds;
    for (const std::string& k : r.kinds) kinds += (kinds.empty() ? "" : ", ") + k;
    remote = {{"launcher", r.launcher},
              {"listen", r.listen},
              {"kinds", r.kinds},
              {"keys", keys},
              {"coordinator_key", key.ok() ? key->public_key : ""},
              {"key_error", key.ok() ? "" : key.status().message()},
              {"allowed_hosts", allowed.ok() ? static_cast<int>(allowed->size()) : 0},
              {"allowed_error", allowed.ok() ? "" : allowed.status().message()}};
    remote_line = r.launcher + " on " + r.listen + " (CURVE), kinds " + kinds + "; " +
                  (key.ok() ? "coordinator key " + key->public_key : "no usable key: " + key.status().message()) +
                  "; " +
                  (allowed.ok() ? std::to_string(allowed->size()) + " host key(s) allowed"
                                : "no allow list: " + allowed.status().message());
    if (!key.ok() || !allowed.ok()) failed = true;
    if (r.launcher == "slurm") {
      const Config::RemoteWorkers::Slurm& c = r.slurm;
      const char* path = getenv("PATH");
      std::string srun = SearchPath("srun", path != nullptr ? path : "/usr/bin:/bin");
      std::string host_key = JoinPath(keys, "hosts/slurm.key");
      bool have_key = access(host_key.c_str(), R_OK) == 0;
      remote["slurm"] = {{"srun", srun},
                         {"host_key", have_key ? host_key : ""},
                         {"partition", c.partition},
                         {"cpus", c.cpus},
                         {"memory_mb", c.memory_mb},
                         {"time", c.time},
                         {"max_hosts", c.max_hosts},
                         {"idle_seconds", config->idle_seconds}};
      remote_line += "; Slurm: " + (srun.empty() ? std::string("srun is not on PATH") : srun) + ", up to " +
                     std::to_string(c.max_hosts) + " host(s) of " + std::to_string(c.cpus) + " CPU(s) and " +
                     std::to_string(c.memory_mb) + " MB for " + c.time +
                     (c.partition.empty() ? "" : " in partition " + c.partition) + ", given back after " +
                     std::to_string(config->idle_seconds) + " s idle" +
                     (have_key ? "" : "; no " + host_key + " (odin keys generate --host slurm)");
      if (srun.empty() || !have_key) failed = true;
    }
  }
  // Whether changes made outside Odin can be heard of, or each command
  // must look at the whole tree for them.
  WatchCoverage watch = ProbeWatchCoverage(ws->root);
  bool covered = watch.complete && (watch.limit < 0 || static_cast<int64_t>(watch.directories) < watch.limit);
  // The user's saved approvals that answer here (odin permissions).
  json approvals = json::array();
  std::string approvals_line;
  if (std::string path = ApprovalStore::DefaultPath(EnvironmentMap()); !path.empty()) {
    StatusOr<std::vector<SavedApproval>> saved = ApprovalStore(path).List();
    size_t here = 0;
    for (const SavedApproval& a : saved.ok() ? *saved : std::vector<SavedApproval>{}) {
      if (!a.workspace.empty() && a.workspace != ws->root) continue;
      ++here;
      approvals.push_back({{"key", a.key}, {"workspace", a.workspace.empty() ? json() : json(a.workspace)}});
      approvals_line += "\n  " + VisibleControls(DescribeApprovalKey(a.key)) +
                        (a.workspace.empty() ? " (every workspace)" : " (this workspace)");
    }
    approvals_line = (saved.ok() ? std::to_string(here) + " answer here (odin permissions lists and removes them)"
                                 : "unusable: " + VisibleControls(saved.status().message())) +
                     approvals_line;
  }
  if (as_json) {
    json j = {{"version", ODIN_VERSION},
              {"workspace", ws->root},
              {"ledger", {{"path", ws->ledger_path}, {"detail", ledger_detail}}},
              {"sandbox_policy", SandboxPolicyName(policy)},
              {"commands_network", network},
              {"layers", json::array()},
              {"tools", {{"bwrap", bwrap}, {"rg", rg}, {"clangd", clangd}}},
              {"external_changes", {{"watched", covered}, {"directories", watch.directories}, {"limit", watch.limit}}},
              {"config",
               {{"user", loaded->user_config_path},
                {"user_found", loaded->user_config_found},
                {"workspace", ExistsBelow(ws->root, "odinconfig.json") ? ws->config_path : ""},
                {"trust", WorkspaceTrustName(loaded->trust)},
                {"trust_store", loaded->trust_store_path},
                {"trust_store_error", loaded->trust_store_error},
                {"ignored", loaded->ignored},
                {"error", config_error}}},
              {"validation_enabled", config->validation.enabled},
              {"hooks", DescribeHooks(config->hooks)},
              {"profile", config->profile},
              {"workflow", config->workflow},
              {"reviewers", reviewers},
              {"remote_workers", remote},
              {"mcp_servers", mcp_json},
              {"waiting_writes", waiting},
              {"background_commands", background},
              {"saved_approvals", approvals},
              {"language_servers", json::array()}};
    for (const Layer& l : layers) j["layers"].push_back({{"name", l.name}, {"active", l.active}, {"detail", l.detail}});
    for (const Validator& v : validators) {
      j["language_servers"].push_back(
          {{"name", v.name}, {"program", v.program}, {"extensions", v.extensions}, {"fallback", v.fallback}});
    }
    j["isolated_views"] = {{"max_view_mb", config->isolation_max_view_mb}, {"views", views}};
    if (daemon) {
      json d = ParseJson(daemon->output);
      j["daemon"] = daemon->exit_code == 0 && !d.is_discarded() ? d : json({{"error", daemon->output}});
    }
    std::cout << j.dump(2) << "\n";
    return failed ? kError : 0;
  }
  printf("odin %s\nworkspace  %s\nledger     %s (%s)\nconfig     %s\nsandbox    policy %s\n", ODIN_VERSION,
         ws->root.c_str(), ws->ledger_path.c_str(), ledger_detail.c_str(),
         config_error.empty() ? ConfigLine(*loaded).c_str()
                              : ("BROKEN: " + config_error + " (what follows uses the defaults)").c_str(),
         SandboxPolicyName(policy));
  for (const Layer& l : layers) {
    printf("  %-21s %-8s  %s\n", l.name.c_str(), l.active ? "active" : "inactive", l.detail.c_str());
  }
  printf("  %-21s %s\n", "network for commands", network_detail.c_str());
  printf("external changes  %s: %zu%s directories to watch, fs.inotify.max_user_watches = %lld%s\n",
         covered ? "watched (inotify)" : "NOT WATCHED", watch.directories, watch.complete ? "" : "+",
         static_cast<long long>(watch.limit),
         covered ? "" : "; the whole tree would be looked at between calls (raise the limit with sysctl)");
  printf("tools\n");
  for (auto [name, path, flag] : {std::tuple{"bwrap", bwrap, "--version"}, std::tuple{"rg", rg, "--version"},
                                  std::tuple{"clangd", clangd, "--version"}}) {
    std::string version = ToolVersion(path, flag);
    printf("  %-8s %s%s\n", name, path.empty() ? "not found" : path.c_str(),
           version.empty() ? "" : (" (" + version + ")").c_str());
  }
  printf("language servers (validation %s)\n", config->validation.enabled ? "on" : "off");
  for (const Validator& v : validators) {
    printf("  %-14s %s  (%s; %s)\n", v.name.c_str(), v.program.empty() ? "not found" : v.program.c_str(),
           v.extensions.c_str(), v.fallback.empty() ? "no check command" : ("else " + v.fallback).c_str());
  }
  printf("reviewers (profile %s; workflow %s)\n%s", config->profile.c_str(), workflow.c_str(), reviewer_lines.c_str());
  printf("remote workers\n  %s\n", remote_line.c_str());
  std::string hooks = DescribeHooks(config->hooks);
  printf("hooks\n");
  for (size_t start = 0; start < hooks.size();) {
    size_t end = hooks.find('\n', start);
    printf("  %s\n", hooks.substr(start, end - start).c_str());
    start = end + 1;
  }
  printf("MCP servers\n");
  for (size_t start = 0; start < mcp.size();) {
    size_t end = mcp.find('\n', start);
    printf("  %s\n", mcp.substr(start, end - start).c_str());
    start = end + 1;
  }
  if (!approvals_line.empty()) printf("saved approvals  %s\n", approvals_line.c_str());
  if (!waiting.empty()) printf("writes of commands cut off\n");
  for (const json& w : waiting) {
    printf("  %s  %s: %s\n", w["execution_id"].get<std::string>().c_str(), w["path"].get<std::string>().c_str(),
           w["what"].get<std::string>().c_str());
  }
  if (!background.empty()) printf("background commands\n");
  for (const json& b : background) {
    printf("  %s  %s: %s\n", b["execution_id"].get<std::string>().c_str(),
           VisibleControls(b["command"].get<std::string>().substr(0, 80)).c_str(),
           b["what"].get<std::string>().c_str());
  }
  if (!views.empty())
    printf("isolated views (each at most %lld MB)\n", static_cast<long long>(config->isolation_max_view_mb));
  for (const json& v : views) {
    int64_t bytes = v["bytes"].get<int64_t>();
    std::string session = v["session_id"].get<std::string>();
    printf("  %s  %s  %s  %s\n", session.empty() ? "(no session)" : session.c_str(),
           v["view"].get<std::string>().c_str(),
           bytes < 0 ? "size unknown" : (std::to_string((bytes + (1 << 20) - 1) >> 20) + " MB").c_str(),
           v["state"].get<std::string>().c_str());
  }
  if (daemon) {
    if (daemon->exit_code == 0)
      std::cout << daemon->output;
    else
      std::cout << "daemon     not answering: " << daemon->output;
  }
  if (failed) std::cerr << "odin doctor: sandbox required but unavailable: " << why_not << "\n";
  return failed ? kError : 0;
}

}  // namespace odin
