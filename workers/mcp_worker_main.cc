// odin-mcp-worker: the MCP worker. Started by the coordinator through
// odin-sandbox, one per MCP server (ODIN_MCP_SERVER names it); runs the
// server and calls of its tools (proto/odin/v1/worker.proto).

#include "workers/mcp_worker.h"
#include "workers/worker_main.h"

int main(int argc, char** argv) {
  return odin::RunWorkerMain(
      argc, argv, "odin-mcp-worker", "runs an MCP server for an Odin coordinator",
      [](const odin::WorkerOptions& o) { return odin::RunMcpWorker(o, odin::RealClock::Get()); });
}
