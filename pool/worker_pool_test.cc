#include "pool/worker_pool.h"

#include <signal.h>
#include <sys/wait.h>

#include <deque>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "odin/v1/worker.pb.h"
#include "sandbox/sandbox_exit_codes.h"
#include "tests/fakes.h"

namespace odin {
namespace {

using testing::FakeLauncher;
using testing::FakeTransport;
using testing::NewEnvelope;

class RecordingListener : public WorkerPool::Listener {
 public:
  Status OnDispatch(const WorkerRequest& call, const std::string& worker_id) override {
    dispatched.push_back({call.execution_id, worker_id});
    return dispatch_status;
  }
  void OnProgress(const v1::ToolProgress& p) override {
    progress.push_back(p);
    if (on_progress) on_progress();
  }
  std::function<void()> on_progress;
  void OnResult(const v1::ToolResult& r) override { results.push_back(r); }
  void OnWorkerReady(const v1::Hello& h) override { ready.push_back(h.worker_id()); }
  void OnWorkerRefused(const std::string& peer, const std::string& reason) override {
    refused.push_back(peer + ": " + reason);
  }
  std::vector<std::string> refused;
  void OnMcpListing(const std::string& lane, const std::string& output_json) override {
    listings.push_back(lane + " " + output_json);
  }
  std::vector<std::string> listings;

  Status dispatch_status;
  std::vector<std::pair<std::string, std::string>> dispatched;
  std::vector<v1::ToolProgress> progress;
  std::vector<v1::ToolResult> results;
  std::vector<std::string> ready;
};

// Hosts on other machines, as the pool sees them: one host, "h#1", that
// takes every worker; what the pool asks of it is recorded, and what its
// workers say is handed in through events.
class FakeHosts : public WorkerHosts {
 public:
  std::string Place(WorkerPolicy, const std::string&, bool) override { return full ? "" : "h#1"; }
  Status Spawn(const std::string&, const std::string& worker_id, const std::string& secret, WorkerPolicy,
               const std::string&) override {
    secrets[worker_id] = secret;
    spawned.push_back(worker_id);
    return Status::OK();
  }
  Status Send(const std::string&, const std::string& worker_id, const v1::Envelope& env) override {
    sent.push_back({worker_id, env});
    return Status::OK();
  }
  void Signal(const std::string&, const std::string& worker_id, int signal) override {
    signals.push_back({worker_id, signal});
  }
  void StartFailed(const std::string&, const std::string&) override {}
  void Drop(const std::string& host, const std::string& why) override { dropped.push_back(host + ": " + why); }
  bool Takes(WorkerPolicy, const std::string& lane) const override { return lane.empty(); }
  void SetDemand(size_t waiting) override { demand = waiting; }
  void AddWaitFds(std::vector<PollFd>*) override {}
  bool Pending() override { return !events.empty(); }
  SteadyTime NextTimer() const override { return SteadyTime::max(); }
  void Pump(std::vector<Event>* out) override {
    out->insert(out->end(), events.begin(), events.end());
    events.clear();
  }
  int SignalsTo(const std::string& worker_id, int signal) const {
    int n = 0;
    for (const auto& [id, sig] : signals) n += id == worker_id && sig == signal;
    return n;
  }

  bool full = false;
  size_t demand = 0;
  std::map<std::string, std::string> secrets;
  std::vector<std::string> spawned;
  std::vector<std::pair<std::string, v1::Envelope>> sent;
  std::vector<std::pair<std::string, int>> signals;
  std::vector<std::string> dropped;
  std::vector<Event> events;
};

class WorkerPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.size = 2;
    options_.heartbeat_interval = milliseconds(500);
    options_.liveness = 3;
    options_.start_timeout = seconds(10);
    options_.cancel_grace = seconds(3);
    options_.term_grace = seconds(1);
    options_.spawn_spec = [](const WorkerSpawn& w) {
      SpawnOptions o;
      if (w.policy == WorkerPolicy::kLspHost) {
        o.argv = {"odin-lsp-host", "--readonly"};
      } else if (IsMcpPolicy(w.policy)) {
        o.argv = {"odin-mcp-worker", w.lane};
      } else {
        o.argv = {"odin-worker", w.policy == WorkerPolicy::kReadonly ? "--readonly" : "--writable"};
      }
      return o;
    };
  }

  void StartPool() {
    pool_ = std::make_unique<WorkerPool>(options_, &clock_, &launcher_, &transport_, &listener_);
    ASSERT_TRUE(pool_->Start().ok());
  }

  // The id the pool gave the worker with this pid.
  std::string IdOf(pid_t pid) {
    for (const auto& w : pool_->workers()) {
      if (w.pid == pid) return w.id;
    }
    return "";
  }

  void SayHello(pid_t pid, bool namespaces = true) {
    v1::Envelope e = NewEnvelope();
    e.mutable_hello()->set_worker_id(IdOf(pid));
    e.mutable_hello()->set_secret(launcher_.SecretFor(IdOf(pid)));
    e.mutable_hello()->set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    e.mutable_hello()->mutable_sandbox()->set_namespaces(namespaces);
    e.mutable_hello()->mutable_sandbox()->set_description(namespaces ? "bwrap" : "none: test");
    transport_.inbox.push_back({IdOf(pid), e});
    Poll();
  }

  void SayHeartbeat(pid_t pid) {
    v1::Envelope e = NewEnvelope();
    e.mutable_heartbeat();
    transport_.inbox.push_back({IdOf(pid), e});
    Poll();
  }

  void SayResult(pid_t pid, const std::string& execution_id, int exit_code) {
    v1::Envelope e = NewEnvelope();
    e.mutable_tool_result()->set_execution_id(execution_id);
    e.mutable_tool_result()->set_status(exit_code == 0 ? v1::TOOL_STATUS_OK : v1::TOOL_STATUS_ERROR);
    e.mutable_tool_result()->set_has_exit_code(true);
    e.mutable_tool_result()->set_exit_code(exit_code);
    transport_.inbox.push_back({IdOf(pid), e});
    Poll();
  }

