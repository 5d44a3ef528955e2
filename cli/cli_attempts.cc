// odin -p --attempts N: N agents try the message at once, each an isolated
// session in a view of its own, on threads of this one process
// (session/hosted_session.h), each with its share of the budget; Odin
// judges them from the ledger (session/attempts.h) and lands the winner's
// change set (workspace/isolated_views.h). The others stay for odin diff
// and discard.

#include <algorithm>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "config/config_loader.h"
#include "ledger/ledger.h"
#include "pool/worker_spawn.h"
#include "session/attempts.h"
#include "session/hosted_session.h"
#include "session/view_recheck.h"
#include "workspace/isolated_views.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

using nlohmann::json;

// What attempt k of n is told before the message.
std::string AttemptNote(int k, int n, const std::string& hint) {
  std::string note = "This is attempt " + std::to_string(k) + " of " + std::to_string(n) +
                     " at this message: that many agents work on it at once, each in an isolated copy of the "
                     "workspace that no other sees. Odin lands the one whose checks pass with no new errors and the "
                     "smallest change; deleting, skipping or weakening tests disqualifies an attempt.";
  if (!hint.empty()) note += "\nFor this attempt: " + hint;
  return note;
}

json OutcomeJson(const AttemptOutcome& o) {
  return {{"attempt", o.number}, {"session_id", o.session_id}, {"status", o.status}, {"exit_code", o.exit_code},
          {"lines", o.lines},    {"files", o.files},           {"passes", o.passes}, {"why", o.why}};
}

}  // namespace

