#include "session/attempt_run.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "base/secrets.h"
#include "config/config_loader.h"
#include "ledger/ledger.h"
#include "pool/worker_spawn.h"
#include "session/hosted_session.h"
#include "session/view_recheck.h"
#include "tools/workspace_path.h"
#include "workspace/isolated_views.h"

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

// Attempt k of n's session: its share of the budget, its variant, where its
// workers run. *hint is its variant's.
AgentSessionFlags AttemptFlags(const AttemptsSpec& spec, const Config& config, int k, std::string* hint) {
  AgentSessionFlags flags = spec.base;
  flags.isolated = true;
  flags.budget_share = spec.n;
  flags.runtime.workers = std::max(1, CpuCount() / spec.n);
  // A core each here; the attempts beyond them, on workers.remote's hosts
  // where there are any (Slurm's, asked for).
  int local = config.attempts_local > 0 ? config.attempts_local : std::max(1, CpuCount());
  flags.runtime.hosts_first = config.remote.launcher != "off" && k > local;
  if (!config.attempt_variants.empty()) {
    const Config::AttemptVariant& v =
        config.attempt_variants[static_cast<size_t>(k - 1) % config.attempt_variants.size()];
    if (!v.model.empty()) flags.llm.model = v.model;
    flags.llm.temperature = v.temperature;
    *hint = v.hint;
  }
  auto say = spec.say;
  flags.notice = [say, k](const std::string& line) { say("attempt " + std::to_string(k) + ": " + line); };
  return flags;
}

json OutcomeJson(const AttemptOutcome& o) {
  return {{"attempt", o.number}, {"session_id", o.session_id}, {"status", o.status}, {"exit_code", o.exit_code},
          {"lines", o.lines},    {"files", o.files},           {"passes", o.passes}, {"why", o.why}};
}

StatusOr<std::unique_ptr<Ledger>> OpenLedger(const Workspace& ws) {
  Redactor redactor;
  redactor.AddSecretsFromEnvironment(CurrentEnvironment());
  return Ledger::Open(ws.ledger_path, std::move(redactor));
}

}  // namespace

std::unique_ptr<AttemptRun> AttemptRun::Start(AttemptsSpec spec) {
  std::unique_ptr<AttemptRun> run(new AttemptRun());
  run->spec_ = std::move(spec);
  run->RunPhase([r = run.get()] { r->RunAndJudge(); });
  return run;
}

AttemptRun::~AttemptRun() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void AttemptRun::RunPhase(std::function<void()> phase) {
  if (thread_.joinable()) thread_.join();  // the last phase's, idle
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = true;
  }
  thread_ = std::thread([this, phase = std::move(phase)] {
    if (!Stopping()) phase();  // stopped: a landing not begun never runs
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    changed_.notify_all();
    if (spec_.idle) spec_.idle();
  });
}

bool AttemptRun::Wait(Duration wait) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, wait, [this] { return !busy_; });
}

void AttemptRun::Cancel() {
  // Under the lock: the run's thread must hold the last reference to each
  // session, so that each has ended (its ledger written) before the judging.
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (const auto& s : sessions_) s->Cancel();
}

void AttemptRun::Stop() {
  Cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
}

bool AttemptRun::Stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

int AttemptRun::Recommended() const { return PickAttempt(outcomes_); }

