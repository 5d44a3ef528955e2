#include "workers/worker_channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "workers/fake_coordinator.h"

namespace odin {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Body = v1::Envelope::BodyCase;

constexpr char kWorkerId[] = "w-1";

// A channel on a fake clock, heartbeat every 500 ms, liveness 3 (the
// coordinator is presumed gone after 1500 ms of silence), connected to a
// real ROUTER. Only the clock decides when heartbeats are due and when the
// coordinator counts as silent; real time only bounds the waits for messages.
class WorkerChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(coordinator_.ok());
    start_ = clock_.Now();
    StatusOr<std::unique_ptr<WorkerChannel>> channel =
        WorkerChannel::Connect({coordinator_.endpoint(), kWorkerId, "s3cret", milliseconds(500), 3}, &clock_);
    ASSERT_TRUE(channel.ok()) << channel.status().ToString();
    channel_ = std::move(*channel);
  }

  // Queues a marker, flushes, and returns what the coordinator received
  // before it: messages arrive in order, so this is exactly what the channel
  // had sent since the last call.
  std::vector<Body> SentBeforeMarker() {
    v1::Envelope marker;
    marker.mutable_tool_progress()->set_execution_id("marker");
    channel_->Queue(marker);
    channel_->Flush();
    std::vector<Body> sent;
    for (;;) {
      std::optional<v1::Envelope> env = coordinator_.Receive();
      if (!env) {
        ADD_FAILURE() << "the marker never arrived";
        return sent;
      }
      if (env->has_tool_progress() && env->tool_progress().execution_id() == "marker") return sent;
      sent.push_back(env->body_case());
    }
  }

  // The next message from the coordinator, once it has arrived.
  std::optional<v1::Envelope> ReceiveAtWorker() {
    v1::Envelope env;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (channel_->Receive(&env)) return env;
      std::vector<PollFd> none;
      StatusOr<bool> ready = channel_->Wait(clock_.Now() + seconds(30), &none);  // 30 s of real time at most
      if (!ready.ok()) break;
    }
    ADD_FAILURE() << "no message from the coordinator";
    return std::nullopt;
  }

  // Waits until a message from the coordinator is waiting, without taking it.
  void AwaitMessageAtWorker() {
    std::vector<PollFd> none;
    StatusOr<bool> ready = channel_->Wait(clock_.Now() + seconds(30), &none);
    ASSERT_TRUE(ready.ok() && *ready) << "no message from the coordinator";
  }

  // Sends the coordinator's first message once the worker is known to it (a
  // ROUTER drops messages to a peer it has not heard from).
  void SendFromCoordinator(v1::Envelope env) {
    if (!introduced_) {
      EXPECT_THAT(SentBeforeMarker(), IsEmpty());
      introduced_ = true;
    }
    Status s = coordinator_.Send(kWorkerId, std::move(env));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  static v1::Envelope Cancel(const std::string& execution_id) {
    v1::Envelope env;
    env.mutable_cancel()->set_execution_id(execution_id);
    return env;
  }

  testing::FakeCoordinator coordinator_;
  FakeClock clock_;
  SteadyTime start_;
  std::unique_ptr<WorkerChannel> channel_;
  bool introduced_ = false;
};

TEST_F(WorkerChannelTest, HelloCarriesTheWorkersIdSecretKindAndSandbox) {
  channel_->SayHello(v1::WORKER_KIND_TOOL, {"ExecuteCommand", "Read"}, "bwrap");
  channel_->Flush();
  std::optional<v1::Envelope> env = coordinator_.Receive();
  ASSERT_TRUE(env && env->has_hello());
  EXPECT_EQ(coordinator_.last_peer(), kWorkerId);
  EXPECT_EQ(env->protocol_version(), static_cast<uint32_t>(v1::PROTOCOL_VERSION_CURRENT));
  const v1::Hello& h = env->hello();
  EXPECT_EQ(h.worker_id(), kWorkerId);
  EXPECT_EQ(h.secret(), "s3cret");
  EXPECT_EQ(h.kind(), v1::WORKER_KIND_TOOL);
  EXPECT_EQ(h.pid(), getpid());
  EXPECT_EQ(h.protocol_version(), static_cast<uint32_t>(v1::PROTOCOL_VERSION_CURRENT));
  EXPECT_THAT(h.capabilities(), ElementsAre("ExecuteCommand", "Read"));
  EXPECT_TRUE(h.sandbox().namespaces());
  EXPECT_EQ(h.sandbox().description(), "bwrap");
}

