#pragma once
// /attempts in the interactive session (docs/attempts.md): N agents try
// the user's message at once, each in an isolated view and each with the
// session's conversation so far (a fork of it), while the terminal stays
// the user's; when all have ended Odin shows each one's verdict and the
// one it would land, and the user chooses: that one is re-validated
// against the workspace as it is then and lands, or none does. The main
// session hears what landed with its next message.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "cli/cli.h"
#include "session/agent_session.h"
#include "session/attempt_run.h"

namespace odin {

class InteractiveAttempts {
 public:
  // line prints one line above the line being edited, on the caller's
  // thread.
  explicit InteractiveAttempts(std::function<void(const std::string&)> line);
  ~InteractiveAttempts();

  // /attempts [N] MESSAGE: starts them from session s's conversation, or
  // says why not (one line).
  void Start(const GlobalFlags& g, const AgentFlags& f, AgentSession& s, const std::string& arg);
  // At work, re-validating or waiting for the user's choice.
  bool active() const { return run_ != nullptr; }
  // Waits for the user's choice: the next line is its answer (Answer).
  bool choosing() const { return choosing_; }
  // Readable when something is to be shown (Pump shows it).
  int wake_fd() const { return wake_.get(); }
  // Shows what happened since; once the attempts are judged, the verdicts
  // and the question. Returns what the main session's model must hear when
  // an attempt landed ("" otherwise).
  std::string Pump();
  void Answer(const std::string& line);
  // Esc, Ctrl-C: the attempts at work are cancelled (their sessions end and
  // are judged as they are); false when none is at work.
  bool Cancel();
  // For the prompt: "land attempt [3]? " while choosing, else "attempts: 1
  // of 3 ended" while they work, "" when none run.
  std::string Prompt() const;
  std::string Status() const;

 private:
  void Say(const std::string& line);  // any thread
  void Wake();                        // any thread
  void ShowVerdicts();
  // The landing's outcome told; what the main session must hear of it.
  std::string Landed();

  std::function<void(const std::string&)> line_;
  UniqueFd wake_;
  std::mutex mu_;
  std::vector<std::string> said_;  // lines from the run's threads, not shown yet
  std::unique_ptr<AttemptRun> run_;
  int n_ = 0;
  std::string message_;
  bool choosing_ = false;
  bool landing_ = false;
  int chosen_ = -1;  // the index the user chose, -1: none
};

}  // namespace odin
