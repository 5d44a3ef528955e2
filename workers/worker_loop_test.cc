#include "workers/worker_loop.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "workers/fake_coordinator.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Body = v1::Envelope::BodyCase;

constexpr char kWorkerId[] = "w-7";

// A worker that records what the loop asks of it. It answers a ToolRequest
// with a ToolResult of the same execution id, and on its own fd or timer
// with a ToolResult named "fd" or "timer", so the coordinator sees when it
// ran. Fields are read by the test only after the loop's thread has ended.
class RecordingWorker : public WorkerLogic {
 public:
  void Attach(WorkerChannel* channel) override {
    channel_ = channel;
    ++attached;
  }
  void Handle(const v1::Envelope& env) override {
    handled.push_back(env.body_case());
    if (env.has_tool_request()) Answer(env.tool_request().execution_id());
  }
  void AddWatchFds(std::vector<PollFd>* fds) override {
    if (watch_fd >= 0) fds->push_back({watch_fd});
  }
  SteadyTime NextTimer() const override {
    if (always_due) return clock->Now();
    return timer && !timer_fired ? *timer : SteadyTime::max();
  }
  void Service() override {
    ++services;
    if (advance_per_service > Duration::zero()) static_cast<FakeClock*>(clock)->Advance(advance_per_service);
    char c;
    if (watch_fd >= 0 && read(watch_fd, &c, 1) == 1) Answer("fd");
    if (timer && !timer_fired && clock->Now() >= *timer) {
      timer_fired = true;
      Answer("timer");
    }
  }
  void Stop() override { ++stopped; }

  // Set up before the loop starts.
  Clock* clock = RealClock::Get();  // the loop's
  int watch_fd = -1;                // non-blocking
  std::optional<SteadyTime> timer;  // fires once
  bool always_due = false;          // every turn is due at once
  Duration advance_per_service{};   // REQUIRES: clock is a FakeClock

  // What happened.
  int attached = 0;
  int stopped = 0;
  int services = 0;
  bool timer_fired = false;
  std::vector<Body> handled;

 private:
  void Answer(const std::string& execution_id) {
    v1::ToolResult r;
    r.set_execution_id(execution_id);
    channel_->QueueResult(std::move(r));
  }

  WorkerChannel* channel_ = nullptr;
};

// Runs the loop in a thread of its own, as a worker process's main thread
// would (it blocks SIGTERM and SIGINT there), with the test as the
// coordinator. Heartbeats are an hour apart unless a test says otherwise:
// whatever wakes the loop sooner is the event under test. The worker is the
// fixture's, so it outlives the loop's thread whatever a test does.
class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(coordinator_.ok());
    options_.endpoint = coordinator_.endpoint();
    options_.worker_id = kWorkerId;
    options_.secret = "s3cret";
    options_.workspace = "/";
    options_.sandbox_description = "none: a unit test";
    options_.heartbeat_interval = std::chrono::hours(1);
    options_.liveness = 3;
  }
  void TearDown() override {
    if (loop_.joinable()) {
      Shutdown();
      Join();
    }
  }

  void Start() {
    loop_ = std::thread([this] {
      WorkerHello hello{v1::WORKER_KIND_TOOL, {"ExecuteCommand", "Read"}};
      exit_code_ = RunWorkerLoop(options_, hello, worker_.clock, &worker_);
    });
  }
  // Waits for the worker's Hello; after it, the loop's thread blocks SIGTERM.
  void AwaitHello() {
    std::optional<v1::Envelope> hello = coordinator_.Receive();
    ASSERT_TRUE(hello && hello->has_hello()) << "no Hello";
  }
  void Send(v1::Envelope env) {
    Status s = coordinator_.Send(kWorkerId, std::move(env));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Shutdown() {
    v1::Envelope env;
    env.mutable_shutdown();
    Send(env);
  }
  void Join() { loop_.join(); }
  // The execution id of the next ToolResult the worker sends.
  std::string NextResult() {
    std::optional<v1::Envelope> env = coordinator_.ReceiveSkippingHeartbeats();
    if (!env || !env->has_tool_result()) return "(none)";
    return env->tool_result().execution_id();
  }

  testing::FakeCoordinator coordinator_;
  WorkerOptions options_;
  FakeClock fake_clock_;
  RecordingWorker worker_;
  std::thread loop_;
  int exit_code_ = -1;
};

