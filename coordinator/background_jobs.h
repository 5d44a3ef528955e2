#pragma once
// BackgroundJobs: the session's background commands (ExecuteCommand with
// run_in_background), as the coordinator keeps them: what each one is, its
// output as it comes (the newest part, bounded), what its calls were told of
// it, how it ended, and the calls waiting for its end (CommandOutput with
// wait_seconds, StopCommand). It runs nothing: the coordinator starts, stops
// and records the commands (coordinator/background_commands.cc) and tells
// this what happened.
//
// Thread-safety: none; the coordinator's loop owns it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace odin {

struct BackgroundJob {
  std::string id;        // its ExecuteCommand's execution id: the id the model uses
  std::string agent_id;  // the agent that started it
  std::string command;   // as given (the script, or the argv joined)
  int64_t started_at_ms = 0;
  bool running = true;
  std::string ended;          // once it ended: "exited 0", "stopped", ... (as the model reads it)
  int exit_code = -1;         // once it exited
  uint64_t output_bytes = 0;  // everything it printed, counted
  uint64_t read_bytes = 0;    // how much of that CommandOutput has shown (or skipped)
  // The newest output, at most the table's keep bytes; it starts at byte
  // output_bytes - output.size() of everything printed.
  std::string output;
  std::vector<std::string> changed;  // workspace paths its writes were recorded at, in order, each once
  std::string stopping;              // why it was told to stop ("" while nobody did)
};

class BackgroundJobs {
 public:
  explicit BackgroundJobs(size_t keep_bytes = 1 << 20, size_t keep_ended = 32);

  // A started command. Its id is its execution id.
  void Add(const std::string& id, const std::string& agent_id, const std::string& command, int64_t now_ms);
  const BackgroundJob* Find(const std::string& id) const;
  // What it printed, in order.
  void Output(const std::string& id, const std::string& data);
  // Its writes were recorded at these paths.
  void Changed(const std::string& id, const std::vector<std::string>& paths);
  // It was told to stop, and why (the first reason stands).
  void Stopping(const std::string& id, const std::string& why);
  // It ended ("exited 3", "stopped", "killed by signal 9", ...). Ended jobs
  // stay to be asked about; beyond keep_ended, the oldest go.
  void End(const std::string& id, const std::string& how, int exit_code);

  // The output CommandOutput has not shown yet: at most max_bytes, the
  // newest; skipped counts the unshown bytes left out (older than what is
  // kept, or over max_bytes). Marks it all shown.
  struct Unread {
    std::string text;
    uint64_t skipped = 0;
  };
  Unread TakeUnread(const std::string& id, size_t max_bytes);

  // The jobs that still run, oldest first.
  std::vector<const BackgroundJob*> Running() const;
  // Every job kept, oldest first.
  std::vector<const BackgroundJob*> All() const;
  // The one to charge a write found while jobs run: the newest running one
  // ("" when none runs).
  std::string NewestRunning() const;

  // A call (by its execution id) waits for the job's end, until deadline.
  void Wait(const std::string& id, const std::string& waiter, SteadyTime deadline);
  // A waiting call went (cancelled): false if it was not waiting.
  bool DropWaiter(const std::string& waiter);
  // The waiters of a job that ended, taken.
  std::vector<std::string> TakeWaiters(const std::string& id);
  // Waiters whose deadline passed by now, taken: (job, waiter).
  std::vector<std::pair<std::string, std::string>> TakeDue(SteadyTime now);
  // The earliest waiter's deadline.
  std::optional<SteadyTime> NextDeadline() const;

 private:
  struct Waiter {
    std::string job;
    std::string waiter;
    SteadyTime deadline;
  };
  BackgroundJob* Get(const std::string& id);

  size_t keep_bytes_;
  size_t keep_ended_;
  std::vector<BackgroundJob> jobs_;  // in start order
  std::vector<Waiter> waiters_;
};

// The jobs as /jobs and odin doctor list them, one line each (newest last):
// id, state, command (cut at 80 bytes), the files it changed; "no background
// commands" when there are none.
std::string DescribeBackgroundJobs(const BackgroundJobs& jobs, int64_t now_ms);

}  // namespace odin
