// odin doctor: what this machine gives Odin. Every sandbox layer is reported
// from a probe run through the real launcher, not from what should be true.

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/version.h"
#include "coordinator/cli.h"
#include "sandbox/cgroup.h"
#include "sandbox/landlock.h"
#include "coordinator/config.h"
#include "coordinator/ledger.h"
#include "coordinator/workspace.h"
#include "sandbox/sandbox_options.h"

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
  bool state_writable = true;
  std::string failure;
};

Probe RunProbe(const Workspace& ws, SandboxPolicy policy, const std::string& bwrap) {
  Probe p;
  std::string script =
      "echo \"sandbox=$ODIN_SANDBOX\"; echo pid=$$; "
      "test -w / && echo root=rw || echo root=ro; "
      "if test -d '" + ws.state_dir + "'; then test -w '" + ws.state_dir +
      "' && echo state=rw || echo state=ro; else echo state=absent; fi; "
      "echo @status; cat /proc/self/status; echo @net; cat /proc/net/dev; "
      "echo @mounts; cat /proc/self/mountinfo";
  SpawnOptions o;
  o.argv = {JoinPath(ExecutableDir(), "odin-sandbox"), "--workspace", ws.root, "--readonly",
            ws.state_dir, "--policy", SandboxPolicyName(policy)};
  if (!bwrap.empty()) o.argv.insert(o.argv.end(), {"--bwrap", bwrap});
  o.argv.insert(o.argv.end(), {"--", "/bin/sh", "-c", script});
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
    if (section == "@status") p.status += line + "\n";
    else if (section == "@net") p.net_dev += line + "\n";
    else if (section == "@mounts") p.mounts += line + "\n";
    else if (line.rfind("odin-sandbox: WARNING", 0) == 0) continue;
    else if (line.rfind("sandbox=", 0) == 0) p.sandbox = line.substr(8);
    else if (line.rfind("pid=", 0) == 0) p.pid = atoi(line.c_str() + 4);
    else if (line == "root=ro") p.root_writable = false;
    else if (line == "state=ro") p.state_writable = false;
  }
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

}  // namespace

