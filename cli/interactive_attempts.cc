#include "cli/interactive_attempts.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "base/secrets.h"
#include "base/terminal_text.h"
#include "cli/cli_agent_internal.h"
#include "config/config_loader.h"
#include "workspace/workspace.h"

namespace odin {

namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() < 4 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string Numbers(const std::vector<int>& numbers) {
  std::string out;
  for (size_t i = 0; i < numbers.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == numbers.size() ? " or " : ", ") + std::to_string(numbers[i]);
  }
  return out;
}

}  // namespace

InteractiveAttempts::InteractiveAttempts(std::function<void(const std::string&)> line)
    : line_(std::move(line)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

InteractiveAttempts::~InteractiveAttempts() {
  if (run_ == nullptr) return;
  if (landing_) line_("leaving: the landing stops unless its re-validation has ended");
  run_->Stop();
  while (!run_->Wait(seconds(1))) {
  }
  const AttemptLanding& landing = run_->landing();
  if (landing_ && !landing.execution_id.empty()) {
    line_("attempt " + std::to_string(run_->outcomes()[static_cast<size_t>(landing.winner)].number) + " landed (" +
          landing.execution_id + "); odin undo " + landing.execution_id + " puts it back");
  } else {
    line_("nothing landed; the attempts' sessions stay: odin diff SESSION, odin discard SESSION");
  }
  run_.reset();
}

void InteractiveAttempts::Say(const std::string& line) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    said_.push_back(line);
  }
  Wake();
}

void InteractiveAttempts::Wake() {
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
}

void InteractiveAttempts::Start(const GlobalFlags& g, const AgentFlags& f, AgentSession& s, const std::string& arg) {
  if (run_ != nullptr) return line_("attempts are at work already (Esc stops them)");
  const Workspace& ws = s.runtime().workspace();
  if (!s.runtime().coordinator().background().Running().empty()) {
    return line_("background commands run in the workspace: /jobs stop them first");
  }
  if (!ws.view.empty()) {
    return line_(
        "this session works in an isolated view: attempts start from the workspace itself (leave, then "
        "odin apply or discard this session)");
  }
  StatusOr<LoadedConfig> loaded = LoadConfig(ws, EnvironmentMap());
  if (!loaded.ok()) return line_(VisibleControls(loaded.status().message()));
  std::string message = arg;
  int n = f.attempts > 1 ? f.attempts : loaded->config.attempts;
  std::string first = arg.substr(0, arg.find(' '));
  if (AllDigits(first)) {
    n = std::stoi(first);
    message = arg.find(' ') == std::string::npos ? "" : arg.substr(arg.find(' ') + 1);
  }
  while (!message.empty() && message[0] == ' ') message.erase(0, 1);
  if (message.empty() || n < 2 || n > kMaxAttempts) {
    return line_("/attempts N MESSAGE: N agents (2 to " + std::to_string(kMaxAttempts) +
                 ") try the message at once, each in an isolated view; you choose which lands");
  }
  // The attempts go on from this session's conversation: each a copy of it.
  Ledger& ledger = s.runtime().ledger();
  const std::string& id = s.runtime().coordinator().session_id();
  StatusOr<std::vector<MessageRecord>> messages = ledger.ListMessages(id);
  bool fork = messages.ok() && !messages->empty();
  std::string approval = f.approval == "allow" ? "allow" : "deny";
  AttemptsSpec spec;
  spec.base = SessionFlags(g, f, "agent", "edit", approval);
  spec.base.resume = fork ? id : "";
  spec.base.continue_last = false;
  spec.base.fork_session = fork;
  spec.base.config = std::make_shared<const LoadedConfig>(std::move(*loaded));
  spec.base.llm.model = s.agent().model();  // as /model left it
  spec.approval = approval;
  spec.n = n;
  spec.message = message;
  spec.ws = ws;
  spec.say = [this](const std::string& line) { Say(line); };
  spec.idle = [this] { Wake(); };
  n_ = n;
  message_ = message;
  choosing_ = landing_ = false;
  line_(std::to_string(n) + " attempts at this message, each in an isolated view" +
        (fork ? " with this conversation" : "") + "; the workspace does not change until you choose one" +
        (approval == "deny" ? " (nobody is asked during attempts: what needs approval is denied)" : ""));
  run_ = AttemptRun::Start(std::move(spec));
}

std::string InteractiveAttempts::Pump() {
  uint64_t count;
  (void)!read(wake_.get(), &count, sizeof count);
  std::vector<std::string> said;
  {
    std::lock_guard<std::mutex> lock(mu_);
    said.swap(said_);
  }
  for (const std::string& l : said) line_(VisibleControls(l));
  if (run_ == nullptr || choosing_ || !run_->Wait(Duration::zero())) return "";
  if (landing_) {
    landing_ = false;
    return Landed();
  }
  if (!run_->error().ok()) {
    line_("the attempts could not run: " + VisibleControls(run_->error().message()));
    run_.reset();
    return "";
  }
  if (run_->Recommended() < 0) {
    // Nothing to choose: the verdicts are recorded, nothing lands.
    ShowVerdicts();
    landing_ = true;
    chosen_ = -1;
    run_->Land(-1);
    return "";
  }
  ShowVerdicts();
  choosing_ = true;
  return "";
}

