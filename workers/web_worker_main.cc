// odin-web-worker: the network worker (WebFetch). Started by the coordinator
// through odin-sandbox with the network kept (workers/web_worker.h).

#include "workers/web_worker.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(
      argc, argv, "odin-web-worker", "fetches web pages for an Odin coordinator",
      [](const odin::WorkerOptions& o) { return odin::RunWebWorker(o, odin::RealClock::Get()); });
}
