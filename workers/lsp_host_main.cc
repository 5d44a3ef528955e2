// odin-lsp-host: the lsp host worker. Started by the coordinator through
// odin-sandbox (workspace read-only); keeps language servers alive and runs
// lsp_check requests (proto/odin/v1/worker.proto).

#include "workers/lsp_host.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(
      argc, argv, "odin-lsp-host", "runs language servers for an Odin coordinator",
      [](const odin::WorkerOptions& o) { return odin::RunLspHost({.worker = o}, odin::RealClock::Get()); });
}