int RunAttempts(const GlobalFlags& g, const AgentFlags& f, const Workspace& ws,
                std::shared_ptr<const LoadedConfig> loaded, int n) {
  const Config& config = loaded->config;
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
  // Started side by side: each copies the workspace into its view, which
  // on a file system that cannot clone is most of an attempt's start.
  std::vector<StatusOr<std::unique_ptr<HostedSession>>> started;
  for (int k = 0; k < n; ++k) started.emplace_back(Status::Internal("attempt", "not started"));
  std::vector<std::thread> starters;
  for (int k = 1; k <= n; ++k) {
    AgentSessionFlags flags = SessionFlags(g, f, "agent", f.mode, approval);
    flags.config = loaded;  // read once, its notices said once
    flags.isolated = true;
    flags.budget_share = n;
    flags.runtime.workers = std::max(1, CpuCount() / n);
    // A core each here; the attempts beyond them, on workers.remote's hosts
    // where there are any (Slurm's, asked for).
    int local = config.attempts_local > 0 ? config.attempts_local : std::max(1, CpuCount());
    flags.runtime.hosts_first = config.remote.launcher != "off" && k > local;
    std::string hint;
    if (!config.attempt_variants.empty()) {
      const Config::AttemptVariant& v =
          config.attempt_variants[static_cast<size_t>(k - 1) % config.attempt_variants.size()];
      if (!v.model.empty()) flags.llm.model = v.model;
      flags.llm.temperature = v.temperature;
      hint = v.hint;
    }
    flags.notice = [k](const std::string& line) { std::cerr << "attempt " << k << ": " << line << "\n"; };
    starters.emplace_back([&started, k, n, flags, hint, approval] {
      StatusOr<std::unique_ptr<HostedSession>>& slot = started[static_cast<size_t>(k - 1)];
      slot = HostedSession::Start(flags, Mode::kEdit, approval);
      if (slot.ok()) (*slot)->AddNote(AttemptNote(k, n, hint));
    });
  }
  for (std::thread& t : starters) t.join();
  std::vector<std::unique_ptr<HostedSession>> sessions;
  std::vector<AttemptOutcome> outcomes(static_cast<size_t>(n));
  for (int k = 1; k <= n; ++k) {
    StatusOr<std::unique_ptr<HostedSession>>& slot = started[static_cast<size_t>(k - 1)];
    if (!slot.ok()) {
      std::cerr << "odin: attempt " << k << " did not start: " << VisibleControls(slot.status().message()) << "\n";
      return kError;  // the started ones end with their sessions
    }
    outcomes[static_cast<size_t>(k - 1)].number = k;
    outcomes[static_cast<size_t>(k - 1)].session_id = (*slot)->id();
    sessions.push_back(std::move(*slot));
  }
  for (auto& s : sessions) {
    StatusOr<std::pair<std::string, uint64_t>> sent = s->Send(f.prompt, "edit");
    if (!sent.ok()) {
      std::cerr << "odin: " << VisibleControls(sent.status().message()) << "\n";
      return kError;
    }
  }
  std::cerr << "odin: " << n << " attempts at work (isolated views; odin diff SESSION shows each)\n";
  std::vector<uint64_t> seen(sessions.size(), 0);
  size_t finished = 0;
  bool interrupted = false;
  while (finished < sessions.size()) {
    for (size_t i = 0; i < sessions.size(); ++i) {
      AttemptOutcome& o = outcomes[i];
      if (!o.status.empty()) continue;
      bool ended = false;
      for (const v1::SessionEvent& e : sessions[i]->EventsAfter(seen[i], milliseconds(20), &ended)) {
        seen[i] = std::max(seen[i], e.seq());
        if (!e.has_message_finished()) continue;
        o.status = e.message_finished().status();
        o.exit_code = e.message_finished().exit_code();
        std::cerr << "odin: attempt " << o.number << " (" << o.session_id << ") ended " << o.status << "\n";
        ++finished;
      }
      if (ended && o.status.empty()) {
        o.status = "error";
        o.exit_code = kError;
        ++finished;
      }
    }
    for (int sig : DrainSignals()) {
      if (interrupted) return 128 + sig;
      interrupted = true;
      for (auto& s : sessions) s->Cancel();
    }
  }
  // Their sessions end (workers gone, ledgers written) before the judging.
  sessions.clear();

  Redactor redactor;
  redactor.AddSecretsFromEnvironment(CurrentEnvironment());
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::Open(ws.ledger_path, std::move(redactor));
  if (!ledger.ok()) {
    std::cerr << "odin: " << ledger.status().message() << "\n";
    return kError;
  }
  StatusOr<UniqueFd> lock = LockApplies(ws.state_dir);
  if (!lock.ok()) {
    std::cerr << "odin: " << lock.status().message() << "\n";
    return kError;
  }
  std::vector<UndoPlan> plans(outcomes.size());
  std::vector<SessionView> views(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    AttemptOutcome& o = outcomes[i];
    StatusOr<SessionView> sv = FindSessionView(ledger->get(), ws.state_dir, o.session_id);
    StatusOr<UndoPlan> plan = sv.ok() ? PlanViewApply(ledger->get(), *sv, ws.root) : sv.status();
    if (!plan.ok()) {
      o.passes = false;
      o.why = "its change set cannot be read: " + plan.status().message();
      continue;
    }
    views[i] = *sv;
    plans[i] = std::move(*plan);
    JudgeAttempt(ledger->get(), plans[i], ws.root, config.reviews.test_patterns, &o);
  }
  // The winner is judged again against the workspace as it is now (the
  // user may have changed it while the attempts ran); one that fails there
  // loses, and the next is judged.
  int winner = PickAttempt(outcomes);
  while (winner >= 0 && !plans[static_cast<size_t>(winner)].steps.empty()) {
    size_t w = static_cast<size_t>(winner);
    StatusOr<ViewRecheck> recheck =
        RecheckView(ledger->get(), ws, config, views[w], plans[w], [&](const std::string& line) {
          std::cerr << "odin: attempt " << outcomes[w].number
                    << ": re-validating on the workspace as it is now: " << VisibleControls(line) << "\n";
        });
    std::string lost = recheck.ok() ? recheck->why : recheck.status().message();
    if (recheck.ok() && recheck->passed) {
      // Planned again: the workspace may have changed while the checks ran.
      StatusOr<UndoPlan> again = PlanViewApply(ledger->get(), views[w], ws.root);
      Status refused = again.ok() ? PlanRefusal(*again) : again.status();
      if (refused.ok()) {
        plans[w] = std::move(*again);
        break;
      }
      lost = refused.message();
    }
    outcomes[w].passes = false;
    outcomes[w].why = "passes in its view, but not against the workspace as it is now: " + lost;
    winner = PickAttempt(outcomes);
  }
  std::string landed;
  int code = winner < 0 ? kNotConverged : 0;
  std::string apply_error;
  bool nothing_to_land = winner >= 0 && plans[static_cast<size_t>(winner)].steps.empty();
  if (winner >= 0 && !nothing_to_land) {
    size_t w = static_cast<size_t>(winner);
    StatusOr<std::string> applied =
        ApplyView(ledger->get(), ws.state_dir, views[w], ws.root, plans[w], RealClock::Get()->WallMillis());
    if (applied.ok()) {
      landed = *applied;
    } else {
      apply_error = applied.status().message();
      code = kError;
    }
  }
  // The verdicts, in every attempt's own record.
  json verdicts = json::array();
  for (const AttemptOutcome& o : outcomes) verdicts.push_back(OutcomeJson(o));
  json record = {{"attempts", verdicts},
                 {"winner", winner >= 0 ? json(outcomes[static_cast<size_t>(winner)].number) : json(nullptr)},
                 {"landed", landed}};
  for (const AttemptOutcome& o : outcomes) {
    (void)(*ledger)->AddGateEvent({NewId("gate"), o.session_id, "user", "", "attempts_judged", landed,
                                   record.dump(-1, ' ', false, json::error_handler_t::replace),
                                   RealClock::Get()->WallMillis()});
  }
  if (f.output_format == "json") {
    json out = record;
    out["is_error"] = code != 0;
    out["exit_code"] = code;
    if (!apply_error.empty()) out["error"] = apply_error;
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return code;
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const AttemptOutcome& o = outcomes[i];
    std::cout << "attempt " << o.number << "  " << o.session_id << "  " << VisibleControls(o.why)
              << (static_cast<int>(i) == winner ? "  <- landed" : "") << "\n";
  }
  if (nothing_to_land) {
    std::cout << "attempt " << outcomes[static_cast<size_t>(winner)].number
              << " passes and changed nothing that lands: nothing to apply\n";
  } else if (winner >= 0 && landed.empty()) {
    std::cout << "the winner did not land: " << VisibleControls(apply_error) << "\n";
  } else if (winner >= 0) {
    const AttemptOutcome& w = outcomes[static_cast<size_t>(winner)];
    int passing = static_cast<int>(
        std::count_if(outcomes.begin(), outcomes.end(), [](const AttemptOutcome& o) { return o.passes; }));
    std::cout << "landed attempt " << w.number << " (" << landed << "): "
              << (passing == 1 ? "the only one that passes"
                               : "the smallest change of the " + std::to_string(passing) + " that pass")
              << "; odin undo " << landed << " puts it back\n";
  } else {
    std::cout << "no attempt passes: nothing landed\n";
  }
  if (n > 1) std::cout << "the others stay: odin diff SESSION shows one, odin discard SESSION drops it\n";
  return code;
}

}  // namespace odin