  void Poll() { ASSERT_TRUE(pool_->Poll(Duration::zero()).ok()); }

  WorkerRequest Call(const std::string& id, Duration timeout = Duration::zero()) {
    WorkerRequest c;
    c.execution_id = id;
    c.tool = "ExecuteCommand";
    c.typed = std::make_shared<v1::ToolRequest>();  // as the coordinator types it at Submit
    c.typed->mutable_input()->mutable_command()->add_argv("true");
    c.timeout = timeout;
    return c;
  }

  // The worker (pid) the call was dispatched to.
  pid_t WorkerOf(const std::string& execution_id) {
    for (const auto& w : pool_->workers()) {
      if (w.execution_id == execution_id) return w.pid;
    }
    return 0;
  }

  WorkerPoolOptions options_;
  FakeClock clock_;
  FakeLauncher launcher_;
  FakeTransport transport_;
  RecordingListener listener_;
  std::unique_ptr<WorkerPool> pool_;
};

TEST_F(WorkerPoolTest, SpawnsSizeWorkersOnStart) {
  StartPool();
  EXPECT_EQ(launcher_.launched.size(), 2u);
  EXPECT_EQ(pool_->workers().size(), 2u);
}

TEST_F(WorkerPoolTest, EachWorkerHasItsOwnEndpointAndNoIdOrSecretInItsCommandLine) {
  StartPool();
  ASSERT_EQ(launcher_.launched.size(), 2u);
  std::string a = IdOf(100), b = IdOf(101);
  EXPECT_NE(a, b);
  EXPECT_NE(launcher_.SecretFor(a), "");
  EXPECT_EQ(launcher_.SecretFor(a).size(), 64u);
  EXPECT_NE(launcher_.SecretFor(a), launcher_.SecretFor(b));
  for (const auto& argv : launcher_.launched) {
    for (const std::string& word : argv) {
      EXPECT_EQ(word.find(a), std::string::npos) << word;
      EXPECT_EQ(word.find(launcher_.SecretFor(a)), std::string::npos) << word;
    }
  }
  EXPECT_EQ(transport_.endpoints_opened, 2);
  launcher_.Exit(100, 9);
  Poll();
  // The dead worker's endpoint goes with it; its replacement gets a new one.
  EXPECT_EQ(transport_.closed_endpoints.size(), 1u);
  EXPECT_EQ(transport_.endpoints_opened, 3);
}

TEST_F(WorkerPoolTest, ArgumentsReachTheWorkerTypedAndOnlyAnMcpToolsAsJsonText) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_cmd"));
  const v1::ToolRequest& cmd = transport_.sent.back().second.tool_request();
  EXPECT_EQ(cmd.execution_id(), "ex_cmd");
  EXPECT_EQ(cmd.arguments_json(), "");  // the worker parses no JSON
  ASSERT_TRUE(cmd.input().has_command());
  EXPECT_EQ(cmd.input().command().argv(0), "true");

  WorkerRequest mcp = Call("ex_mcp");
  mcp.tool = "mcp__alpha__x";
  mcp.typed = std::make_shared<v1::ToolRequest>();  // as Submit makes it for an MCP tool
  mcp.typed->set_arguments_json(R"({"q":1})");
  mcp.policy = WorkerPolicy::kMcpReadonly;
  mcp.lane = "alpha";
  pool_->Submit(mcp);
  SayHello(101);
  ASSERT_EQ(WorkerOf("ex_mcp"), 101);
  const v1::ToolRequest& passed = transport_.sent.back().second.tool_request();
  EXPECT_EQ(passed.arguments_json(), R"({"q":1})");  // through to the server, as checked at Submit
  EXPECT_EQ(passed.input().kind_case(), v1::ToolInput::KIND_NOT_SET);
}

TEST_F(WorkerPoolTest, AHelloWithoutTheSecretIsRefusedRecordedAndGetsNoWork) {
  StartPool();
  pool_->Submit(Call("ex_1"));
  v1::Envelope forged = NewEnvelope();
  forged.mutable_hello()->set_worker_id(IdOf(100));
  forged.mutable_hello()->set_secret(std::string(64, '0'));
  transport_.inbox.push_back({IdOf(100), forged});
  Poll();
  ASSERT_EQ(listener_.refused.size(), 1u);
  EXPECT_NE(listener_.refused[0].find("without the worker's secret"), std::string::npos);
  EXPECT_TRUE(listener_.ready.empty());
  EXPECT_TRUE(listener_.dispatched.empty());
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);  // the id is spoilt: the worker goes
  // The other worker, with its secret, takes the call.
  SayHello(101);
  ASSERT_EQ(listener_.dispatched.size(), 1u);
  EXPECT_EQ(listener_.dispatched[0].second, IdOf(101));
}

TEST_F(WorkerPoolTest, AHelloFromAnIdNoWorkerWasGivenIsRecordedOnce) {
  StartPool();
  v1::Envelope forged = NewEnvelope();
  forged.mutable_hello()->set_worker_id("w_impostor");
  transport_.inbox.push_back({"w_impostor", forged});
  transport_.inbox.push_back({"w_impostor", forged});
  Poll();
  ASSERT_EQ(listener_.refused.size(), 1u);
  EXPECT_EQ(listener_.refused[0], "w_impostor: a Hello from an id that no worker was given");
  EXPECT_TRUE(launcher_.signals.empty());
  EXPECT_TRUE(listener_.ready.empty());
}

