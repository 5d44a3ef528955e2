#pragma once
// odin-web-worker: the network worker. It runs WebFetch: one fetch at a
// time with libcurl (web/web_fetch.h), every connection judged at connect
// time by the address rules, HTML converted to Markdown. Its sandbox keeps
// the network and nothing else: the workspace read-only, no .odin/, a
// private /tmp. It holds no key; the coordinator's domain rules decided
// before the request reached it.

#include "base/clock.h"
#include "workers/worker_loop.h"

namespace odin {

int RunWebWorker(const WorkerOptions& options, Clock* clock);

}  // namespace odin