TEST_F(WorkerChannelTest, OnlyBubblewrapCountsAsNamespaces) {
  channel_->SayHello(v1::WORKER_KIND_LSP_HOST, {}, "none: not started by odin-sandbox");
  channel_->Flush();
  std::optional<v1::Envelope> env = coordinator_.Receive();
  ASSERT_TRUE(env && env->has_hello());
  EXPECT_FALSE(env->hello().sandbox().namespaces());
  EXPECT_EQ(env->hello().sandbox().description(), "none: not started by odin-sandbox");
}

TEST_F(WorkerChannelTest, QueueSetsTheProtocolVersion) {
  v1::Envelope env = Cancel("x");
  env.set_protocol_version(0);
  channel_->Queue(env);
  channel_->Flush();
  std::optional<v1::Envelope> got = coordinator_.Receive();
  ASSERT_TRUE(got && got->has_cancel());
  EXPECT_EQ(got->protocol_version(), static_cast<uint32_t>(v1::PROTOCOL_VERSION_CURRENT));
}

TEST_F(WorkerChannelTest, HeartbeatIsDueOneIntervalAfterConnecting) {
  clock_.Advance(milliseconds(499));
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), IsEmpty());
  clock_.Advance(milliseconds(1));
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), ElementsAre(Body::kHeartbeat));
}

TEST_F(WorkerChannelTest, EachHeartbeatIsOneIntervalAfterTheLast) {
  clock_.Advance(milliseconds(500));
  channel_->Tick();
  channel_->Tick();  // not due again at the same instant
  EXPECT_THAT(SentBeforeMarker(), ElementsAre(Body::kHeartbeat));
  clock_.Advance(milliseconds(499));
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), IsEmpty());
  clock_.Advance(milliseconds(1));
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), ElementsAre(Body::kHeartbeat));
}

TEST_F(WorkerChannelTest, HeartbeatNowSendsAtOnceAndRestartsTheInterval) {
  clock_.Advance(milliseconds(300));
  channel_->HeartbeatNow();
  EXPECT_THAT(SentBeforeMarker(), ElementsAre(Body::kHeartbeat));
  clock_.Advance(milliseconds(499));  // 799 ms: the one due at 500 was replaced
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), IsEmpty());
  clock_.Advance(milliseconds(1));
  channel_->Tick();
  EXPECT_THAT(SentBeforeMarker(), ElementsAre(Body::kHeartbeat));
}

TEST_F(WorkerChannelTest, CoordinatorIsSilentAfterLivenessIntervalsWithoutAMessage) {
  // Sending heartbeats is not hearing from the coordinator.
  for (int ms = 0; ms < 1499; ++ms) {
    clock_.Advance(milliseconds(1));
    channel_->Tick();
  }
  EXPECT_FALSE(channel_->CoordinatorSilent());
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(channel_->CoordinatorSilent());
}

TEST_F(WorkerChannelTest, NextWakeIsTheNextHeartbeatOrTheEndOfTheWindowWhicheverIsFirst) {
  EXPECT_EQ(channel_->NextWake(), start_ + milliseconds(500));
  clock_.Advance(milliseconds(1000));
  channel_->Tick();
  EXPECT_EQ(channel_->NextWake(), start_ + milliseconds(1500));  // heartbeat at 1500, silent at 1500
  clock_.Advance(milliseconds(200));
  channel_->Tick();
  EXPECT_EQ(channel_->NextWake(), start_ + milliseconds(1500));  // heartbeat at 1500 still
  clock_.Advance(milliseconds(300));
  channel_->Tick();
  EXPECT_EQ(channel_->NextWake(), start_ + milliseconds(1500));  // heartbeat at 2000, silent at 1500
}

TEST_F(WorkerChannelTest, AnyMessageFromTheCoordinatorRestartsTheWindow) {
  clock_.Advance(milliseconds(1000));
  v1::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  SendFromCoordinator(heartbeat);
  std::optional<v1::Envelope> got = ReceiveAtWorker();
  ASSERT_TRUE(got && got->has_heartbeat());
  clock_.Advance(milliseconds(1499));  // 2499 ms: the window runs from the message
  EXPECT_FALSE(channel_->CoordinatorSilent());
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(channel_->CoordinatorSilent());
}