void AttemptRun::RunAndJudge() {
  const AttemptsSpec& spec = spec_;
  const Config& config = spec.base.config->config;
  int n = spec.n;
  // Started side by side: each copies the workspace into its view, which
  // on a file system that cannot clone is most of an attempt's start.
  std::vector<StatusOr<std::unique_ptr<HostedSession>>> started;
  for (int k = 0; k < n; ++k) started.emplace_back(Status::Internal("attempt", "not started"));
  std::vector<std::thread> starters;
  for (int k = 1; k <= n; ++k) {
    std::string hint;
    AgentSessionFlags flags = AttemptFlags(spec, config, k, &hint);
    starters.emplace_back([&started, k, n, flags, hint, approval = spec.approval] {
      StatusOr<std::unique_ptr<HostedSession>>& slot = started[static_cast<size_t>(k - 1)];
      slot = HostedSession::Start(flags, Mode::kEdit, approval);
      if (slot.ok()) (*slot)->AddNote(AttemptNote(k, n, hint));
    });
  }
  for (std::thread& t : starters) t.join();
  std::vector<std::shared_ptr<HostedSession>> sessions;
  outcomes_.assign(static_cast<size_t>(n), AttemptOutcome{});
  for (int k = 1; k <= n; ++k) {
    StatusOr<std::unique_ptr<HostedSession>>& slot = started[static_cast<size_t>(k - 1)];
    if (!slot.ok()) {
      // The started ones end with their sessions.
      error_ = Status::FailedPrecondition("attempt " + std::to_string(k), "did not start: " + slot.status().message());
      return;
    }
    outcomes_[static_cast<size_t>(k - 1)].number = k;
    outcomes_[static_cast<size_t>(k - 1)].session_id = (*slot)->id();
    sessions.push_back(std::move(*slot));
  }
  {
    // Cancelled while they started: none is sent the message, and each is
    // judged as it is (not done).
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_ || stopping_) {
      for (AttemptOutcome& o : outcomes_) {
        o.status = "cancelled";
        o.exit_code = 1;
      }
      error_ = Status::Cancelled("attempts", "stopped before they were sent the message");
      return;
    }
    sessions_ = sessions;
  }
  for (auto& s : sessions) {
    StatusOr<std::pair<std::string, uint64_t>> sent = s->Send(spec.message, "edit");
    if (!sent.ok()) {
      error_ = sent.status();
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) {
      for (auto& s : sessions_) s->Cancel();
    }
  }
  spec.say(std::to_string(n) + " attempts at work (isolated views; odin diff SESSION shows each)");
  std::vector<uint64_t> seen(sessions.size(), 0);
  while (ended_ < n) {
    if (Stopping()) return;  // left: their sessions end with this
    for (size_t i = 0; i < sessions.size(); ++i) {
      AttemptOutcome& o = outcomes_[i];
      if (!o.status.empty()) continue;
      bool ended = false;
      for (const v1::SessionEvent& e : sessions[i]->EventsAfter(seen[i], milliseconds(20), &ended)) {
        seen[i] = std::max(seen[i], e.seq());
        if (!e.has_message_finished()) continue;
        o.status = e.message_finished().status();
        o.exit_code = e.message_finished().exit_code();
        ++ended_;
        spec.say("attempt " + std::to_string(o.number) + " (" + o.session_id + ") ended " + o.status);
      }
      if (ended && o.status.empty()) {
        o.status = "error";
        o.exit_code = 1;
        ++ended_;
      }
    }
  }
  // Their sessions end (workers gone, ledgers written) before the judging.
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.clear();
  }
  sessions.clear();

  StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(spec.ws);
  if (!ledger.ok()) {
    error_ = ledger.status();
    return;
  }
  StatusOr<UniqueFd> lock = LockApplies(spec.ws.state_dir);
  if (!lock.ok()) {
    error_ = lock.status();
    return;
  }
  for (AttemptOutcome& o : outcomes_) {
    StatusOr<SessionView> sv = FindSessionView(ledger->get(), spec.ws.state_dir, o.session_id);
    StatusOr<UndoPlan> plan = sv.ok() ? PlanViewApply(ledger->get(), *sv, spec.ws.root) : sv.status();
    if (!plan.ok()) {
      o.passes = false;
      o.why = "its change set cannot be read: " + plan.status().message();
      continue;
    }
    JudgeAttempt(ledger->get(), *plan, spec.ws.root, config.reviews.test_patterns, &o);
  }
}

void AttemptRun::Land(std::optional<int> chosen) {
  RunPhase([this, chosen] { LandOnThread(chosen); });
}

