#pragma once
// HostAgent: `odin host`, the unsandboxed process on another machine that
// holds the TCP connection to the coordinator and the host's CURVE key, and
// runs sandboxed workers on its machine for the coordinator. The workers
// are the coordinator's own kind, spawned the same way (WorkerSpawnSpec,
// odin-sandbox, a private ipc:// socket each, the secret on an inherited
// fd); their envelopes are relayed unchanged. A sandboxed worker never
// holds the connection or the key.
//
// Per connection:
//   1. connect (CURVE; the coordinator's public key pins whom we talk to);
//   2. HostHello: the host, cores, the sandbox its own odin-sandbox gives
//      (probed once at start), the workspace's path and the token read
//      under its .odin/;
//   3. HostWelcome: serve until the coordinator is silent for `liveness`
//      heartbeat intervals; then every worker is killed (its commands with
//      it: the coordinator has ended their calls as crashed by then, so
//      nothing runs twice), and we reconnect with backoff and a fresh Hello;
//      HostRefused: exit 1 naming why (a refusal does not heal by retrying).
// No answer to a Hello (the coordinator is down, or turns our key away) is
// retried with backoff too. SIGTERM or SIGINT (stop_fd readable) kills the
// workers and returns 0.
//
// Thread-safety: none; it is the process's loop.

#include <string>

#include "base/clock.h"
#include "base/zmq_endpoint.h"

namespace odin {

struct HostAgentOptions {
  std::string connect;          // tcp://COORDINATOR:PORT
  CurveKeyPair key;             // this host's
  std::string coordinator_key;  // the coordinator's public key
  std::string dir;              // the workspace ("" : the current directory)
  std::string name;             // the host's name in the coordinator's records ("": hostname)
  int max_workers = 0;          // 0: the number of cores
  std::string sandbox;          // auto, require, fallback or off for the probe ("": the config's)
  // Hosts a launcher started (odin host --once): when the session with a
  // coordinator ends, however it ends, the agent exits, and it gives up if
  // no coordinator welcomes it within join_timeout. It belongs to the one
  // coordinator that asked for it, never to a later one.
  bool once = false;
  Duration join_timeout = seconds(600);
  Duration hello_timeout = seconds(10);
  Duration max_backoff = seconds(10);
  int stop_fd = -1;  // readable: stop
};

// Runs until stopped or refused. Returns the process's exit code.
int RunHostAgent(const HostAgentOptions& options);

}  // namespace odin
