#pragma once
// LspHost: what the lsp host worker does in the shared worker loop
// (workers/worker_loop.h): it keeps language servers alive for one workspace
// and runs lsp_check and lsp_references requests on them.
//
// A request (ToolRequest.validation) names a file, its new content, the
// server that serves it and a fallback check command. The host starts the
// server on first use (initialize within start_timeout) and keeps it; it sends
// the content as didOpen or didChange with a new version and accepts only
// diagnostics published for that version. Servers that publish without a
// version get a settle: the last publish counts once settle_ms passed without
// another. With want_baseline, the content from before the session changed the
// file is diagnosed first, the same way. A server that does not answer in
// time makes the result TIMED_OUT, never a clean file; one that cannot start
// (or none at all) hands the file to the check command, run on a copy in a
// private temporary directory; without one the outcome is NO_VALIDATOR.
//
// lsp_references (ToolRequest.references) asks the same servers for the
// references to the symbol at a position (textDocument/references): the
// file is synced to the content given, and the answer's locations come back
// in ToolResult.references; a server that cannot start, does not find
// references or does not answer in time gives answered=false and why.
//
// One request at a time (the pool sends no second one while the first runs).
// However the loop ends, the servers and checks it started are killed.

#include "base/clock.h"
#include "workers/worker_loop.h"

namespace odin {

struct LspHostOptions {
  WorkerOptions worker;
  int max_open_documents = 32;  // per server; the least recently used is closed beyond it
};

// Runs the host until it should exit. Returns the process exit code.
int RunLspHost(const LspHostOptions& options, Clock* clock);

}  // namespace odin
