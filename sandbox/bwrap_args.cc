#include "sandbox/bwrap_args.h"

namespace odin {

std::vector<std::string> BuildBwrapArgs(const SandboxOptions& o, const BwrapInvocation& inv) {
  std::vector<std::string> a = {inv.bwrap};
  auto add = [&a](std::initializer_list<std::string> items) { a.insert(a.end(), items); };

  add({"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
  // Binds come after /tmp, so a workspace under /tmp is mounted over the
  // private tmpfs rather than hidden by it.
  add({o.workspace_readonly ? "--ro-bind" : "--bind", o.workspace, o.workspace});
  for (const std::string& p : o.writable_paths) add({"--bind", p, p});
  for (const std::string& p : o.readonly_paths) add({"--ro-bind-try", p, p});
  add({"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try"});
  add({"--die-with-parent", "--new-session", "--chdir", o.workspace});

  add({"--", inv.self, "--inner", "--workspace", o.workspace, "--ready-fd",
       std::to_string(inv.ready_fd), "--stderr-fd", std::to_string(inv.stderr_fd),
       "--description", "bwrap", "--"});
  a.insert(a.end(), o.program.begin(), o.program.end());
  return a;
}

}  // namespace odin
