// odin-lsp-host: the lsp host worker. Started by the coordinator through
// odin-sandbox (workspace read-only); keeps language servers alive and runs
// lsp_check requests (proto/odin/v1/worker.proto).

#include "workers/lsp_host.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(argc, argv, "odin-lsp-host", "runs language servers for an Odin coordinator",
                             [](const odin::WorkerFlags& f) {
                               odin::LspHostOptions o;
                               o.endpoint = f.endpoint;
                               o.worker_id = f.worker_id;
                               o.secret = f.secret;
                               o.workspace = f.workspace;
                               o.sandbox_description = f.sandbox_description;
                               o.heartbeat_interval = f.heartbeat_interval;
                               o.liveness = f.liveness;
                               return odin::RunLspHost(o, odin::RealClock::Get());
                             });
}
