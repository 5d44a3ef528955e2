// odin-worker: a tool worker process. Started by the coordinator through
// odin-sandbox; talks the worker protocol (proto/odin/v1/worker.proto).

#include <csignal>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "base/clock.h"
#include "base/logging.h"
#include "base/subprocess.h"
#include "workers/tool_worker.h"

int main(int argc, char** argv) {
  odin::EnsureStandardFds();
  odin::InitLogging("odin-worker");
  // A child that exits while we write to it (a language server's stdin) is
  // an error to handle, not our death. Children get the default back.
  signal(SIGPIPE, SIG_IGN);
  odin::ToolWorkerOptions o;
  int heartbeat_ms = 500;
  CLI::App app{"odin-worker: runs tool calls for an Odin coordinator", "odin-worker"};
  app.add_option("--connect", o.endpoint, "Coordinator endpoint")->required();
  app.add_option("--id", o.worker_id, "Worker id")->required();
  app.add_option("--workspace", o.workspace, "Workspace directory")->required();
  app.add_option("--heartbeat-ms", heartbeat_ms, "Heartbeat interval in milliseconds");
  app.add_option("--liveness", o.liveness, "Silent intervals before giving up on the coordinator");
  CLI11_PARSE(app, argc, argv);
  o.heartbeat_interval = odin::milliseconds(heartbeat_ms);
  const char* sandbox = getenv("ODIN_SANDBOX");
  o.sandbox_description = sandbox != nullptr ? sandbox : "none: not started by odin-sandbox";
  return odin::RunToolWorker(o, odin::RealClock::Get());
}
