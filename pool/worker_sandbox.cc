#include "pool/worker_sandbox.h"

#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file_util.h"
#include "base/sha256.h"
#include "workspace/protected_paths.h"
#include "pool/worker_pool.h"
#include "workspace/host_files.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

void AddUnique(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

}  // namespace

std::string HookTranscriptDir(const Workspace& ws) {
  std::string state = OdinStateDir();
  if (state.empty()) return "";
  return JoinPath(JoinPath(state, "transcripts"), Sha256Hex(ws.root).substr(0, 32));
}

WorkerSandbox WorkerSandbox::Make(const Workspace& ws, const WorkerSandboxOptions& config, SandboxPolicy policy,
                                  const std::string& bin_dir) {
  WorkerSandbox s;
  s.ws_ = ws;
  s.policy_ = policy;
  s.bin_ = bin_dir;
  s.bwrap_ = config.bwrap_path;
  s.limits_ = config.limits;

  // Who commands run as. Root running Odin on someone else's workspace hands
  // it to its owner: their files, their reach, nothing of root's.
  struct stat st;
  bool root = geteuid() == 0;
  if (root && stat(ws.root.c_str(), &st) == 0 && st.st_uid != 0) {
    s.run_uid_ = st.st_uid;
    passwd* pw = getpwuid(st.st_uid);
    s.run_gid_ = pw != nullptr ? pw->pw_gid : st.st_gid;
  }
  s.runs_as_root_ = root && s.run_uid_ < 0;

  // Home directories and configured secrets show empty inside the sandbox.
  s.hidden_ = config.hide;
  if (config.hide_home) {
    const char* home = getenv("HOME");
    if (home != nullptr && *home != '\0') AddUnique(&s.hidden_, home);
    AddUnique(&s.hidden_, "/root");
  }
  // What only root may read, when commands run as root: directories are
  // hidden (before the workspace is bound, which may lie below one), files
  // masked.
  if (s.runs_as_root_) {
    for (const std::string& pattern : config.root_hidden) {
      glob_t g{};
      if (glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          std::string p = g.gl_pathv[i];
          AddUnique(&s.root_hidden_, p);
          if (IsDirectory(p))
            AddUnique(&s.hidden_, p);
          else
            AddUnique(&s.masked_, p);
        }
      }
      globfree(&g);
    }
  }
  // Toolchains installed in a hidden directory (pyenv, cargo, ~/.local/bin:
  // the top directory of each PATH entry below a hidden one) stay visible,
  // read-only, so programs run; the rest (~/.ssh, ~/.aws, ...) does not.
  std::string path_var = getenv("PATH") ? getenv("PATH") : "";
  for (size_t start = 0; start <= path_var.size();) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    // Normal: "$HOME/." or "$HOME/bin/.." must not name the home itself.
    std::string entry = std::filesystem::path(path_var.substr(start, end - start)).lexically_normal().string();
    while (entry.size() > 1 && entry.back() == '/') entry.pop_back();
    start = end + 1;
    for (const std::string& h : s.hidden_) {
      if (PathIsBelow(entry, h) && entry.size() > h.size() + 1) {
        AddUnique(&s.toolchains_, entry.substr(0, entry.find('/', h.size() + 1)));
      }
    }
  }
  // rustup's proxies (cargo, rustc in ~/.cargo/bin) run a toolchain from
  // RUSTUP_HOME (~/.rustup), which no PATH entry names: visible too,
  // read-only, or every Rust command fails.
  const char* home_dir = getenv("HOME");
  const char* rustup_env = getenv("RUSTUP_HOME");
  std::string rustup_home = rustup_env != nullptr && *rustup_env != '\0' ? rustup_env
                            : home_dir != nullptr && *home_dir != '\0'   ? JoinPath(home_dir, ".rustup")
                                                                         : "";
  bool has_rustup = std::any_of(s.toolchains_.begin(), s.toolchains_.end(),
                                [](const std::string& top) { return UserPathExists(JoinPath(top, "bin/rustup")); });
  StatusOr<std::string> rustup_real =
      rustup_home.empty() ? StatusOr<std::string>(Status::NotFound("RUSTUP_HOME")) : RealPath(rustup_home);
  if (has_rustup && rustup_real.ok()) {
    rustup_home = *rustup_real;  // "~/.rustup/.." must not name the home itself
    for (const std::string& h : s.hidden_) {
      if (PathIsBelow(rustup_home, h)) AddUnique(&s.toolchains_, rustup_home);
    }
  }
  // An isolated session sees its view, never the workspace it was copied
  // from (whose secrets its masks and the user's hidden paths name there,
  // not in the view): hidden, but for its git objects, which the view reads
  // through git's alternates (workspace/isolated_views.h), read-only; only
  // where .git and its objects are directories of their own (a link there
  // could name anything). What the user hides or masks in the workspace is
  // hidden or masked in the view too.
  if (!ws.view_of.empty()) {
    for (std::vector<std::string>* paths : {&s.hidden_, &s.masked_}) {
      std::vector<std::string> mapped;
      for (const std::string& p : *paths) {
        if (p == ws.view_of || PathIsBelow(p, ws.view_of)) mapped.push_back(ws.root + p.substr(ws.view_of.size()));
      }
      for (const std::string& p : mapped) AddUnique(paths, p);
    }
    AddUnique(&s.hidden_, ws.view_of);
    StatusOr<WorkspaceFiles> real = WorkspaceFiles::Open(ws.view_of);
    if (real.ok() && real->Look(".git").is_dir() && real->Look(".git/objects").is_dir()) {
      AddUnique(&s.toolchains_, JoinPath(ws.view_of, ".git/objects"));
    }
  }
  // Credentials that live in toolchain directories stay hidden.
  for (const std::string& top : s.toolchains_) {
    for (const char* secret :
         {"credentials", "credentials.toml", "share/keyrings", ".credentials.json", "auth.json", "hosts.yml"}) {
      std::string p = JoinPath(top, secret);
      if (UserPathExists(p)) AddUnique(&s.masked_, p);
    }
  }
  // No sandbox sees Odin's state: the ledger, the daemon's files, tokens;
  // nor the user's credentials (MCP servers' OAuth tokens), wherever the
  // state directory lies (~/.local is visible where ~/.local/bin is on the
  // PATH). The directory is masked, not the file, which is replaced by a
  // rename at each change: made now, so there is something to mask.
  AddUnique(&s.masked_, ws.state_dir);
  if (std::string auth = OdinAuthDir(); !auth.empty() && MakeUserDirs(auth, 0700).ok()) {
    AddUnique(&s.masked_, auth);
  }
  s.hook_binds_ = config.hook_scripts;
  s.hooks_network_ = config.hooks_network;
  s.mcp_network_ = config.mcp_network;
  if (config.hooks) {
    // The transcripts hooks read: made now, so there is something to bind.
    std::string transcripts = HookTranscriptDir(ws);
    if (!transcripts.empty() && MakeUserDirs(transcripts, 0700).ok()) s.hook_binds_.push_back(transcripts);
  }
  StatusOr<std::string> lsp_dir = RealPath(JoinPath(bin_dir, "../lsp"));
  if (lsp_dir.ok()) s.bundled_lsp_ = *lsp_dir;
  return s;
}

