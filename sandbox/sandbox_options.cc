#include "sandbox/sandbox_options.h"

#include <CLI/CLI.hpp>

#include "base/file_util.h"

namespace odin {

StatusOr<SandboxPolicy> ParseSandboxPolicy(const std::string& text) {
  if (text == "auto") return SandboxPolicy::kAuto;
  if (text == "require") return SandboxPolicy::kRequire;
  if (text == "fallback") return SandboxPolicy::kFallback;
  if (text == "off") return SandboxPolicy::kOff;
  return Status::InvalidArgument("sandbox policy '" + text + "'", "expected auto, require, fallback or off");
}

const char* SandboxPolicyName(SandboxPolicy policy) {
  switch (policy) {
    case SandboxPolicy::kAuto: return "auto";
    case SandboxPolicy::kRequire: return "require";
    case SandboxPolicy::kFallback: return "fallback";
    case SandboxPolicy::kOff: return "off";
  }
  return "?";
}

const std::vector<std::string>& DefaultRootHiddenPaths() {
  static const std::vector<std::string> kPaths = {
      "/etc/shadow",
      "/etc/shadow-",
      "/etc/gshadow",
      "/etc/gshadow-",
      "/etc/sudoers",
      "/etc/sudoers.d",
      "/etc/ssh/ssh_host_*_key",
      "/etc/security/opasswd",
      "/home",
      "/root",
      "/var/lib/docker",
      "/var/lib/containerd",
      "/run",
  };
  return kPaths;
}

StatusOr<SandboxOptions> ParseSandboxOptions(int argc, char** argv) {
  SandboxOptions o;
  std::string policy = "auto";
  CLI::App app{"odin-sandbox: runs a program inside Odin's sandbox", "odin-sandbox"};
  app.add_option("--workspace", o.workspace, "Workspace directory")->required();
  app.add_flag("--workspace-readonly", o.workspace_readonly, "Mount the workspace read-only");
  app.add_option("--readonly", o.readonly_paths, "Path kept read-only");
  app.add_option("--socket", o.socket_path, "The worker's socket: bound alone, in a read-only directory");
  app.add_option("--writable", o.writable_paths, "Further writable path");
  app.add_option("--policy", policy, "auto, require, fallback or off");
  app.add_option("--bwrap", o.bwrap, "Path of bwrap");
  bool no_seccomp = false;
  app.add_flag("--no-seccomp", no_seccomp, "Do not install the seccomp filter");
  app.add_flag("--network", o.network, "Allow sockets of every family (the network namespace still applies)");
  app.add_flag("--share-net", o.share_net, "Keep the host's network (hooks with hooks.network); implies --network");
  app.add_option("--hide", o.hidden_paths, "Directory to show empty (an empty tmpfs over it)");
  app.add_option("--mask", o.masked_paths, "File or directory to show empty, even below a bound path");
  app.add_option("--pids-max", o.pids_max, "Processes and threads inside, at most (a cgroup)");
  app.add_option("--memory-max", o.memory_max_bytes, "Bytes of memory inside, at most (a cgroup)");
  app.add_option("--overlay-root", o.overlay_root,
                 "Directory on the workspace's file system for the commands' overlay upper directories");
  app.add_option("--cgroup-parent", o.cgroup_parent, "cgroup v2 group prepared for sandboxes (absolute path)");
  std::string user;
  app.add_option("--user", user, "UID:GID to run as (when started as root)");
  app.add_option("--pass-fd", o.pass_fds, "Inherited fd the program keeps");
  app.add_option("--join-net", o.join_net_fd,
                 "Inherited fd of a network namespace to run in (the commands' shared one)");
  app.add_option("program", o.program, "Program and arguments")->required();
  app.positionals_at_end();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument("odin-sandbox", e.what());
  }
  ASSIGN_OR_RETURN(o.policy, ParseSandboxPolicy(policy));
  if (!user.empty()) {
    char* end = nullptr;
    long long uid = strtoll(user.c_str(), &end, 10);
    long long gid = *end == ':' ? strtoll(end + 1, &end, 10) : -1;
    if (*end != '\0' || uid < 0 || gid < 0) {
      return Status::InvalidArgument("odin-sandbox", "--user " + user + ": expected UID:GID");
    }
    o.run_uid = uid;
    o.run_gid = gid;
  }
  o.seccomp = !no_seccomp;
  if (o.share_net) o.network = true;
  if (o.share_net && o.join_net_fd >= 0) {
    return Status::InvalidArgument("odin-sandbox", "--join-net and --share-net: give one network");
  }
  if (!o.overlay_root.empty() && o.workspace_readonly) {
    return Status::InvalidArgument("odin-sandbox", "--overlay-root: the workspace is read-only");
  }
  if (!o.overlay_root.empty() && (o.overlay_root[0] != '/' || !IsDirectory(o.overlay_root))) {
    return Status::InvalidArgument("odin-sandbox", "--overlay-root " + o.overlay_root + ": not an absolute directory");
  }
  return o;
}

}  // namespace odin
