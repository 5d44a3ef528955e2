#pragma once
// Fakes of the coordinator's OS-facing interfaces, shared by unit tests:
// a ProcessLauncher whose children exit when the test says so, a
// WorkerTransport that records what was sent and replays what workers "say",
// and a model client the test answers by hand.

#include <unistd.h>

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/process_launcher.h"
#include "llm/llm.h"
#include "pool/worker_transport.h"
#include "odin/v1/worker.pb.h"

namespace odin::testing {

// An envelope of the current protocol version, its body still to be set:
// what a fake worker says.
inline v1::Envelope NewEnvelope() {
  v1::Envelope e;
  e.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  return e;
}

// Records launches and signals; processes exit when the test says so.
class FakeLauncher : public ProcessLauncher {
 public:
  StatusOr<pid_t> Launch(const SpawnOptions& o) override {
    if (fail_launches) return Status::ResourceExhausted("fork", "no more processes");
    launched.push_back(o.argv);
    // The credentials a worker would read from its inherited fd: "<id> <secret>".
    for (int fd : o.keep_fds) {
      std::string line;
      char buf[256];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) line.append(buf, static_cast<size_t>(n));
      size_t space = line.find(' ');
      if (space != std::string::npos)
        secrets[line.substr(0, space)] = line.substr(space + 1, line.find('\n') - space - 1);
    }
    return next_pid++;
  }
  // The secret the worker with this id was given ("" if none).
  std::string SecretFor(const std::string& id) const {
    auto it = secrets.find(id);
    return it == secrets.end() ? "" : it->second;
  }
  std::map<std::string, std::string> secrets;
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
  StatusOr<WorkerEndpoint> OpenEndpoint(int64_t) override {
    return WorkerEndpoint{"inproc://fake-" + std::to_string(++endpoints_opened), ""};
  }
  void CloseEndpoint(const std::string& endpoint) override { closed_endpoints.push_back(endpoint); }
  int endpoints_opened = 0;
  std::vector<std::string> closed_endpoints;
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
  // The last message of this kind sent to id (an empty one if none was).
  v1::Envelope LastOf(const std::string& id, v1::Envelope::BodyCase body) const {
    for (auto it = sent.rbegin(); it != sent.rend(); ++it) {
      if (it->first == id && it->second.body_case() == body) return it->second;
    }
    return {};
  }

  std::vector<std::pair<std::string, v1::Envelope>> sent;
  std::deque<std::pair<std::string, v1::Envelope>> inbox;
};

// A model the test answers by hand: requests are kept, answers go to the
// oldest open one.
class ScriptedLlm : public LlmClient {
 public:
  const std::string& provider() const override { return name_; }
  uint64_t Start(const ChatRequest& request, Callbacks callbacks) override {
    requests.push_back(request);
    pending[next_] = std::move(callbacks);
    return next_++;
  }
  void Cancel(uint64_t id) override {
    pending.erase(id);
    ++cancelled;
  }
  void Tick() override {}
  std::optional<SteadyTime> NextTimer() const override { return std::nullopt; }

  // Answers the oldest open request (its text streamed first).
  void Answer(const StatusOr<ChatResponse>& r) {
    if (pending.empty()) return;
    auto cb = std::move(pending.begin()->second);
    pending.erase(pending.begin());
    if (r.ok() && cb.on_text && !r->text.empty()) cb.on_text(r->text);
    cb.on_done(r);
  }

  std::vector<ChatRequest> requests;
  std::map<uint64_t, Callbacks> pending;
  int cancelled = 0;

 private:
  std::string name_ = "scripted";
  uint64_t next_ = 1;
};

}  // namespace odin::testing