TEST_F(WorkerPoolTest, DispatchesOnlyAfterHello) {
  StartPool();
  pool_->Submit(Call("ex_1"));
  Poll();
  EXPECT_TRUE(listener_.dispatched.empty());
  SayHello(100);
  ASSERT_EQ(listener_.dispatched.size(), 1u);
  EXPECT_EQ(listener_.dispatched[0].second, IdOf(100));
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kToolRequest), 1);
  EXPECT_EQ(listener_.ready, std::vector<std::string>{IdOf(100)});
}

TEST_F(WorkerPoolTest, RelaysResultThenRunsTheNextQueuedCall) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1"));
  pool_->Submit(Call("ex_2"));
  EXPECT_EQ(listener_.dispatched.size(), 1u);
  EXPECT_EQ(pool_->pending(), 2u);
  SayResult(100, "ex_1", 0);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].execution_id(), "ex_1");
  ASSERT_EQ(listener_.dispatched.size(), 2u);
  EXPECT_EQ(listener_.dispatched[1].first, "ex_2");
}

TEST_F(WorkerPoolTest, SilentWorkerIsKilledAfterThreeIntervalsAndReplaced) {
  StartPool();
  SayHello(100);
  SayHello(101);
  pool_->Submit(Call("ex_1"));
  pid_t busy = WorkerOf("ex_1");
  pid_t other = busy == 100 ? 101 : 100;
  // The other worker keeps talking; the busy one falls silent.
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(milliseconds(500));
    SayHeartbeat(other);
  }
  clock_.Advance(milliseconds(499));
  SayHeartbeat(other);
  EXPECT_EQ(launcher_.SignalsTo(busy, SIGTERM), 0);
  clock_.Advance(milliseconds(1));
  Poll();
  EXPECT_EQ(launcher_.SignalsTo(busy, SIGTERM), 1);
  EXPECT_EQ(launcher_.SignalsTo(other, SIGTERM), 0);
  // It does not go on SIGTERM: SIGKILL after the grace period.
  clock_.Advance(milliseconds(999));
  SayHeartbeat(other);
  EXPECT_EQ(launcher_.SignalsTo(busy, SIGKILL), 0);
  clock_.Advance(milliseconds(1));
  SayHeartbeat(other);
  EXPECT_EQ(launcher_.SignalsTo(busy, SIGKILL), 1);

  launcher_.Exit(busy, SIGKILL);
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_EQ(listener_.results[0].exit_reason(), v1::EXIT_REASON_CRASHED);
  EXPECT_NE(listener_.results[0].error().message().find("stopped heartbeating"), std::string::npos);
  EXPECT_EQ(launcher_.launched.size(), 3u);  // replaced
}

TEST_F(WorkerPoolTest, DeadlineEscalatesCancelThenSigtermThenSigkill) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1", seconds(2)));
  auto keep_alive = [&](Duration d) {  // heartbeats keep the worker alive while time passes
    clock_.Advance(d);
    SayHeartbeat(100);
  };
  keep_alive(milliseconds(1999));
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kCancel), 0);
  keep_alive(milliseconds(1));
  ASSERT_EQ(transport_.Count(IdOf(100), v1::Envelope::kCancel), 1);
  EXPECT_EQ(transport_.sent.back().second.cancel().reason(), v1::CANCEL_REASON_TIMEOUT);

  for (int i = 0; i < 5; ++i) keep_alive(milliseconds(500));
  keep_alive(milliseconds(499));  // 2999 ms after Cancel
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 0);
  keep_alive(milliseconds(1));
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
  keep_alive(milliseconds(999));
  EXPECT_EQ(launcher_.SignalsTo(100, SIGKILL), 0);
  keep_alive(milliseconds(1));
  EXPECT_EQ(launcher_.SignalsTo(100, SIGKILL), 1);

  launcher_.Exit(100, SIGKILL);
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_TIMED_OUT);
  EXPECT_EQ(listener_.results[0].exit_code(), 124);
  EXPECT_EQ(launcher_.launched.size(), 2u);
}

TEST_F(WorkerPoolTest, WorkerThatAnswersTheCancelKeepsItsResult) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1", seconds(1)));
  clock_.Advance(seconds(1));
  Poll();
  ASSERT_EQ(transport_.Count(IdOf(100), v1::Envelope::kCancel), 1);
  v1::Envelope e = NewEnvelope();
  e.mutable_tool_result()->set_execution_id("ex_1");
  e.mutable_tool_result()->set_status(v1::TOOL_STATUS_TIMED_OUT);
  transport_.inbox.push_back({IdOf(100), e});
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_TIMED_OUT);
  clock_.Advance(seconds(10));
  SayHeartbeat(100);
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 0);
}

TEST_F(WorkerPoolTest, WorkerDeathEndsItsCallAsCrashedAndIsReplaced) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1"));
  launcher_.Exit(100, SIGSEGV);
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_NE(listener_.results[0].error().message().find("signal 11"), std::string::npos);
  EXPECT_EQ(launcher_.launched.size(), 2u);
  // The replacement takes the next call once it says Hello.
  pool_->Submit(Call("ex_2"));
  SayHello(101);
  EXPECT_EQ(WorkerOf("ex_2"), 101);
}

TEST_F(WorkerPoolTest, UnsandboxedWorkerDeathKillsTheCallsProcessGroup) {
  options_.size = 1;
  StartPool();
  SayHello(100, /*namespaces=*/false);
  pool_->Submit(Call("ex_1"));
  v1::Envelope started = NewEnvelope();
  started.mutable_tool_progress()->set_execution_id("ex_1");
  started.mutable_tool_progress()->set_started_pgid(4242);
  transport_.inbox.push_back({IdOf(100), started});
  Poll();
  launcher_.Exit(100, SIGKILL);
  Poll();
  EXPECT_EQ(launcher_.orphaned_groups_killed, std::vector<pid_t>{4242});
}

