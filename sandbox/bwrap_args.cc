#include "sandbox/bwrap_args.h"

#include <algorithm>

#include "base/file_util.h"
#include "sandbox/workspace_overlay.h"

namespace odin {

std::vector<std::string> BuildBwrapArgs(const SandboxOptions& o, const BwrapInvocation& inv) {
  std::vector<std::string> a = {inv.bwrap};
  auto add = [&a](std::initializer_list<std::string> items) { a.insert(a.end(), items); };

  // /run holds the host's service sockets (dbus, docker, systemd): a
  // connection to one would run code outside the sandbox.
  add({"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"});
  // The overlay's layers (sandbox/workspace_overlay.h), bound from the host's
  // paths before anything is mounted over the workspace, so the lower layer
  // carries no submounts.
  if (!o.overlay_root.empty()) {
    std::string dir = kOverlayMountDir;
    add({"--ro-bind", o.workspace, dir + "/lower", "--bind", o.overlay_root, dir + "/upper", "--setenv", kOverlayEnv,
         OverlayMountList(o.workspace, o.writable_paths, o.readonly_paths, o.masked_paths, o.hidden_paths)});
  }
  // The kernel's knobs stay read-only: bubblewrap covers /proc/irq and
  // /proc/bus itself but judges /proc/sys by its directory, which refuses
  // writes while the files in it take them. Docker's masked paths show empty.
  add({"--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"});
  for (const char* leak : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug"}) {
    if (PathExists(leak)) add({"--ro-bind", "/dev/null", leak});
  }
  // Home directories and secrets show empty. What must stay visible below
  // one (the workspace, the binaries) is bound again after.
  // (/tmp and /run have theirs already: a second empty tmpfs would only be
  // one more mount to set up.)
  // (Those inside the workspace come after its bind, which would cover
  // them.)
  for (const std::string& p : o.hidden_paths) {
    if (!p.empty() && p != "/" && p != "/tmp" && p != "/run" && !PathIsBelow(p, o.workspace) && IsDirectory(p)) {
      add({"--tmpfs", p});
    }
  }
  // A mask above the workspace (an isolated session's view lies in Odin's
  // state, which is masked) comes before its bind, which would be covered
  // otherwise, and is made read-only after it.
  std::vector<std::string> masks_above;
  for (const std::string& p : o.masked_paths) {
    if (PathIsBelow(o.workspace, p) && IsDirectory(p)) {
      add({"--perms", "0555", "--tmpfs", p});
      masks_above.push_back(p);
    }
  }
  // Binds come after /tmp, so a workspace under /tmp is mounted over the
  // private tmpfs rather than hidden by it.
  add({o.workspace_readonly ? "--ro-bind" : "--bind", o.workspace, o.workspace});
  for (const std::string& p : masks_above) add({"--remount-ro", p});
  for (const std::string& p : o.writable_paths) add({"--bind", p, p});
  for (const std::string& p : o.readonly_paths) add({"--ro-bind-try", p, p});
  // The worker's socket, alone in an empty directory made read-only: a
  // command can neither unlink, rename or replace it (and so stand in for
  // the coordinator to its worker) nor put a socket beside it (security
  // review 3, finding 9). Where that directory is not one of its own (the
  // workspace's, /tmp), the socket alone, read-only.
  if (!o.socket_path.empty()) {
    std::string dir = DirName(o.socket_path);
    bool own = dir.size() > 1 && dir != "/tmp" && dir != o.workspace && !PathIsBelow(o.workspace, dir) &&
               !PathIsBelow(dir, o.workspace);
    if (own) {
      add({"--perms", "0555", "--tmpfs", dir, "--ro-bind", o.socket_path, o.socket_path, "--remount-ro", dir});
    } else {
      add({"--ro-bind-try", o.socket_path, o.socket_path});
    }
  }
  // The program must stay reachable even where the policy hides its
  // directory (a build under /tmp, say): bind it read-only.
  if (!o.program.empty() && o.program[0].find('/') != std::string::npos) {
    add({"--ro-bind", DirName(o.program[0]), DirName(o.program[0])});
  }
  // Secrets inside what was bound (credentials in a toolchain's directory,
  // Odin's own state in the workspace): empty, and read-only so nothing can
  // be planted there for a later command either.
  std::vector<std::string> masked = o.masked_paths;
  for (const std::string& p : o.hidden_paths) {
    if (PathIsBelow(p, o.workspace)) masked.push_back(p);  // empty, and read-only like the masks
  }
  for (const std::string& p : masked) {
    if (std::find(masks_above.begin(), masks_above.end(), p) != masks_above.end()) continue;
    if (IsDirectory(p)) {
      add({"--perms", "0555", "--tmpfs", p, "--remount-ro", p});
    } else if (PathExists(p)) {
      add({"--ro-bind", "/dev/null", p});
    }
  }
  add({"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"});
  // No network unless asked (hooks.network): a namespace with only lo.
  // Or the commands' shared one, joined before bubblewrap started.
  if (!o.share_net && !o.net_joined) add({"--unshare-net"});
  // Run by root, bubblewrap keeps every capability unless told otherwise.
  if (inv.privileged) add({"--cap-drop", "ALL"});
  // A worker that would be root cannot map root into its commands' user
  // namespaces: it stands in as another uid (sandbox/workspace_overlay.h).
  if (!o.overlay_root.empty() && inv.privileged && o.run_uid <= 0) {
    std::string id = std::to_string(kOverlayRootStandIn);
    add({"--uid", id, "--gid", id});
  }
  add({"--die-with-parent", "--new-session", "--chdir", o.workspace, "--setenv", "ODIN_SANDBOX", "bwrap"});
  if (inv.status_fd >= 0) add({"--json-status-fd", std::to_string(inv.status_fd)});
  if (inv.block_fd >= 0) add({"--block-fd", std::to_string(inv.block_fd)});
  for (int fd : inv.seccomp_fds) add({"--add-seccomp-fd", std::to_string(fd)});
  add({"--"});
  a.insert(a.end(), o.program.begin(), o.program.end());
  return a;
}

}  // namespace odin
