#include "workers/worker_main.h"

#include <csignal>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "base/logging.h"
#include "base/subprocess.h"

namespace odin {

int RunWorkerMain(int argc, char** argv, const char* name, const char* about,
                  const std::function<int(const WorkerFlags&)>& run) {
  EnsureStandardFds();
  InitLogging(name);
  // A child that exits while we write to it (a language server's stdin) is
  // an error to handle, not our death. Children get the default back.
  signal(SIGPIPE, SIG_IGN);
  WorkerFlags flags;
  int heartbeat_ms = 500;
  CLI::App app{std::string(name) + ": " + about, name};
  app.add_option("--connect", flags.endpoint, "Coordinator endpoint")->required();
  app.add_option("--id", flags.worker_id, "Worker id")->required();
  app.add_option("--workspace", flags.workspace, "Workspace directory")->required();
  app.add_option("--heartbeat-ms", heartbeat_ms, "Heartbeat interval in milliseconds");
  app.add_option("--liveness", flags.liveness, "Silent intervals before giving up on the coordinator");
  CLI11_PARSE(app, argc, argv);
  flags.heartbeat_interval = milliseconds(heartbeat_ms);
  const char* sandbox = getenv("ODIN_SANDBOX");
  flags.sandbox_description = sandbox != nullptr ? sandbox : "none: not started by odin-sandbox";
  return run(flags);
}

}  // namespace odin