TEST_F(WorkerPoolTest, SandboxedWorkerDeathLeavesPidsOfItsNamespaceAlone) {
  options_.size = 1;
  StartPool();
  SayHello(100, /*namespaces=*/true);
  pool_->Submit(Call("ex_1"));
  v1::Envelope started = NewEnvelope();
  started.mutable_tool_progress()->set_execution_id("ex_1");
  started.mutable_tool_progress()->set_started_pgid(2);  // a pid inside its namespace
  transport_.inbox.push_back({IdOf(100), started});
  Poll();
  launcher_.Exit(100, SIGKILL);
  Poll();
  EXPECT_TRUE(launcher_.orphaned_groups_killed.empty());
}

TEST_F(WorkerPoolTest, ProtocolViolationKillsTheWorker) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1"));
  SayResult(100, "ex_somebody_else", 0);
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
  EXPECT_TRUE(listener_.results.empty());
  launcher_.Exit(100, SIGKILL);
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_NE(listener_.results[0].error().message().find("protocol violation"), std::string::npos);
}

TEST_F(WorkerPoolTest, UnparseableMessageIsAProtocolViolation) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  transport_.inbox.push_back({IdOf(100), v1::Envelope()});  // version 0
  Poll();
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
}

TEST_F(WorkerPoolTest, SandboxSetupFailureStopsRespawningAndFailsCalls) {
  options_.size = 1;
  // The launcher's own words, as the runtime finds them in the workers' log.
  options_.describe_setup_failure = [] { return std::string("sandbox required but unavailable: bwrap not found"); };
  StartPool();
  pool_->Submit(Call("ex_1"));
  launcher_.Exit(100, kSandboxSetupFailedExit << 8);
  Poll();
  EXPECT_FALSE(pool_->health().ok());
  EXPECT_EQ(pool_->health().message(),
            "the sandbox could not be set up: sandbox required but unavailable: bwrap not found (odin doctor shows "
            "every layer)");
  EXPECT_EQ(launcher_.launched.size(), 1u);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].exit_reason(), v1::EXIT_REASON_SANDBOX_SETUP_FAILED);
  pool_->Submit(Call("ex_2"));
  EXPECT_EQ(listener_.results.size(), 2u);
}

TEST_F(WorkerPoolTest, RepeatedDeathsBeforeHelloGiveUp) {
  options_.size = 1;
  options_.max_start_failures = 3;
  StartPool();
  for (pid_t pid = 100; pid < 103; ++pid) {
    launcher_.Exit(pid, 1 << 8);
    Poll();
  }
  EXPECT_EQ(pool_->health().code(), StatusCode::kUnavailable);
  EXPECT_EQ(launcher_.launched.size(), 3u);
}

TEST_F(WorkerPoolTest, NoHelloWithinStartTimeoutIsKilled) {
  options_.size = 1;
  StartPool();
  clock_.Advance(seconds(10) - milliseconds(1));
  Poll();
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 0);
  clock_.Advance(milliseconds(1));
  Poll();
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
}

TEST_F(WorkerPoolTest, RefusedDispatchIsNeverSent) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  listener_.dispatch_status = Status::IOError("ledger", "disk full");
  pool_->Submit(Call("ex_1"));
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kToolRequest), 0);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_ERROR);
  EXPECT_EQ(listener_.results[0].error().message(), "ledger: disk full");
}

TEST_F(WorkerPoolTest, CancelOfQueuedCallEndsItAtOnce) {
  options_.size = 1;
  StartPool();
  pool_->Submit(Call("ex_1"));
  pool_->Cancel("ex_1", v1::CANCEL_REASON_USER);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CANCELLED);
  EXPECT_EQ(pool_->pending(), 0u);
}

TEST_F(WorkerPoolTest, WorkerThatHangsBeforeHelloCountsAsAStartFailure) {
  options_.size = 1;
  options_.max_start_failures = 2;
  StartPool();
  for (pid_t pid = 100; pid < 102; ++pid) {
    clock_.Advance(seconds(10));
    Poll();
    EXPECT_EQ(launcher_.SignalsTo(pid, SIGTERM), 1);
    launcher_.Exit(pid, SIGTERM);
    Poll();
  }
  EXPECT_EQ(pool_->health().code(), StatusCode::kUnavailable);
  EXPECT_EQ(launcher_.launched.size(), 2u);
}

TEST_F(WorkerPoolTest, ResultThatCrossesTheSigtermIsKeptAndTheWorkerStillGoes) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1", seconds(1)));
  clock_.Advance(seconds(1));
  SayHeartbeat(100);  // Cancel sent
  clock_.Advance(seconds(3));
  SayHeartbeat(100);  // SIGTERM sent
  ASSERT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
  SayResult(100, "ex_1", 0);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_OK);
  // It is not given the next call; it is on its way out.
  pool_->Submit(Call("ex_2"));
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kToolRequest), 1);
  launcher_.Exit(100, SIGTERM);
  Poll();
  EXPECT_EQ(listener_.results.size(), 1u);  // no second result for ex_1
  SayHello(101);
  EXPECT_EQ(WorkerOf("ex_2"), 101);
}

TEST_F(WorkerPoolTest, HeartbeatsGoOutWhileAStreamKeepsThePoolBusy) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1"));
  // Output keeps arriving; time passes while the pool drains it.
  for (int i = 0; i < 20; ++i) {
    v1::Envelope e = NewEnvelope();
    e.mutable_tool_progress()->set_execution_id("ex_1");
    e.mutable_tool_progress()->mutable_output()->set_data("chunk");
    transport_.inbox.push_back({IdOf(100), e});
  }
  listener_.on_progress = [this] { clock_.Advance(milliseconds(100)); };
  Poll();  // one Poll drains all 20 chunks: 2 s of "time"
  EXPECT_GE(transport_.Count(IdOf(100), v1::Envelope::kHeartbeat), 3);
}

