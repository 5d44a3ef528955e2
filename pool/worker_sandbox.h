#pragma once
// WorkerSandbox: the one place that decides what a worker's sandbox looks
// like. It turns the workspace, the config and the sandbox policy into
// odin-sandbox's command line for each worker policy; the runtime starts
// workers with it and odin doctor probes the very same sandbox.
//
// What it decides, besides the policy's own layers (sandbox/bwrap_args.h):
//   - who commands run as: the caller, or, when Odin runs as root and the
//     workspace belongs to someone else, the workspace's owner;
//   - what is hidden: HOME and /root (unless sandbox.hide_home is false),
//     sandbox.hide, and, when commands run as the host's root, the files only
//     root may read (sandbox.root_hidden; /etc/shadow, sudoers, ssh host
//     keys, /home, /root, /var/lib/docker by default); toolchains installed
//     below a hidden directory stay visible read-only, their credentials not;
//   - Odin's state directory (.odin) shows empty and read-only: no sandbox
//     sees the ledger, sockets or tokens;
//   - the protected paths that exist are read-only where the workspace is
//     writable, and .git itself is a mount point there, so it cannot be
//     moved away or replaced;
//   - a worker sees its own socket only (read-only) and gets its secret on an
//     inherited fd.
//
// Thread-safety: immutable after Make.

#include <cstdint>
#include <string>
#include <vector>

#include "pool/worker_request.h"
#include "sandbox/sandbox_options.h"
#include "workspace/workspace.h"

namespace odin {

// Where a workspace's sessions keep the JSONL transcripts hooks read:
// $XDG_STATE_HOME/odin/transcripts/<hash of the workspace's path> ("" if
// there is no state directory). Hooks' sandboxes see it read-only.
std::string HookTranscriptDir(const Workspace& ws);

// What of the configuration a worker's sandbox depends on
// (config/sandbox_settings.h reads it from a Config).
struct WorkerSandboxOptions {
  std::string bwrap_path;                // sandbox.bwrap ("": search PATH)
  SandboxLimits limits;                  // sandbox.limits
  std::vector<std::string> hide;         // sandbox.hide
  bool hide_home = true;                 // sandbox.hide_home
  std::vector<std::string> root_hidden;  // sandbox.root_hidden (globs)
  // Hooks: whether any are configured, the user's hooks' scripts outside
  // the workspace (shown read-only to hooks), hooks.network.
  bool hooks = false;
  std::vector<std::string> hook_scripts;
  bool hooks_network = false;
  std::vector<std::string> mcp_network;  // MCP servers whose workers keep the host's network
  // Why the masks of what Read may not read are incomplete, for the user
  // ("" when they are not: config/sandbox_settings.h ReadDenyMasks).
  std::string mask_notice;
};

// The name a worker's commands give the commands' proxy: derived from its
// id, which stays out of every sandbox's environment.
std::string ProxyClientOf(const std::string& worker_id);

class WorkerSandbox {
 public:
  // bin_dir: where odin-sandbox and the workers live.
  static WorkerSandbox Make(const Workspace& ws, const WorkerSandboxOptions& options, SandboxPolicy policy,
                            const std::string& bin_dir);

  // odin-sandbox's arguments for a worker of this policy, up to and
  // including the "--" before the program. socket_path: the worker's own
  // ipc socket, bound read-only (empty: none); secret_fd: the inherited fd
  // that carries its secret (-1: none); lane: an MCP worker's server.
  std::vector<std::string> LauncherArgv(WorkerPolicy policy, const std::string& socket_path = "", int secret_fd = -1,
                                        const std::string& lane = "") const;

  SandboxPolicy policy() const { return policy_; }
  // The uid and gid commands run as, or -1 when they run as Odin itself.
  int64_t run_uid() const { return run_uid_; }
  int64_t run_gid() const { return run_gid_; }
  // Whether commands run as the host's root (then root_hidden applies).
  bool runs_as_root() const { return runs_as_root_; }
  const std::vector<std::string>& root_hidden() const { return root_hidden_; }
  const std::vector<std::string>& hidden() const { return hidden_; }
  // What the host's files the sandbox masks or hides are now: each path's
  // device and inode (or its absence), one line each. A mask is a bind on
  // the file as it was when the worker started: a file replaced by rename
  // (passwd rewriting /etc/shadow, an editor's atomic save) or made since
  // is not masked in that worker. The pool retires a worker once this
  // differs from what it said at the worker's spawn (WorkerPoolOptions::
  // host_masks; security review 3, finding 6).
  std::string HostMaskIdentities() const;
  // Toolchain directories below a hidden one, visible again (read-only).
  const std::vector<std::string>& toolchains() const { return toolchains_; }
  // cgroup v2: the group prepared for the sandboxes' groups ("" none).
  void set_cgroup_parent(std::string parent) { cgroup_parent_ = std::move(parent); }
  // --network or sandbox.network: the writable tool workers (edit mode's
  // commands) keep the host's network.
  void set_commands_network(bool on) { commands_network_ = on; }
  bool commands_network() const { return commands_network_; }
  // Without it: the network namespace edit mode's commands share
  // (sandbox/shared_network.h), a descriptor the caller keeps open. The
  // writable tool workers and background commands' workers join it
  // (--join-net); -1: each sandbox has its own.
  void set_commands_netns(int fd) { commands_netns_ = fd; }
  // The descriptor a worker of this policy inherits (-1: none).
  int NetnsFdFor(WorkerPolicy policy) const;
  // sandbox.network's rules: the commands' proxy listens on
  // 127.0.0.1:port in that namespace (0: none).
  void set_commands_proxy_port(int port) { commands_proxy_port_ = port; }
  // What a worker of this policy adds to its environment, and so its
  // commands': HTTP_PROXY and the rest naming the proxy, with
  // ProxyClientOf(the worker's id) as the user (the proxy's records name
  // whose command asked), and NO_PROXY for loopback; empty without the
  // proxy.
  std::vector<std::string> ProxyEnvFor(WorkerPolicy policy, const std::string& worker_id) const;
  // The writable tool and hook workers run each command over the
  // workspace overlay, its upper directory below root
  // (CommandOverlayRoot, made by the caller); "": no overlay.
  void set_overlay_root(std::string root) { overlay_root_ = std::move(root); }

 private:
  WorkerSandbox() = default;

  Workspace ws_;
  SandboxPolicy policy_ = SandboxPolicy::kAuto;
  std::string bin_;
  std::string bwrap_;
  int64_t run_uid_ = -1;
  int64_t run_gid_ = -1;
  bool runs_as_root_ = false;
  std::vector<std::string> hidden_;       // directories shown empty (--hide)
  std::vector<std::string> masked_;       // files and directories shown empty after the binds (--mask)
  std::vector<std::string> toolchains_;   // visible again, read-only
  std::vector<std::string> root_hidden_;  // what root alone may read, hidden when commands run as root
  std::string bundled_lsp_;               // <bin>/../lsp, for the lsp host
  // The user's hooks' scripts outside the workspace and the transcripts,
  // shown read-only to hooks.
  std::vector<std::string> hook_binds_;
  bool hooks_network_ = false;            // hooks.network: hooks keep the host's network
  std::vector<std::string> mcp_network_;  // MCP servers that keep the host's network
  bool commands_network_ = false;
  int commands_netns_ = -1;
  int commands_proxy_port_ = 0;
  std::string overlay_root_;
  std::string cgroup_parent_;
  SandboxLimits limits_;
};

}  // namespace odin
