#pragma once
// What every worker binary does before its loop: standard fds, logging,
// SIGPIPE ignored, not dumpable (a command it runs, same uid, must not read
// its memory through /proc/PID/mem), the command line the coordinator gives
// every worker, and the credentials it hands over on an inherited fd (one
// line: "<worker id> <secret>"), read and closed before anything runs. The
// id stays out of argv, where commands could read it.

#include <functional>

#include "workers/worker_loop.h"

namespace odin {

// Parses argv (name and about for --help) into the options every worker
// starts from, and calls run with them. Returns run's exit code, or CLI11's
// for a bad command line.
int RunWorkerMain(int argc, char** argv, const char* name, const char* about,
                  const std::function<int(const WorkerOptions&)>& run);

}  // namespace odin