void AttemptRun::LandOnThread(std::optional<int> chosen) {
  const Config& config = spec_.base.config->config;
  landing_ = AttemptLanding{};
  chosen_by_user_ = chosen.has_value();
  StatusOr<std::unique_ptr<Ledger>> opened = OpenLedger(spec_.ws);
  if (!opened.ok()) {
    landing_.error = opened.status().message();
    return;
  }
  Ledger* ledger = opened->get();
  StatusOr<UniqueFd> lock = LockApplies(spec_.ws.state_dir);
  if (!lock.ok()) {
    landing_.error = lock.status().message();
    return;
  }
  // Each candidate is planned and re-validated against the workspace as it
  // is now (the user may have changed it since the judging); one that fails
  // loses, and (Odin choosing) the next is taken.
  int winner =
      !chosen.has_value() ? Recommended()
      : *chosen >= 0 && *chosen < static_cast<int>(outcomes_.size()) && outcomes_[static_cast<size_t>(*chosen)].passes
          ? *chosen
          : -1;
  UndoPlan plan;
  SessionView view;
  while (winner >= 0) {
    AttemptOutcome& o = outcomes_[static_cast<size_t>(winner)];
    StatusOr<SessionView> sv = FindSessionView(ledger, spec_.ws.state_dir, o.session_id);
    StatusOr<UndoPlan> planned = sv.ok() ? PlanViewApply(ledger, *sv, spec_.ws.root) : sv.status();
    Status refused = planned.ok() ? PlanRefusal(*planned) : planned.status();
    std::string lost = refused.message();
    if (refused.ok() && planned->steps.empty()) {
      landing_.nothing_to_land = true;
      break;
    }
    if (refused.ok()) {
      StatusOr<ViewRecheck> recheck =
          RecheckView(ledger, spec_.ws, config, *sv, *planned, [&](const std::string& line) {
            spec_.say("attempt " + std::to_string(o.number) + ": re-validating on the workspace as it is now: " + line);
          });
      lost = recheck.ok() ? recheck->why : recheck.status().message();
      if (recheck.ok() && recheck->passed) {
        // Planned again: the workspace may have changed while the checks ran.
        StatusOr<UndoPlan> again = PlanViewApply(ledger, *sv, spec_.ws.root);
        Status refused_again = again.ok() ? PlanRefusal(*again) : again.status();
        if (refused_again.ok()) {
          plan = std::move(*again);
          view = *sv;
          break;
        }
        lost = refused_again.message();
      }
    }
    o.passes = false;
    o.why = "passes in its view, but not against the workspace as it is now: " + lost;
    winner = chosen.has_value() ? -1 : Recommended();
  }
  landing_.winner = winner;
  if (winner >= 0 && !landing_.nothing_to_land && Stopping()) {
    landing_.error = "stopped before it landed";
  } else if (winner >= 0 && !landing_.nothing_to_land) {
    StatusOr<std::string> applied =
        ApplyView(ledger, spec_.ws.state_dir, view, spec_.ws.root, plan, RealClock::Get()->WallMillis());
    if (applied.ok()) {
      landing_.execution_id = *applied;
      for (const UndoStep& step : plan.steps) landing_.paths.push_back(DisplayPath(step.path, spec_.ws.root));
    } else {
      landing_.error = applied.status().message();
    }
  }
  // The verdicts, in every attempt's own record.
  std::string record = RecordJson();
  for (const AttemptOutcome& o : outcomes_) {
    (void)ledger->AddGateEvent({NewId("gate"), o.session_id, "user", "", "attempts_judged", landing_.execution_id,
                                record, RealClock::Get()->WallMillis()});
  }
}

std::string AttemptRun::RecordJson() const {
  json verdicts = json::array();
  for (const AttemptOutcome& o : outcomes_) verdicts.push_back(OutcomeJson(o));
  int w = landing_.winner;
  json record = {{"attempts", verdicts},
                 {"winner", w >= 0 ? json(outcomes_[static_cast<size_t>(w)].number) : json(nullptr)},
                 {"landed", landing_.execution_id},
                 {"chosen_by", chosen_by_user_ ? "user" : "odin"}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace odin