std::string WorkerSandbox::HostMaskIdentities() const {
  std::string out;
  for (const std::vector<std::string>* paths : {&masked_, &hidden_}) {
    for (const std::string& p : *paths) {
      struct stat st;
      if (lstat(p.c_str(), &st) == 0) {
        out += p + " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + "\n";
      } else {
        out += p + " -\n";
      }
    }
  }
  return out;
}

int WorkerSandbox::NetnsFdFor(WorkerPolicy policy) const {
  if (commands_network_ || commands_netns_ < 0) return -1;
  return policy == WorkerPolicy::kWritable || policy == WorkerPolicy::kBackground ? commands_netns_ : -1;
}

std::string ProxyClientOf(const std::string& worker_id) { return "c" + Sha256Hex(worker_id).substr(0, 16); }

std::vector<std::string> WorkerSandbox::ProxyEnvFor(WorkerPolicy policy, const std::string& worker_id) const {
  if (commands_proxy_port_ <= 0 || NetnsFdFor(policy) < 0) return {};
  // A password too: some clients (Python's urllib) send credentials only
  // with both.
  std::string url = "http://" + ProxyClientOf(worker_id) + ":odin@127.0.0.1:" + std::to_string(commands_proxy_port_);
  std::vector<std::string> env;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}) {
    env.push_back(std::string(name) + "=" + url);
  }
  env.push_back("NO_PROXY=localhost,127.0.0.1,::1");
  env.push_back("no_proxy=localhost,127.0.0.1,::1");
  return env;
}