TEST_F(WorkerPoolTest, CallsOnlyReachWorkersOfTheirSandboxPolicy) {
  options_.size = 1;
  StartPool();  // writable workers first
  SayHello(100);
  WorkerRequest ask = Call("ex_ask");
  ask.policy = WorkerPolicy::kReadonly;
  pool_->Submit(ask);
  // A read-only worker is spawned for it; the idle writable one is not used.
  ASSERT_EQ(launcher_.launched.size(), 2u);
  EXPECT_EQ(launcher_.launched[1].back(), "--readonly");
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kToolRequest), 0);
  // A writable call does not wait behind it.
  pool_->Submit(Call("ex_edit"));
  EXPECT_EQ(WorkerOf("ex_edit"), 100);
  SayHello(101);
  EXPECT_EQ(WorkerOf("ex_ask"), 101);
  // A dead worker is replaced with one of its own policy.
  launcher_.Exit(101, SIGKILL);
  Poll();
  EXPECT_EQ(launcher_.launched.back().back(), "--readonly");
}

TEST_F(WorkerPoolTest, ACallWhosePolicyCannotStartEndsAtOnce) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  launcher_.fail_launches = true;
  WorkerRequest ask = Call("ex_ask");
  ask.policy = WorkerPolicy::kReadonly;
  pool_->Submit(ask);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_EQ(pool_->pending(), 0u);
}

TEST_F(WorkerPoolTest, TheLspHostIsOneWorkerOfItsOwnAndTakesOnlyItsCalls) {
  options_.size = 2;
  StartPool();
  SayHello(100);
  SayHello(101);
  WorkerRequest check = Call("ex_check");
  check.tool = "lsp_check";
  check.policy = WorkerPolicy::kLspHost;
  auto input = std::make_shared<v1::ToolRequest>();
  input->mutable_validation()->set_path("/ws");
  check.typed = std::move(input);
  pool_->Submit(check);
  WorkerRequest second = Call("ex_check2");
  second.policy = WorkerPolicy::kLspHost;
  pool_->Submit(second);
  // One host, however many tool workers there are; the idle tool workers do
  // not take its calls.
  ASSERT_EQ(launcher_.launched.size(), 3u);
  EXPECT_EQ(launcher_.launched[2][0], "odin-lsp-host");
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kToolRequest), 0);
  SayHello(102);
  EXPECT_EQ(WorkerOf("ex_check"), 102);
  const v1::ToolRequest& req = transport_.sent.back().second.tool_request();
  EXPECT_EQ(req.validation().path(), "/ws");
  // The second waits for the host, even with tool workers idle.
  EXPECT_EQ(transport_.Count(IdOf(102), v1::Envelope::kToolRequest), 1);
}

TEST_F(WorkerPoolTest, EachMcpServerHasAWorkerOfItsOwnThatTakesOnlyItsCalls) {
  options_.size = 2;
  options_.max_start_failures = 1;
  StartPool();
  SayHello(100);
  SayHello(101);
  WorkerRequest a = Call("ex_a");
  a.tool = "mcp__alpha__x";
  a.policy = WorkerPolicy::kMcpReadonly;
  a.lane = "alpha";
  WorkerRequest b = a;
  b.execution_id = "ex_b";
  b.tool = "mcp__beta__x";
  b.lane = "beta";
  WorkerRequest a2 = a;
  a2.execution_id = "ex_a2";
  pool_->Submit(a);
  pool_->Submit(b);
  pool_->Submit(a2);
  // One worker per server, told which server it hosts.
  ASSERT_EQ(launcher_.launched.size(), 4u);
  EXPECT_EQ(launcher_.launched[2], (std::vector<std::string>{"odin-mcp-worker", "alpha"}));
  EXPECT_EQ(launcher_.launched[3], (std::vector<std::string>{"odin-mcp-worker", "beta"}));
  SayHello(103);
  EXPECT_EQ(WorkerOf("ex_b"), 103);
  EXPECT_EQ(transport_.Count(IdOf(103), v1::Envelope::kToolRequest), 1);
  // beta's worker is busy, but alpha's calls wait for alpha's own.
  SayHello(102);
  EXPECT_EQ(WorkerOf("ex_a"), 102);
  EXPECT_EQ(transport_.Count(IdOf(102), v1::Envelope::kToolRequest), 1);
  // A server whose worker cannot start fails its own calls only.
  launcher_.Exit(103, 1 << 8);
  Poll();
  WorkerRequest c = b;
  c.execution_id = "ex_c";
  for (pid_t pid = 104; pid < 106; ++pid) {
    launcher_.Exit(pid, 1 << 8);
    Poll();
  }
  EXPECT_FALSE(pool_->health(WorkerPolicy::kMcpReadonly, "beta").ok());
  EXPECT_TRUE(pool_->health(WorkerPolicy::kMcpReadonly, "alpha").ok());
  size_t before = listener_.results.size();
  pool_->Submit(c);
  ASSERT_EQ(listener_.results.size(), before + 1);
  EXPECT_EQ(listener_.results.back().execution_id(), "ex_c");
  EXPECT_EQ(listener_.results.back().status(), v1::TOOL_STATUS_CRASHED);
}

