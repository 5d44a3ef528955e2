#pragma once
// What the agent's two front ends in cli/ share: `odin -p` (cli_agent.cc)
// and the interactive session (cli_interactive.cc).

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/cli.h"
#include "session/agent_session.h"
#include "session/attempt_run.h"

namespace odin {

// The session's settings from the command line, for either front end.
AgentSessionFlags SessionFlags(const GlobalFlags& g, const AgentFlags& f, const std::string& kind,
                               const std::string& worker_mode, const std::string& approval);

// Routes SIGINT, SIGTERM and SIGHUP into a pipe the loop polls
// (SignalPipeFd); DrainSignals returns those that arrived since the last
// call.
Status InstallSignalPipe();
int SignalPipeFd();

// Why ws may not be worked in as found (/ or the home directory, not named
// with -C): one line without the program's prefix; "" when it may.
std::string TooBroadRefusal(const GlobalFlags& g, const Workspace& ws);
std::vector<int> DrainSignals();

// odin -p --attempts N (cli_attempts.cc), n > 1: its exit code.
int RunAttempts(const GlobalFlags& g, const AgentFlags& f, const Workspace& ws,
                std::shared_ptr<const LoadedConfig> loaded, int n);
// One line on what Odin landed of the attempts, or why nothing did.
std::string LandingSummary(const std::vector<AttemptOutcome>& outcomes, const AttemptLanding& landing);

}  // namespace odin