std::vector<std::string> WorkerSandbox::LauncherArgv(WorkerPolicy policy, const std::string& socket_path, int secret_fd,
                                                     const std::string& lane) const {
  // The user's own hooks and MCP servers that say "sandbox": false run on
  // the host.
  SandboxPolicy sandbox_policy =
      policy == WorkerPolicy::kHookHost || policy == WorkerPolicy::kMcpHost ? SandboxPolicy::kOff : policy_;
  std::vector<std::string> a = {JoinPath(bin_, "odin-sandbox"), "--workspace", ws_.root, "--policy",
                                SandboxPolicyName(sandbox_policy)};
  auto add = [&a](std::initializer_list<std::string> items) { a.insert(a.end(), items); };
  if (run_uid_ >= 0) add({"--user", std::to_string(run_uid_) + ":" + std::to_string(run_gid_)});
  // Worker pools are keyed by policy: ask and plan get a read-only
  // workspace, so the operating system enforces what the mode gate says;
  // the lsp host and subagents only ever read it.
  if (!WritesWorkspace(policy)) {
    a.push_back("--workspace-readonly");
  } else {
    // Where the workspace is writable, .git becomes a mount point (it cannot
    // be renamed, removed or replaced by a file) and the protected paths that
    // exist are read-only on top of it.
    for (const ProtectedMount& m : ProtectedMounts(ws_.root)) add({m.writable ? "--writable" : "--readonly", m.path});
  }
  if (!socket_path.empty()) add({"--socket", socket_path});
  if (secret_fd >= 0) add({"--pass-fd", std::to_string(secret_fd)});
  for (const std::string& p : hidden_) add({"--hide", p});
  for (const std::string& p : toolchains_) add({"--readonly", p});
  // A hook's own script stays visible (read-only) where it lives under a
  // hidden directory (~/.claude/hooks).
  if (policy == WorkerPolicy::kHookWritable || policy == WorkerPolicy::kHookReadonly) {
    for (const std::string& p : hook_binds_) add({"--readonly", p});
    if (hooks_network_) a.push_back("--share-net");
  }
  for (const std::string& p : masked_) add({"--mask", p});
  if (limits_.processes > 0) add({"--pids-max", std::to_string(limits_.processes)});
  if (limits_.memory_mb > 0) add({"--memory-max", std::to_string(limits_.memory_mb << 20)});
  if (!cgroup_parent_.empty() && (limits_.processes > 0 || limits_.memory_mb > 0)) {
    add({"--cgroup-parent", cgroup_parent_});
  }
  // The language servers the setup installs beside the binaries (a private
  // /tmp would hide them when the build lives under /tmp).
  // MCP servers may be installed there too (the setup puts the reference
  // servers there); each keeps the network only if its entry says so.
  if ((policy == WorkerPolicy::kLspHost || IsMcpPolicy(policy)) && !bundled_lsp_.empty()) {
    add({"--readonly", bundled_lsp_});
  }
  // Only edit mode's tool workers and background commands': ask and plan
  // run in read-only workers, which never have it.
  if ((policy == WorkerPolicy::kWritable || policy == WorkerPolicy::kBackground) && commands_network_) {
    a.push_back("--share-net");
  }
  // Else they share one network of their own: a server one starts is there
  // for the next (ask and plan's read-only workers each keep their own).
  if (int fd = NetnsFdFor(policy); fd >= 0) add({"--join-net", std::to_string(fd)});
  // What a command or a writable hook writes waits in its overlay for the
  // coordinator (sandbox/workspace_overlay.h); only where bubblewrap
  // sandboxes it (odin-sandbox ignores it otherwise).
  if ((policy == WorkerPolicy::kWritable || policy == WorkerPolicy::kHookWritable) && !overlay_root_.empty()) {
    add({"--overlay-root", overlay_root_});
  }
  // The network worker fetches for WebFetch: what it may reach, the worker
  // itself judges at connect time (web/address_policy.h).
  if (policy == WorkerPolicy::kWeb) a.push_back("--share-net");
  if (IsMcpPolicy(policy) && std::find(mcp_network_.begin(), mcp_network_.end(), lane) != mcp_network_.end()) {
    a.push_back("--share-net");
  }
  if (!bwrap_.empty()) add({"--bwrap", bwrap_});
  a.push_back("--");
  return a;
}

}  // namespace odin
