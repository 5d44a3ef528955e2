#include "workers/worker_main.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "base/logging.h"
#include "base/subprocess.h"

namespace odin {

namespace {

// Reads "<id> <secret>" from fd and closes it. False if it holds no such line.
bool ReadCredentials(int fd, WorkerOptions* options) {
  std::string text;
  char buf[256];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > 4096) break;
  }
  close(fd);
  size_t space = text.find(' ');
  size_t end = text.find('\n');
  if (space == std::string::npos || end == std::string::npos || end < space) return false;
  options->worker_id = text.substr(0, space);
  options->secret = text.substr(space + 1, end - space - 1);
  return !options->worker_id.empty() && !options->secret.empty();
}

}  // namespace

int RunWorkerMain(int argc, char** argv, const char* name, const char* about,
                  const std::function<int(const WorkerOptions&)>& run) {
  EnsureStandardFds();
  prctl(PR_SET_DUMPABLE, 0);
  InitLogging(name);
  // A child that exits while we write to it (a language server's stdin) is
  // an error to handle, not our death. Children get the default back.
  signal(SIGPIPE, SIG_IGN);
  WorkerOptions options;
  int heartbeat_ms = 500;
  int credentials_fd = -1;
  CLI::App app{std::string(name) + ": " + about, name};
  app.add_option("--connect", options.endpoint, "Coordinator endpoint")->required();
  app.add_option("--credentials-fd", credentials_fd, "Inherited fd holding '<worker id> <secret>'")->required();
  app.add_option("--workspace", options.workspace, "Workspace directory")->required();
  app.add_option("--heartbeat-ms", heartbeat_ms, "Heartbeat interval in milliseconds");
  app.add_option("--liveness", options.liveness, "Silent intervals before giving up on the coordinator");
  CLI11_PARSE(app, argc, argv);
  if (credentials_fd < 3 || !ReadCredentials(credentials_fd, &options)) {
    fprintf(stderr, "%s: no credentials on fd %d\n", name, credentials_fd);
    return 2;
  }
  options.heartbeat_interval = milliseconds(heartbeat_ms);
  const char* sandbox = getenv("ODIN_SANDBOX");
  options.sandbox_description = sandbox != nullptr ? sandbox : "none: not started by odin-sandbox";
  return run(options);
}

}  // namespace odin