void InteractiveAttempts::ShowVerdicts() {
  const std::vector<AttemptOutcome>& outcomes = run_->outcomes();
  int best = run_->Recommended();
  line_("the attempts' verdicts:");
  std::vector<int> passing;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const AttemptOutcome& o = outcomes[i];
    if (o.passes) passing.push_back(o.number);
    line_("  " + std::to_string(o.number) + "  " + o.session_id + "  " + VisibleControls(o.why) +
          (static_cast<int>(i) == best ? "  <- Odin's choice" : ""));
  }
  if (best < 0) return;
  line_("Land which? " + Numbers(passing) + " (Enter: " + std::to_string(outcomes[static_cast<size_t>(best)].number) +
        "), or n for none; odin diff SESSION shows one");
}

void InteractiveAttempts::Answer(const std::string& raw) {
  std::string answer = raw;
  while (!answer.empty() && (answer.back() == ' ' || answer.back() == '\r')) answer.pop_back();
  while (!answer.empty() && answer[0] == ' ') answer.erase(0, 1);
  const std::vector<AttemptOutcome>& outcomes = run_->outcomes();
  int chosen;
  if (answer.empty()) {
    chosen = run_->Recommended();
  } else if (answer == "n" || answer == "no" || answer == "none") {
    chosen = -1;
  } else if (AllDigits(answer) && std::stoi(answer) >= 1 && std::stoi(answer) <= static_cast<int>(outcomes.size())) {
    chosen = std::stoi(answer) - 1;
    const AttemptOutcome& o = outcomes[static_cast<size_t>(chosen)];
    if (!o.passes)
      return line_("attempt " + answer + " does not pass (" + VisibleControls(o.why) + "): choose another");
  } else {
    return line_("answer with an attempt's number, Enter for Odin's choice, or n for none");
  }
  choosing_ = false;
  landing_ = true;
  chosen_ = chosen;
  if (chosen >= 0) {
    line_("landing attempt " + std::to_string(outcomes[static_cast<size_t>(chosen)].number) +
          ": re-validated first against the workspace as it is now");
  }
  run_->Land(chosen);
}

std::string InteractiveAttempts::Landed() {
  const std::vector<AttemptOutcome>& outcomes = run_->outcomes();
  const AttemptLanding& landing = run_->landing();
  if (landing.winner < 0 && chosen_ >= 0) {
    // The chosen one failed its re-validation: another may still be chosen.
    const AttemptOutcome& o = outcomes[static_cast<size_t>(chosen_)];
    line_("attempt " + std::to_string(o.number) + " does not land: " + VisibleControls(o.why));
    if (run_->Recommended() >= 0) {
      ShowVerdicts();
      choosing_ = true;
      return "";
    }
  }
  std::string note;
  if (!landing.execution_id.empty()) {
    line_("landed attempt " + std::to_string(outcomes[static_cast<size_t>(landing.winner)].number) + " (" +
          landing.execution_id + "), your choice; odin undo " + landing.execution_id + " puts it back");
    std::string paths;
    for (const std::string& p : landing.paths) paths += (paths.empty() ? "" : ", ") + p;
    note = "The user had " + std::to_string(n_) +
           " agents attempt a message at once, each in an isolated copy of the workspace: \"" + message_ +
           "\". Attempt " + std::to_string(outcomes[static_cast<size_t>(landing.winner)].number) +
           "'s change landed in the workspace (" + landing.execution_id + "): " + paths +
           ". Read those files again before you edit them.";
  } else if (landing.winner >= 0) {
    line_(LandingSummary(outcomes, landing));  // nothing to land, or its apply failed
  } else if (chosen_ == -1 && run_->Recommended() >= 0) {
    line_("nothing landed: you chose none");
  } else {
    line_("no attempt passes: nothing landed");
  }
  line_(std::string(landing.execution_id.empty() ? "the attempts stay" : "the others stay") +
        ": odin diff SESSION shows one, odin discard SESSION drops it");
  run_.reset();
  return note;
}

bool InteractiveAttempts::Cancel() {
  if (run_ == nullptr) return false;
  if (choosing_) {
    line_("none lands");
    Answer("n");
    return true;
  }
  if (landing_) return false;  // its re-validation runs to its end
  line_("stopping the attempts (each is judged as it ends)");
  run_->Cancel();
  return true;
}

std::string InteractiveAttempts::Prompt() const {
  if (!choosing_) return "";
  return "land attempt [" + std::to_string(run_->outcomes()[static_cast<size_t>(run_->Recommended())].number) + "]? ";
}

std::string InteractiveAttempts::Status() const {
  if (run_ == nullptr) return "";
  if (landing_) return "landing an attempt";
  return "attempts: " + std::to_string(run_->Ended()) + " of " + std::to_string(n_) + " ended";
}

}  // namespace odin