// An MCP worker tells of its server's new listing unasked, between calls
// too; from any other worker such a message is a protocol violation.
TEST_F(WorkerPoolTest, OnlyAnMcpWorkerMayTellOfANewListing) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  WorkerRequest a = Call("ex_a");
  a.tool = "mcp__alpha__x";
  a.policy = WorkerPolicy::kMcpReadonly;
  a.lane = "alpha";
  pool_->Submit(a);
  SayHello(101);
  ASSERT_EQ(WorkerOf("ex_a"), 101);
  SayResult(101, "ex_a", 0);
  auto listing = [this](pid_t pid) {
    v1::Envelope e = NewEnvelope();
    e.mutable_mcp_listing()->set_output_json("{\"tools\":[]}");
    transport_.inbox.push_back({IdOf(pid), e});
    Poll();
  };
  listing(101);  // idle: it holds no call
  EXPECT_EQ(listener_.listings, std::vector<std::string>{"alpha {\"tools\":[]}"});
  EXPECT_EQ(launcher_.SignalsTo(101, SIGTERM), 0);
  listing(100);  // a tool worker
  EXPECT_EQ(listener_.listings.size(), 1u);
  EXPECT_EQ(launcher_.SignalsTo(100, SIGTERM), 1);
}

// An MCP server's worker that only reads takes up to its lane's
// concurrency of calls at once, each with its own deadline and result; one
// that may write the workspace takes one at a time whatever the call says.
TEST_F(WorkerPoolTest, AnMcpWorkerThatOnlyReadsTakesItsLanesConcurrencyOfCallsAtOnce) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  auto call = [this](const std::string& id, WorkerPolicy policy, const std::string& lane, Duration timeout) {
    WorkerRequest c = Call(id, timeout);
    c.tool = "mcp__" + lane + "__x";
    c.policy = policy;
    c.lane = lane;
    c.lane_concurrency = 2;
    return c;
  };
  pool_->Submit(call("ex_a", WorkerPolicy::kMcpReadonly, "alpha", seconds(5)));
  pool_->Submit(call("ex_b", WorkerPolicy::kMcpReadonly, "alpha", seconds(30)));
  pool_->Submit(call("ex_c", WorkerPolicy::kMcpReadonly, "alpha", Duration::zero()));
  SayHello(101);
  std::string alpha = IdOf(101);
  EXPECT_EQ(transport_.Count(alpha, v1::Envelope::kToolRequest), 2);  // a and b; c waits for room
  EXPECT_EQ(pool_->pending(), 3u);
  // a's deadline passes: only a is cancelled.
  clock_.Advance(seconds(5));
  SayHeartbeat(101);
  ASSERT_EQ(transport_.Count(alpha, v1::Envelope::kCancel), 1);
  EXPECT_EQ(transport_.LastOf(alpha, v1::Envelope::kCancel).cancel().execution_id(), "ex_a");
  // While a is being cancelled the worker takes no more.
  SayResult(101, "ex_b", 0);
  EXPECT_EQ(transport_.Count(alpha, v1::Envelope::kToolRequest), 2);
  SayResult(101, "ex_a", 1);
  EXPECT_EQ(transport_.Count(alpha, v1::Envelope::kToolRequest), 3);
  ASSERT_EQ(listener_.results.size(), 2u);
  EXPECT_EQ(listener_.results[0].execution_id(), "ex_b");
  EXPECT_EQ(listener_.results[1].execution_id(), "ex_a");
  // A result for a call it does not hold is still a protocol violation.
  SayResult(101, "ex_b", 0);
  EXPECT_EQ(launcher_.SignalsTo(101, SIGTERM), 1);

  // A writable server's worker: one call at a time.
  pool_->Submit(call("ex_w1", WorkerPolicy::kMcpWritable, "beta", Duration::zero()));
  pool_->Submit(call("ex_w2", WorkerPolicy::kMcpWritable, "beta", Duration::zero()));
  pid_t beta = 0;
  for (const auto& w : pool_->workers()) {
    if (w.lane == "beta") beta = w.pid;
  }
  ASSERT_NE(beta, 0);
  SayHello(beta);
  EXPECT_EQ(transport_.Count(IdOf(beta), v1::Envelope::kToolRequest), 1);
  SayResult(beta, "ex_w1", 0);
  EXPECT_EQ(transport_.Count(IdOf(beta), v1::Envelope::kToolRequest), 2);
}

TEST_F(WorkerPoolTest, AnLspHostThatCannotStartFailsOnlyItsOwnCalls) {
  options_.size = 1;
  options_.max_start_failures = 2;
  StartPool();
  SayHello(100);
  WorkerRequest check = Call("ex_check");
  check.policy = WorkerPolicy::kLspHost;
  pool_->Submit(check);
  for (pid_t pid = 101; pid < 103; ++pid) {
    launcher_.Exit(pid, 1 << 8);
    Poll();
  }
  EXPECT_EQ(pool_->health(WorkerPolicy::kLspHost).code(), StatusCode::kUnavailable);
  EXPECT_NE(pool_->health(WorkerPolicy::kLspHost).message().find("lsp host"), std::string::npos);
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  // Tool calls still run.
  EXPECT_TRUE(pool_->health().ok());
  pool_->Submit(Call("ex_tool"));
  EXPECT_EQ(WorkerOf("ex_tool"), 100);
}

TEST_F(WorkerPoolTest, SendsHeartbeatsEveryInterval) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  clock_.Advance(milliseconds(499));
  Poll();
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kHeartbeat), 0);
  clock_.Advance(milliseconds(1));
  Poll();
  EXPECT_EQ(transport_.Count(IdOf(100), v1::Envelope::kHeartbeat), 1);
}

TEST_F(WorkerPoolTest, ShutdownEndsHeldCallsAndKillsWorkers) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  pool_->Submit(Call("ex_1"));
  pool_->Submit(Call("ex_2"));
  std::string id = IdOf(100);
  pool_->Shutdown(Duration::zero());
  EXPECT_EQ(transport_.Count(id, v1::Envelope::kShutdown), 1);
  EXPECT_EQ(launcher_.SignalsTo(100, SIGKILL), 1);
  ASSERT_EQ(listener_.results.size(), 2u);
  for (const auto& r : listener_.results) EXPECT_EQ(r.status(), v1::TOOL_STATUS_CANCELLED);
}