int RunDoctor(const GlobalFlags& g, bool as_json) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) {
    std::cerr << "odin doctor: " << ws.status().message() << "\n";
    return kError;
  }
  StatusOr<Config> config = LoadConfig(ws->config_path);
  if (!config.ok()) {
    std::cerr << "odin doctor: " << config.status().message() << "\n";
    return kError;
  }
  SandboxPolicy policy = config->sandbox_require ? SandboxPolicy::kRequire : SandboxPolicy::kAuto;
  if (!g.sandbox.empty()) policy = *ParseSandboxPolicy(g.sandbox);

  // Programs are found as the runtime finds them: PATH, then <bin>/../lsp.
  ProgramLookup lookup = DefaultProgramLookup(getenv("PATH") ? getenv("PATH") : "", ExecutableDir());
  std::string bwrap = config->bwrap_path.empty() ? lookup("bwrap") : config->bwrap_path;
  Probe probe = RunProbe(*ws, policy, config->bwrap_path);
  bool namespaces = probe.ran && probe.sandbox == "bwrap";
  std::string why_not = !probe.ran ? probe.failure
                        : namespaces ? ""
                                     : probe.sandbox;

  std::vector<Layer> layers;
  auto add = [&](std::string name, bool active, std::string detail) {
    layers.push_back({std::move(name), active, std::move(detail)});
  };
  add("bubblewrap", namespaces,
      namespaces ? bwrap + " (" + ToolVersion(bwrap, "--version") + ")" : why_not);
  if (probe.ran) {
    add("pid namespace", probe.pid <= 3, "the sandboxed program is pid " + std::to_string(probe.pid));
    int ifaces = CountInterfacesBesidesLoopback(probe.net_dev);
    add("no network", ifaces == 0,
        ifaces == 0 ? "no interface but loopback" : std::to_string(ifaces) + " interfaces besides loopback");
    add("read-only root", !probe.root_writable, probe.root_writable ? "/ is writable" : "/ is read-only");
    add("private /tmp", TmpIsPrivate(probe.mounts), "a tmpfs of its own");
    add(".odin read-only", !probe.state_writable, ws->state_dir);
    std::string nnp = StatusField(probe.status, "NoNewPrivs");
    add("no_new_privs", nnp == "1", nnp == "1" ? "set" : "not set");
    std::string seccomp = StatusField(probe.status, "Seccomp");
    add("seccomp filter", seccomp == "2",
        seccomp == "2" ? "ptrace, process_vm_*, io_uring, modules, mounts and bpf denied (without namespaces also "
                         "sockets other than AF_UNIX)"
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
      : namespaces  ? "available (ABI " + std::to_string(landlock) + "), used when bubblewrap cannot run"
                    : "confines writes to the workspace (ABI " + std::to_string(landlock) + ")");

  // Opened even when the file is missing: its anchor may say it should not be.
  std::string ledger_detail = "not created yet";
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(ws->ledger_path);
  if (ledger.ok() || ledger.status().code() != StatusCode::kNotFound) {
    if (!ledger.ok()) ledger_detail = ledger.status().message();
    else {
      StatusOr<VerifyReport> report = (*ledger)->Verify();
      ledger_detail = !report.ok() ? report.status().message()
                      : report->ok ? std::to_string(report->records) + " records, hash chain intact"
                                   : "ALTERED: " + report->problem;
    }
  }
  std::string rg = lookup("rg"), clangd = lookup("clangd");
  bool failed = policy == SandboxPolicy::kRequire && !namespaces;
  // The language servers the validation gate would use.
  struct Validator {
    std::string name, program, extensions;
  };
  std::vector<Validator> validators;
  for (const ServerSpec& server : config->validation.servers) {
    if (server.command.empty()) continue;
    std::string extensions;
    for (const std::string& e : server.extensions) extensions += (extensions.empty() ? "" : " ") + e;
    validators.push_back({server.name, lookup(server.command[0]), extensions});
  }

  // A daemon serving the workspace: what it reports (through odin-rpc, which
  // speaks gRPC).
  std::optional<CommandOutput> daemon;
  if (PathExists(ws->state_dir + "/daemon.json")) {
    SpawnOptions so;
    so.argv = {ExecutableDir() + "/odin-rpc", "-C", ws->root, "status"};
    if (as_json) so.argv.push_back("--json");
    StatusOr<CommandOutput> ran = RunCommand(so);
    daemon = ran.ok() ? *ran : CommandOutput{1, ran.status().message()};
  }
  if (as_json) {
    json j = {{"version", ODIN_VERSION},
              {"workspace", ws->root},
              {"ledger", {{"path", ws->ledger_path}, {"detail", ledger_detail}}},
              {"sandbox_policy", SandboxPolicyName(policy)},
              {"layers", json::array()},
              {"tools", {{"bwrap", bwrap}, {"rg", rg}, {"clangd", clangd}}},
              {"validation_enabled", config->validation.enabled},
              {"language_servers", json::array()}};
    for (const Layer& l : layers) j["layers"].push_back({{"name", l.name}, {"active", l.active}, {"detail", l.detail}});
    for (const Validator& v : validators) {
      j["language_servers"].push_back({{"name", v.name}, {"program", v.program}, {"extensions", v.extensions}});
    }
    if (daemon) {
      json d = json::parse(daemon->output, nullptr, false);
      j["daemon"] = daemon->exit_code == 0 && !d.is_discarded() ? d : json({{"error", daemon->output}});
    }
    std::cout << j.dump(2) << "\n";
    return failed ? kError : 0;
  }
  printf("odin %s\nworkspace  %s\nledger     %s (%s)\nsandbox    policy %s\n", ODIN_VERSION,
         ws->root.c_str(), ws->ledger_path.c_str(), ledger_detail.c_str(), SandboxPolicyName(policy));
  for (const Layer& l : layers) {
    printf("  %-18s %-8s  %s\n", l.name.c_str(), l.active ? "active" : "inactive", l.detail.c_str());
  }
  printf("tools\n");
  for (auto [name, path, flag] : {std::tuple{"bwrap", bwrap, "--version"}, std::tuple{"rg", rg, "--version"},
                                  std::tuple{"clangd", clangd, "--version"}}) {
    std::string version = ToolVersion(path, flag);
    printf("  %-8s %s%s\n", name, path.empty() ? "not found" : path.c_str(),
           version.empty() ? "" : (" (" + version + ")").c_str());
  }
  printf("language servers (validation %s)\n", config->validation.enabled ? "on" : "off");
  for (const Validator& v : validators) {
    printf("  %-14s %s  (%s)\n", v.name.c_str(),
           v.program.empty() ? "not found: those files use their check command, if any" : v.program.c_str(),
           v.extensions.c_str());
  }
  if (daemon) {
    if (daemon->exit_code == 0) std::cout << daemon->output;
    else std::cout << "daemon     not answering: " << daemon->output;
  }
  if (failed) std::cerr << "odin doctor: sandbox required but unavailable: " << why_not << "\n";
  return failed ? kError : 0;
}

}  // namespace odin
