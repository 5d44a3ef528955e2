// odin-worker: a tool worker process. Started by the coordinator through
// odin-sandbox; talks the worker protocol (proto/odin/v1/worker.proto).

#include "workers/tool_worker.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(
      argc, argv, "odin-worker", "runs tool calls for an Odin coordinator",
      [](const odin::WorkerOptions& o) { return odin::RunToolWorker(o, odin::RealClock::Get()); });
}
