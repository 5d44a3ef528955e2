#pragma once
// What every worker binary does before its loop: standard fds, logging,
// SIGPIPE ignored, not dumpable (a command it runs, same uid, must not read
// its memory through /proc/PID/mem), the command line the coordinator gives
// every worker, and the credentials it hands over on an inherited fd (one
// line: "<worker id> <secret>"), read and closed before anything runs. The
// id stays out of argv, where commands could read it.

#include <functional>
#include <string>

#include "base/clock.h"

namespace odin {

struct WorkerFlags {
  std::string endpoint;             // --connect: the coordinator's ROUTER
  std::string worker_id;            // from the credentials fd
  std::string secret;               // from the credentials fd
  std::string workspace;            // --workspace
  std::string sandbox_description;  // from ODIN_SANDBOX, for Hello
  Duration heartbeat_interval = milliseconds(500);  // --heartbeat-ms
  int liveness = 3;                 // --liveness
};

// Parses argv (name and about for --help) and calls run with the flags.
// Returns run's exit code, or CLI11's for a bad command line.
int RunWorkerMain(int argc, char** argv, const char* name, const char* about,
                  const std::function<int(const WorkerFlags&)>& run);

}  // namespace odin
