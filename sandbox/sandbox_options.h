#pragma once
// Options of the odin-sandbox launcher: a plain struct, one field per flag.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

enum class SandboxPolicy {
  kAuto,      // use bubblewrap; if it is unusable, warn and run under the Landlock
              // fallback, except as root (then fail: see kFallback)
  kRequire,   // use bubblewrap or fail (exit kSandboxSetupFailedExit)
  kFallback,  // as kAuto, and the fallback also as root: the user chose it knowing
              // that without namespaces a root program reaches the host's sockets,
              // other processes' /proc and the daemon
  kOff,       // no namespaces at all
};

// Parses "auto", "require", "fallback", "off".
StatusOr<SandboxPolicy> ParseSandboxPolicy(const std::string& text);
const char* SandboxPolicyName(SandboxPolicy policy);

// sandbox.limits: what one worker's sandbox and each of its commands may
// use (0: no limit).
struct SandboxLimits {
  uint64_t processes = 1024;      // processes and threads in a worker's sandbox (pids cgroup)
  uint64_t memory_mb = 8192;      // memory of a worker's sandbox (memory cgroup)
  uint64_t cpu_seconds = 0;       // per command (RLIMIT_CPU)
  uint64_t file_size_mb = 8192;   // per command (RLIMIT_FSIZE)
  uint64_t open_files = 4096;     // per command (RLIMIT_NOFILE)
  uint64_t address_space_mb = 0;  // per command (RLIMIT_AS)
};

struct SandboxOptions {
  std::string workspace;                    // --workspace: the directory the program works in
  bool workspace_readonly = false;          // --workspace-readonly: mount it read-only
  std::vector<std::string> readonly_paths;  // --readonly: paths kept read-only (may not exist)
  // --socket: the worker's ZeroMQ socket, bound alone into a read-only
  // directory of its own (commands can neither replace it nor add one).
  std::string socket_path;
  std::vector<std::string> writable_paths;      // --writable: further writable paths (e.g. a socket dir)
  SandboxPolicy policy = SandboxPolicy::kAuto;  // --policy
  std::string bwrap;                            // --bwrap: path of bwrap; empty searches PATH
  bool seccomp = true;                          // --no-seccomp turns the seccomp layer off
  bool network = false;                         // --network: sockets of any family (else AF_UNIX only)
  bool share_net = false;                       // --share-net: the host's network (implies --network)
  std::vector<std::string> hidden_paths;        // --hide: directories shown empty (HOME, /root, secrets)
  std::vector<std::string> masked_paths;        // --mask: files shown empty, directories empty and read-only,
                                                // after every bind
  // --user UID:GID: when odin-sandbox runs as root, the uid and gid the
  // program runs as (bubblewrap is started as that user, in a user namespace
  // of its own); -1: the caller's own.
  int64_t run_uid = -1;
  int64_t run_gid = -1;
  std::vector<int> pass_fds;      // --pass-fd: inherited fds the program keeps (a worker's secret)
  uint64_t pids_max = 0;          // --pids-max: processes and threads inside (a cgroup); 0: none
  uint64_t memory_max_bytes = 0;  // --memory-max: memory inside (a cgroup); 0: none
  std::string cgroup_parent;      // --cgroup-parent: cgroup v2 group to make the sandbox's below
  // --overlay-root DIR: a writable workspace's worker gets the workspace's
  // plain bind and DIR (on the workspace's file system) below
  // kOverlayMountDir, mount, unshare and setns through seccomp, and ODIN_OVERLAY
  // (sandbox/workspace_overlay.h): each command it runs sees the workspace
  // through an overlay whose upper directory is in DIR. Only with bubblewrap,
  // and not with --user (that user may not reach DIR).
  std::string overlay_root;
  // --join-net FD: an inherited descriptor of the network namespace edit
  // mode's commands share (sandbox/shared_network.h), joined before
  // bubblewrap starts, which then makes none of its own; -1: none.
  int join_net_fd = -1;
  // Set by odin-sandbox once it joined that namespace: bubblewrap then makes
  // no network namespace of its own.
  bool net_joined = false;
  std::vector<std::string> program;  // after --: the program and its arguments
};

// What only root may read, hidden from commands that run as the host's root
// (the default of sandbox.root_hidden): the password and sudo files, ssh
// host keys, every home, Docker's and containerd's state, /run. Globs are
// expanded when the sandbox is built.
const std::vector<std::string>& DefaultRootHiddenPaths();

// Parses argv. On error returns InvalidArgument naming the problem.
StatusOr<SandboxOptions> ParseSandboxOptions(int argc, char** argv);

}  // namespace odin