TEST_F(WorkerChannelTest, MalformedMessagesAndOtherProtocolVersionsAreDropped) {
  SendFromCoordinator(Cancel("first"));
  ASSERT_TRUE(coordinator_.SendRaw(kWorkerId, "\x0a\xff").ok());  // a field longer than the message
  v1::Envelope other_version = Cancel("other version");
  other_version.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT + 1);
  ASSERT_TRUE(coordinator_.SendRaw(kWorkerId, other_version.SerializeAsString()).ok());
  v1::Envelope unversioned = Cancel("unversioned");
  ASSERT_TRUE(coordinator_.SendRaw(kWorkerId, unversioned.SerializeAsString()).ok());
  ASSERT_TRUE(coordinator_.Send(kWorkerId, Cancel("last")).ok());

  std::vector<std::string> received;
  while (received.empty() || received.back() != "last") {
    std::optional<v1::Envelope> env = ReceiveAtWorker();
    if (!env) break;
    received.push_back(env->cancel().execution_id());
  }
  EXPECT_THAT(received, ElementsAre("first", "last"));
}

TEST_F(WorkerChannelTest, TurnHandsEveryMessageToHandleInOrder) {
  SendFromCoordinator(Cancel("a"));
  SendFromCoordinator(Cancel("b"));
  std::vector<std::string> handled;
  for (int turn = 0; turn < 100 && handled.size() < 2; ++turn) {
    AwaitMessageAtWorker();
    std::vector<PollFd> none;
    ASSERT_TRUE(channel_->Turn(clock_.Now(), &none,
                               [&](const v1::Envelope& env) { handled.push_back(env.cancel().execution_id()); }));
  }
  EXPECT_THAT(handled, ElementsAre("a", "b"));
}

TEST_F(WorkerChannelTest, TurnSaysExitOnceTheCoordinatorHasBeenSilentForTheWindow) {
  auto ignore = [](const v1::Envelope&) {};
  std::vector<PollFd> none;
  clock_.Advance(milliseconds(1499));
  EXPECT_TRUE(channel_->Turn(clock_.Now(), &none, ignore));
  clock_.Advance(milliseconds(1));
  EXPECT_FALSE(channel_->Turn(clock_.Now(), &none, ignore));
}

TEST_F(WorkerChannelTest, TurnReadsWhatArrivedBeforeJudgingSilence) {
  // The message arrived in time; the turn that reads it comes late (the loop
  // was busy). That is not a silent coordinator.
  SendFromCoordinator(Cancel("in time"));
  AwaitMessageAtWorker();
  clock_.Advance(milliseconds(1500));
  std::vector<PollFd> none;
  int handled = 0;
  EXPECT_TRUE(channel_->Turn(clock_.Now(), &none, [&](const v1::Envelope&) { ++handled; }));
  EXPECT_EQ(handled, 1);
}

TEST_F(WorkerChannelTest, TurnWaitsOnTheWorkersOwnFdsAndMarksTheReadyOnes) {
  StatusOr<Pipe> ready = MakePipe(O_CLOEXEC);
  StatusOr<Pipe> idle = MakePipe(O_CLOEXEC);
  ASSERT_TRUE(ready.ok() && idle.ok());
  ASSERT_EQ(write(ready->write_end.get(), "x", 1), 1);
  std::vector<PollFd> fds = {{idle->read_end.get()}, {ready->read_end.get()}};
  EXPECT_TRUE(channel_->Turn(clock_.Now() + seconds(30), &fds, [](const v1::Envelope&) {}));
  EXPECT_FALSE(fds[0].readable);
  EXPECT_TRUE(fds[1].readable);
}

TEST_F(WorkerChannelTest, ResultsTravelAsValidUtf8) {
  v1::ToolResult result;
  result.set_execution_id("ex-1");
  result.mutable_error()->set_message("cannot read na\xefve\xff.txt");
  result.set_output_json("{\"name\":\"\xff\"}");
  channel_->QueueResult(result);
  channel_->Flush();
  // The coordinator parses it (a proto3 string that is not UTF-8 would not).
  std::optional<v1::Envelope> got = coordinator_.Receive();
  ASSERT_TRUE(got && got->has_tool_result());
  EXPECT_EQ(got->tool_result().execution_id(), "ex-1");
  EXPECT_EQ(got->tool_result().error().message(), "cannot read na\xef\xbf\xbdve\xef\xbf\xbd.txt");
  EXPECT_EQ(got->tool_result().output_json(), "{\"name\":\"\xef\xbf\xbd\"}");
}

}  // namespace
}  // namespace odin
