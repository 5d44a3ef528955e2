// odin-subagent: the subagent worker. Started by the coordinator through
// odin-sandbox (workspace read-only, no network); runs AgentTool tasks as
// planner loops whose calls all go back to the coordinator.

#include "workers/subagent_worker.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(
      argc, argv, "odin-subagent", "runs subagents for an Odin coordinator",
      [](const odin::WorkerOptions& o) { return odin::RunSubagentWorker(o, odin::RealClock::Get()); });
}
