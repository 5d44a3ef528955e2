#pragma once
// Fakes of the coordinator's OS-facing interfaces, shared by unit tests:
// a ProcessLauncher whose children exit when the test says so, and a
// WorkerTransport that records what was sent and replays what workers "say".

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "base/process_launcher.h"
#include "coordinator/worker_transport.h"
#include "odin/v1/worker.pb.h"

namespace odin::testing {

// Records launches and signals; processes exit when the test says so.
class FakeLauncher : public ProcessLauncher {
 public:
  StatusOr<pid_t> Launch(const SpawnOptions& o) override {
    if (fail_launches) return Status::ResourceExhausted("fork", "no more processes");
    launched.push_back(o.argv);
    return next_pid++;
  }
  bool fail_launches = false;
  void SignalGroup(pid_t pid, int sig) override { signals.push_back({pid, sig}); }
  void KillOrphanedGroup(pid_t pgid) override { orphaned_groups_killed.push_back(pgid); }
  std::vector<ExitedProcess> ReapExited() override {
    std::vector<ExitedProcess> out;
    out.swap(exited);
    return out;
  }
  std::vector<int> WatchFds() const override { return {}; }

  void Exit(pid_t pid, int wait_status) { exited.push_back({pid, wait_status}); }
  int SignalsTo(pid_t pid, int sig) const {
    int n = 0;
    for (auto [p, s] : signals) n += p == pid && s == sig;
    return n;
  }

  pid_t next_pid = 100;
  std::vector<std::vector<std::string>> launched;
  std::vector<std::pair<pid_t, int>> signals;
  std::vector<ExitedProcess> exited;
  std::vector<pid_t> orphaned_groups_killed;
};

// Records what the pool sends; delivers what the test makes workers say.
class FakeTransport : public WorkerTransport {
 public:
  Status Send(const std::string& id, const v1::Envelope& env) override {
    sent.push_back({id, env});
    return Status::OK();
  }
  Status Wait(Duration, std::vector<PollFd>*) override { return Status::OK(); }
  StatusOr<bool> Receive(std::string* id, v1::Envelope* env) override {
    if (inbox.empty()) return false;
    *id = inbox.front().first;
    *env = inbox.front().second;
    inbox.pop_front();
    return true;
  }
  int Count(const std::string& id, v1::Envelope::BodyCase body) const {
    int n = 0;
    for (const auto& [to, env] : sent) n += to == id && env.body_case() == body;
    return n;
  }

  std::vector<std::pair<std::string, v1::Envelope>> sent;
  std::deque<std::pair<std::string, v1::Envelope>> inbox;
};

}  // namespace odin::testing