TEST_F(WorkerPoolTest, ShutdownRunsMeanwhileOnceTheWorkersWereToldAndBeforeKillingThem) {
  options_.size = 1;
  StartPool();
  SayHello(100);
  std::string id = IdOf(100);
  int runs = 0;
  pool_->Shutdown(Duration::zero(), [&] {
    ++runs;
    EXPECT_EQ(transport_.Count(id, v1::Envelope::kShutdown), 1);
    EXPECT_EQ(launcher_.SignalsTo(100, SIGKILL), 0);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(launcher_.SignalsTo(100, SIGKILL), 1);
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

class RemoteWorkerPoolTest : public WorkerPoolTest {
 protected:
  // The pool goes first: it still signals its hosts as it shuts down.
  void TearDown() override { pool_.reset(); }

  void StartRemotePool() {
    options_.size = 1;
    options_.hosts = &hosts_;
    StartPool();
    ASSERT_EQ(hosts_.spawned.size(), 1u);
    ASSERT_TRUE(launcher_.launched.empty()) << "the worker went to the host";
    id_ = hosts_.spawned[0];
    SayHelloThroughHost(id_);
    Poll();
    ASSERT_EQ(listener_.ready.size(), 1u);
  }

  // A worker on the host says Hello, relayed by it.
  void SayHelloThroughHost(const std::string& id) {
    v1::Envelope hello = NewEnvelope();
    hello.mutable_hello()->set_worker_id(id);
    hello.mutable_hello()->set_secret(hosts_.secrets[id]);
    hello.mutable_hello()->set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    hello.mutable_hello()->mutable_sandbox()->set_namespaces(true);
    hosts_.events.push_back({id, false, false, hello.SerializeAsString(), 0, ""});
  }

  // A pool whose work belongs on hosts, who come for calls that wait up
  // to 30 s.
  void StartHostsFirstPool() {
    options_.size = 1;
    options_.hosts = &hosts_;
    options_.hosts_first = seconds(30);
    StartPool();
  }

  // The call gets the worker started here (pid 100) once it says Hello.
  void ExpectTheLocalWorkerTakes(const std::string& execution_id) {
    SayHello(100);
    Poll();
    EXPECT_EQ(WorkerOf(execution_id), 100);
  }

  FakeHosts hosts_;
  std::string id_;
};

TEST_F(RemoteWorkerPoolTest, AWorkerItsHostNeverEndsAfterSigkillGivesTheHostUp) {
  StartRemotePool();
  pool_->Submit(Call("ex_1"));
  ASSERT_EQ(listener_.dispatched.size(), 1u);
  // It falls silent: SIGTERM, then SIGKILL, both through its host.
  clock_.Advance(milliseconds(1500));
  Poll();
  EXPECT_EQ(hosts_.SignalsTo(id_, SIGTERM), 1);
  clock_.Advance(seconds(1));
  Poll();
  EXPECT_EQ(hosts_.SignalsTo(id_, SIGKILL), 1);
  // The host never says the worker ended. Within liveness plus the grace
  // period it still may; past that, the host is given up.
  clock_.Advance(milliseconds(2499));
  Poll();
  EXPECT_TRUE(hosts_.dropped.empty());
  clock_.Advance(milliseconds(1));
  Poll();
  ASSERT_EQ(hosts_.dropped.size(), 1u);
  EXPECT_NE(hosts_.dropped[0].find("did not end worker " + id_ + " after SIGKILL"), std::string::npos)
      << hosts_.dropped[0];
  EXPECT_TRUE(listener_.results.empty()) << "the call ends when the host's workers do, not before";
  clock_.Advance(seconds(10));
  Poll();
  EXPECT_EQ(hosts_.dropped.size(), 1u) << "given up once";
  // The host's loss ends the worker: the call is crashed and a new worker starts.
  hosts_.events.push_back({id_, true, false, "", SIGKILL, "its host h was lost"});
  Poll();
  ASSERT_EQ(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_EQ(hosts_.spawned.size(), 2u);
}

TEST_F(RemoteWorkerPoolTest, AWorkerOfALostHostTakesNoMoreWorkAndItsCallCrashesWhenItEnds) {
  StartRemotePool();
  pool_->Submit(Call("ex_1"));
  ASSERT_EQ(listener_.dispatched.size(), 1u);
  hosts_.full = true;  // its replacement, when it comes, starts here
  hosts_.events.push_back({id_, false, true, "", 0, "its host h was lost (silent for 3 heartbeat intervals)"});
  Poll();
  EXPECT_TRUE(listener_.results.empty()) << "not before the host has had the time to kill the command";
  // A result the lost host's connection still carried is not taken.
  v1::Envelope late = NewEnvelope();
  late.mutable_tool_result()->set_execution_id("ex_1");
  late.mutable_tool_result()->set_status(v1::TOOL_STATUS_OK);
  hosts_.events.push_back({id_, false, false, late.SerializeAsString(), 0, ""});
  Poll();
  EXPECT_TRUE(listener_.results.empty());
  pool_->Submit(Call("ex_2"));
  EXPECT_EQ(listener_.dispatched.size(), 1u) << "a stopping worker gets no new call";
  hosts_.events.push_back({id_, true, false, "", SIGKILL, "its host h was lost"});
  Poll();
  ASSERT_GE(listener_.results.size(), 1u);
  EXPECT_EQ(listener_.results[0].execution_id(), "ex_1");
  EXPECT_EQ(listener_.results[0].status(), v1::TOOL_STATUS_CRASHED);
  EXPECT_NE(listener_.results[0].error().message().find("its host h was lost"), std::string::npos)
      << listener_.results[0].error().message();
  EXPECT_EQ(launcher_.launched.size(), 1u) << "replaced on this machine";
}

TEST_F(RemoteWorkerPoolTest, CallsThatWaitGetWorkersOnHostsWhichRetireWhenIdle) {
  options_.size = 1;
  options_.surplus_idle = seconds(5);
  options_.hosts = &hosts_;
  hosts_.full = true;  // no host has room yet: the pool's own worker starts here
  StartPool();
  ASSERT_EQ(launcher_.launched.size(), 1u);
  SayHello(100);
  for (const char* id : {"ex_1", "ex_2", "ex_3"}) pool_->Submit(Call(id));
  Poll();
  EXPECT_EQ(WorkerOf("ex_1"), 100);
  EXPECT_EQ(hosts_.demand, 2u) << "two calls wait, and no host has room: a launcher may start hosts";
  EXPECT_TRUE(hosts_.spawned.empty());
  // A host with room: a worker there for each waiting call, no more.
  hosts_.full = false;
  Poll();
  ASSERT_EQ(hosts_.spawned.size(), 2u);
  EXPECT_EQ(hosts_.demand, 0u);
  Poll();
  EXPECT_EQ(hosts_.spawned.size(), 2u) << "the workers on their way are counted";
  for (const std::string& id : hosts_.spawned) SayHelloThroughHost(id);
  Poll();
  std::set<std::string> took;
  for (const auto& [execution, worker] : listener_.dispatched) took.insert(worker);
  EXPECT_EQ(took.size(), 3u) << "each call on a worker of its own";
  for (const auto& [worker, env] : hosts_.sent) {
    if (!env.has_tool_request()) continue;
    v1::Envelope done = NewEnvelope();
    done.mutable_tool_result()->set_execution_id(env.tool_request().execution_id());
    done.mutable_tool_result()->set_status(v1::TOOL_STATUS_OK);
    hosts_.events.push_back({worker, false, false, done.SerializeAsString(), 0, ""});
  }
  Poll();
  EXPECT_EQ(listener_.results.size(), 2u);
  // Idle for surplus_idle: they are told to shut down, and not replaced.
  clock_.Advance(milliseconds(4999));
  for (const std::string& id : hosts_.spawned) {
    v1::Envelope hb = NewEnvelope();
    hb.mutable_heartbeat();
    hosts_.events.push_back({id, false, false, hb.SerializeAsString(), 0, ""});
  }
  SayHeartbeat(100);
  auto shutdowns = [&] {
    int n = 0;
    for (const auto& [worker, env] : hosts_.sent) n += env.has_shutdown();
    return n;
  };
  EXPECT_EQ(shutdowns(), 0);
  clock_.Advance(milliseconds(1));
  Poll();
  EXPECT_EQ(shutdowns(), 2);
  for (const std::string& id : hosts_.spawned) hosts_.events.push_back({id, true, false, "", 0, ""});
  Poll();
  EXPECT_EQ(hosts_.spawned.size(), 2u);
  EXPECT_EQ(launcher_.launched.size(), 1u);
  EXPECT_EQ(pool_->workers().size(), 1u) << "the pool's own worker stays";
}

}  // namespace
// A pool whose work belongs on hosts (an attempt beyond this machine's
// share) starts no worker of its own for kinds hosts take: its call waits
// and is demand for a host; when none comes within hosts_first, one of its
// own starts here after all.
TEST_F(RemoteWorkerPoolTest, APoolWhoseWorkBelongsOnHostsWaitsForOneAndThenStartsItsOwn) {
  hosts_.full = true;  // no host yet: a launcher's is on its way
  StartHostsFirstPool();
  EXPECT_TRUE(launcher_.launched.empty()) << "a worker started here";
  EXPECT_TRUE(hosts_.spawned.empty());
  pool_->Submit(Call("ex_1"));
  Poll();
  EXPECT_EQ(hosts_.demand, 1u) << "the call is demand for a host";
  EXPECT_TRUE(launcher_.launched.empty());
  clock_.Advance(seconds(29));
  Poll();
  EXPECT_TRUE(launcher_.launched.empty()) << "gave up on the hosts too soon";
  clock_.Advance(seconds(1));
  Poll();
  ASSERT_EQ(launcher_.launched.size(), 1u) << "no worker of its own after hosts_first";
  ExpectTheLocalWorkerTakes("ex_1");
}

// ... also when a host's worker is on its way but never comes through.
TEST_F(RemoteWorkerPoolTest, APoolWhoseWorkBelongsOnHostsDoesNotWaitForeverOnAHostsWorker) {
  StartHostsFirstPool();
  pool_->Submit(Call("ex_1"));
  Poll();
  ASSERT_EQ(hosts_.spawned.size(), 1u) << "no worker asked of the host";
  hosts_.full = true;          // and no room for another
  clock_.Advance(seconds(9));  // under start_timeout: still on its way, silent
  Poll();
  EXPECT_TRUE(launcher_.launched.empty());
  clock_.Advance(seconds(21));
  Poll();
  ASSERT_EQ(launcher_.launched.size(), 1u) << "the call still waits on the host";
  ExpectTheLocalWorkerTakes("ex_1");
}

// ... and a host that comes in time takes the call.
TEST_F(RemoteWorkerPoolTest, APoolWhoseWorkBelongsOnHostsTakesTheHostThatComes) {
  hosts_.full = true;
  StartHostsFirstPool();
  pool_->Submit(Call("ex_1"));
  Poll();
  hosts_.full = false;  // a host joined
  Poll();
  ASSERT_EQ(hosts_.spawned.size(), 1u);
  SayHelloThroughHost(hosts_.spawned[0]);
  clock_.Advance(seconds(40));
  Poll();
  EXPECT_TRUE(launcher_.launched.empty()) << "started one here with a host's on its way";
  ASSERT_EQ(listener_.dispatched.size(), 1u);
  EXPECT_EQ(listener_.dispatched[0].second, hosts_.spawned[0]);
}

}  // namespace odin
