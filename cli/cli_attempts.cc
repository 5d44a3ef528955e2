// odin -p --attempts N: N agents try the message at once, each an isolated
// session in a view of its own (session/attempt_run.h runs and judges
// them); Odin lands the best that passes and prints the verdicts. The
// others stay for odin diff and discard.

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/terminal_text.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "session/attempt_run.h"
#include "workspace/workspace.h"

namespace odin {

using nlohmann::json;

int RunAttempts(const GlobalFlags& g, const AgentFlags& f, const Workspace& ws,
                std::shared_ptr<const LoadedConfig> loaded, int n) {
  auto refuse = [](const std::string& why) {
    std::cerr << "odin: --attempts: " << why << "\n";
    return kUsageError;
  };
  if (f.mode != "edit") return refuse("attempts change files: they run in edit mode");
  if (!f.resume.empty() || f.continue_last) return refuse("each attempt starts a session; -r and -c take one up");
  if (f.output_format == "stream-json") return refuse("goes with --output-format text or json");
  if (!f.json_schema.empty() || !f.images.empty()) return refuse("does not go with --json-schema or --image yet");
  std::string approval = f.approval.empty() ? "deny" : f.approval;
  if (approval == "prompt") return refuse("needs --approval deny or allow (nobody is asked during attempts)");
  if (Status st = InstallSignalPipe(); !st.ok()) {
    std::cerr << "odin: " << st.message() << "\n";
    return kError;
  }
  if (Status prepared = PrepareStateDir(ws); !prepared.ok()) {
    std::cerr << "odin: " << VisibleControls(prepared.message()) << "\n";
    return kError;
  }
  AttemptsSpec spec;
  spec.base = SessionFlags(g, f, "agent", f.mode, approval);
  spec.base.config = loaded;  // read once, its notices said once
  spec.approval = approval;
  spec.n = n;
  spec.message = f.prompt;
  spec.ws = ws;
  spec.say = [](const std::string& line) { std::cerr << "odin: " + VisibleControls(line) + "\n"; };
  std::unique_ptr<AttemptRun> run = AttemptRun::Start(spec);
  bool interrupted = false;
  while (!run->Wait(milliseconds(100))) {
    for (int sig : DrainSignals()) {
      if (interrupted) return 128 + sig;
      interrupted = true;
      run->Cancel();
    }
  }
  if (!run->error().ok()) {
    std::cerr << "odin: " << VisibleControls(run->error().message()) << "\n";
    return kError;
  }
  // The winner is judged again against the workspace as it is now (the
  // user may have changed it while the attempts ran); one that fails there
  // loses, and the next is judged.
  run->Land(std::nullopt);
  while (!run->Wait(seconds(1))) {
  }
  const std::vector<AttemptOutcome>& outcomes = run->outcomes();
  const AttemptLanding& landing = run->landing();
  int winner = landing.winner;
  int code = winner < 0 ? kNotConverged : landing.error.empty() ? 0 : kError;
  if (f.output_format == "json") {
    json out = ParseJson(run->RecordJson());
    out["is_error"] = code != 0;
    out["exit_code"] = code;
    if (!landing.error.empty()) out["error"] = landing.error;
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return code;
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const AttemptOutcome& o = outcomes[i];
    std::cout << "attempt " << o.number << "  " << o.session_id << "  " << VisibleControls(o.why)
              << (static_cast<int>(i) == winner && !landing.execution_id.empty() ? "  <- landed" : "") << "\n";
  }
  std::cout << LandingSummary(outcomes, landing) << "\n";
  if (n > 1) std::cout << "the others stay: odin diff SESSION shows one, odin discard SESSION drops it\n";
  return code;
}

std::string LandingSummary(const std::vector<AttemptOutcome>& outcomes, const AttemptLanding& landing) {
  int winner = landing.winner;
  if (winner < 0) return "no attempt passes: nothing landed";
  const AttemptOutcome& w = outcomes[static_cast<size_t>(winner)];
  if (landing.nothing_to_land) {
    return "attempt " + std::to_string(w.number) + " passes and changed nothing that lands: nothing to apply";
  }
  if (!landing.error.empty())
    return "attempt " + std::to_string(w.number) + " did not land: " + VisibleControls(landing.error);
  int passing = static_cast<int>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const AttemptOutcome& o) { return o.passes; }));
  return "landed attempt " + std::to_string(w.number) + " (" + landing.execution_id + "): " +
         (passing == 1 ? "the only one that passes"
                       : "the smallest change of the " + std::to_string(passing) + " that pass") +
         "; odin undo " + landing.execution_id + " puts it back";
}

}  // namespace odin