TEST_F(WorkerLoopTest, SaysHelloWithTheWorkersKindCapabilitiesAndCredentials) {
  Start();
  std::optional<v1::Envelope> env = coordinator_.Receive();
  ASSERT_TRUE(env && env->has_hello());
  EXPECT_EQ(coordinator_.last_peer(), kWorkerId);
  EXPECT_EQ(env->hello().worker_id(), kWorkerId);
  EXPECT_EQ(env->hello().secret(), "s3cret");
  EXPECT_EQ(env->hello().kind(), v1::WORKER_KIND_TOOL);
  EXPECT_THAT(env->hello().capabilities(), ElementsAre("ExecuteCommand", "Read"));
  EXPECT_EQ(env->hello().sandbox().description(), "none: a unit test");
}

TEST_F(WorkerLoopTest, ShutdownEndsTheLoopAndStopsTheWorker) {
  Start();
  AwaitHello();
  Shutdown();
  Join();
  EXPECT_EQ(exit_code_, 0);
  EXPECT_EQ(worker_.attached, 1);
  EXPECT_EQ(worker_.stopped, 1);
  EXPECT_THAT(worker_.handled, IsEmpty());  // Shutdown is the loop's
}

TEST_F(WorkerLoopTest, HandsMessagesToTheWorkerButNotHeartbeats) {
  Start();
  AwaitHello();
  v1::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  Send(heartbeat);
  v1::Envelope request;
  request.mutable_tool_request()->set_execution_id("ex-1");
  Send(request);
  EXPECT_EQ(NextResult(), "ex-1");  // queued by the worker, sent by the loop
  Shutdown();
  Join();
  EXPECT_THAT(worker_.handled, ElementsAre(Body::kToolRequest));
}

TEST_F(WorkerLoopTest, WakesWhenTheWorkersFdIsReady) {
  StatusOr<Pipe> pipe = MakePipe(O_CLOEXEC | O_NONBLOCK);
  ASSERT_TRUE(pipe.ok());
  worker_.watch_fd = pipe->read_end.get();
  Start();
  AwaitHello();
  ASSERT_EQ(write(pipe->write_end.get(), "x", 1), 1);
  EXPECT_EQ(NextResult(), "fd");
  Shutdown();
  Join();  // before the pipe closes
}

TEST_F(WorkerLoopTest, WakesAtTheWorkersTimer) {
  worker_.timer = RealClock::Get()->Now() + milliseconds(1);
  Start();
  AwaitHello();
  EXPECT_EQ(NextResult(), "timer");
}

TEST_F(WorkerLoopTest, SigtermEndsTheLoopAndStopsTheWorker) {
  Start();
  AwaitHello();
  // To the loop's thread, which has SIGTERM blocked by now: the signalfd
  // reports it, and no other thread of the test process sees it.
  ASSERT_EQ(pthread_kill(loop_.native_handle(), SIGTERM), 0);
  Join();
  EXPECT_EQ(exit_code_, 0);
  EXPECT_EQ(worker_.stopped, 1);
}

TEST_F(WorkerLoopTest, EndsWhenTheCoordinatorHasBeenSilentForTheLivenessWindow) {
  // On a fake clock that each service advances by 1 ms, with every turn due
  // at once: the turns at 0..1499 ms go on, the one at 1500 ms ends the loop.
  worker_.clock = &fake_clock_;
  worker_.always_due = true;
  worker_.advance_per_service = milliseconds(1);
  options_.heartbeat_interval = milliseconds(500);
  options_.liveness = 3;
  Start();
  Join();
  EXPECT_EQ(exit_code_, 0);
  EXPECT_EQ(worker_.services, 1500);
  EXPECT_EQ(worker_.stopped, 1);
}

TEST_F(WorkerLoopTest, AWorkerThatCannotConnectExitsWithOneAndStartsNothing) {
  options_.endpoint = "not an endpoint";
  Start();
  Join();
  EXPECT_EQ(exit_code_, 1);
  EXPECT_EQ(worker_.attached, 0);
  EXPECT_EQ(worker_.stopped, 0);
}

}  // namespace
}  // namespace odin
