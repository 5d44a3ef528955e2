#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "cli/cli_agent_internal.h"

namespace odin {
namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig) { (void)!write(g_signal_pipe[1], &sig, sizeof sig); }

}  // namespace

Status InstallSignalPipe() {
  // Both ends stay open for the rest of the process: the handler may run any time.
  if (g_signal_pipe[0] >= 0) return Status::OK();
  ASSIGN_OR_RETURN(Pipe p, MakePipe(O_CLOEXEC | O_NONBLOCK));
  g_signal_pipe[0] = p.read_end.release();
  g_signal_pipe[1] = p.write_end.release();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  return Status::OK();
}

int SignalPipeFd() { return g_signal_pipe[0]; }

std::vector<int> DrainSignals() {
  std::vector<int> sigs;
  int sig;
  while (read(g_signal_pipe[0], &sig, sizeof sig) == static_cast<ssize_t>(sizeof sig)) sigs.push_back(sig);
  return sigs;
}

}  // namespace odin
