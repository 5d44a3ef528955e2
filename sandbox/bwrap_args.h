#pragma once
// The bubblewrap command line for a sandbox policy. Pure: no system calls, so
// the policy can be read and tested as data.
//
// The namespaces it asks for:
//   - a user namespace of its own, with every capability dropped: root inside
//     is no one outside (no capability over the host's kernel, mounts or
//     files of other users);
//   - the root file system read-only, with a fresh /dev, /proc and private
//     /tmp; /proc/sys and the other kernel knobs in /proc read-only (a
//     sysctl checks only the writer's uid, so host root could otherwise
//     write core_pattern and have the kernel run a program as root);
//   - the workspace writable (or read-only with --workspace-readonly);
//   - --readonly paths read-only on top (e.g. <workspace>/.odin), if they exist;
//   - the directories of odin-sandbox and of the program read-only, so they
//     run even from a directory the policy hides (such as /tmp);
//   - new pid, ipc, uts, cgroup and network namespaces: no network at all;
//   - a new session (no terminal to inject keystrokes into) and death with the
//     parent.
// bubblewrap itself does the last steps: it reports its child's pid on a
// status fd (for the launcher's cgroup), waits on a block fd until the
// launcher lets it go, loads the seccomp filters the launcher exported, and
// execs the program (ODIN_SANDBOX=bwrap in its environment). The status fd
// ends with the program's exit code only if the program was started.

#include <string>
#include <vector>

#include "sandbox/sandbox_options.h"

namespace odin {

struct BwrapInvocation {
  std::string bwrap;             // path of bwrap
  int status_fd = -1;            // inherited fd bwrap writes its JSON status to (--json-status-fd)
  int block_fd = -1;             // inherited fd bwrap waits on before the program starts (--block-fd)
  std::vector<int> seccomp_fds;  // inherited fds of the filters, in order (--add-seccomp-fd)
  bool privileged = false;       // bwrap runs as root: capabilities must be dropped explicitly
};

std::vector<std::string> BuildBwrapArgs(const SandboxOptions& options, const BwrapInvocation& inv);

}  // namespace odin
