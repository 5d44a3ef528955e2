// odin-subagent: the subagent worker. Started by the coordinator through
// odin-sandbox (workspace read-only, no network); runs AgentTool tasks as
// planner loops whose calls all go back to the coordinator.

#include "workers/subagent_worker.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(argc, argv, "odin-subagent", "runs subagents for an Odin coordinator",
                             [](const odin::WorkerFlags& f) {
                               odin::SubagentWorkerOptions o;
                               o.endpoint = f.endpoint;
                               o.worker_id = f.worker_id;
                               o.secret = f.secret;
                               o.workspace = f.workspace;
                               o.sandbox_description = f.sandbox_description;
                               o.heartbeat_interval = f.heartbeat_interval;
                               o.liveness = f.liveness;
                               return odin::RunSubagentWorker(o, odin::RealClock::Get());
                             });
}
