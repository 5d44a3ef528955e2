// RemoteHosts over real ZeroMQ sockets on loopback: who gets in, who is
// refused and why, what a host may relay, and what its loss ends.

#include "remote/remote_hosts.h"

#include <signal.h>
#include <sys/stat.h>

#include <map>
#include <utility>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "remote/curve_keys.h"
#include "odin/v1/host.pb.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

constexpr char kWorkspace[] = "/srv/ws";

std::unique_ptr<ZmqEndpoint> Take(StatusOr<std::unique_ptr<ZmqEndpoint>> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : nullptr;
}
const std::string kToken(64, 'a');

class RemoteHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = *GenerateCurveKeyPair();
    host_ = *GenerateCurveKeyPair();
  }

  std::unique_ptr<RemoteHosts> Listen(bool require_namespaces = true, Duration heartbeat = milliseconds(500)) {
    RemoteHostsOptions o;
    o.listen = "tcp://127.0.0.1:0";
    o.server = server_;
    o.allowed_hosts = {host_.public_key};
    o.workspace = kWorkspace;
    o.workspace_token = kToken;
    o.require_namespaces = require_namespaces;
    o.sandbox_policy = require_namespaces ? "require" : "fallback";
    o.kinds = {WorkerPolicy::kSubagent, WorkerPolicy::kReadonly};
    o.heartbeat_interval = heartbeat;
    StatusOr<std::unique_ptr<RemoteHosts>> hosts = RemoteHosts::Listen(o, RealClock::Get());
    EXPECT_TRUE(hosts.ok()) << hosts.status().message();
    return std::move(*hosts);
  }

  static v1::HostEnvelope Hello(const std::string& workspace = kWorkspace, const std::string& token = kToken,
                                bool namespaces = true) {
    v1::HostEnvelope env;
    env.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
    v1::HostHello* h = env.mutable_hello();
    h->set_host("node-7");
    h->set_cores(4);
    h->set_max_workers(2);
    h->set_sandbox(namespaces ? "bwrap" : "none: bwrap not found");
    h->set_namespaces(namespaces);
    h->set_workspace(workspace);
    h->set_workspace_token(token);
    return env;
  }

  // Pumps hosts while waiting up to `wait` for a message on client.
  static std::optional<v1::HostEnvelope> Await(RemoteHosts* hosts, ZmqEndpoint* client, Duration wait,
                                               std::vector<WorkerHosts::Event>* events = nullptr) {
    SteadyTime until = RealClock::Get()->Now() + wait;
    while (RealClock::Get()->Now() < until) {
      std::vector<WorkerHosts::Event> got;
      hosts->Pump(&got);
      if (events != nullptr) events->insert(events->end(), got.begin(), got.end());
      StatusOr<bool> ready = client->Poll(milliseconds(20), nullptr);
      if (ready.ok() && *ready) {
        std::string peer, payload;
        StatusOr<bool> got = client->TryReceive(&peer, &payload);
        if (got.ok() && *got) {
          v1::HostEnvelope env;
          if (env.ParseFromString(payload)) return env;
        }
      }
    }
    return std::nullopt;
  }

  std::unique_ptr<ZmqEndpoint> Connect(RemoteHosts* hosts, const CurveKeyPair& key) {
    // A fresh routing id per connection, as the host agent uses.
    std::unique_ptr<ZmqEndpoint> client = Take(ZmqEndpoint::ConnectCurveDealer(
        hosts->endpoint(), "host-" + std::to_string(++connections_), key, server_.public_key));
    said_[client.get()] = 0;  // a new connection counts from 1
    return client;
  }

  // Sends as a host agent does: each message numbered on its connection.
  Status Say(ZmqEndpoint* client, v1::HostEnvelope env) {
    env.set_seq(++said_[client]);
    return client->Send("", env.SerializeAsString());
  }

  CurveKeyPair server_, host_;
  int connections_ = 0;
  std::map<ZmqEndpoint*, uint64_t> said_;
};

TEST_F(RemoteHostsTest, WelcomesAnAllowedHostThatSeesTheWorkspace) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  std::optional<v1::HostEnvelope> answer = Await(hosts.get(), client.get(), seconds(5));
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_welcome()) << answer->DebugString();
  EXPECT_EQ(answer->welcome().host_id(), "node-7#1");
  EXPECT_EQ(answer->welcome().sandbox_policy(), "require");
  ASSERT_EQ(hosts->hosts().size(), 1u);
  EXPECT_EQ(hosts->hosts()[0].cores, 4u);
  // Placement: the kinds allowed, up to the host's max_workers.
  EXPECT_EQ(hosts->Place(WorkerPolicy::kWritable, "", false), "");
  EXPECT_EQ(hosts->Place(WorkerPolicy::kSubagent, "", false), "node-7#1");
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_1", "s1", WorkerPolicy::kSubagent, "").ok());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_2", "s2", WorkerPolicy::kReadonly, "").ok());
  EXPECT_EQ(hosts->Place(WorkerPolicy::kSubagent, "", false), "") << "the host is full";
}

TEST_F(RemoteHostsTest, AHostRelaysOnlyForItsOwnWorkers) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_mine", "s", WorkerPolicy::kSubagent, "").ok());
  std::optional<v1::HostEnvelope> spawn = Await(hosts.get(), client.get(), seconds(5));
  ASSERT_TRUE(spawn.has_value() && spawn->has_spawn());
  EXPECT_EQ(spawn->spawn().secret(), "s");
  for (const char* id : {"w_mine", "w_someone_elses"}) {
    v1::HostEnvelope relay;
    relay.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
    relay.mutable_relay()->set_worker_id(id);
    relay.mutable_relay()->set_envelope("x");
    ASSERT_TRUE(Say(client.get(), relay).ok());
  }
  std::vector<WorkerHosts::Event> events;
  Await(hosts.get(), client.get(), milliseconds(500), &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].worker_id, "w_mine");
  EXPECT_FALSE(events[0].exited);
}

// What a host says it landed is kept only with the result of the call it
// names, only as paths inside the workspace, and only while no other
// landing waits untaken.
TEST_F(RemoteHostsTest, WhatAHostLandedIsTakenOnlyWithItsCallsResultAndOnlyInsideTheWorkspace) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_1", "s", WorkerPolicy::kSubagent, "").ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());  // the spawn
  auto relay = [&](const std::string& result_of, const std::string& landed_for, std::vector<std::string> paths) {
    v1::Envelope inner;
    inner.set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
    inner.mutable_tool_result()->set_execution_id(result_of);
    v1::HostEnvelope env;
    env.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
    env.mutable_relay()->set_worker_id("w_1");
    env.mutable_relay()->set_envelope(inner.SerializeAsString());
    env.mutable_relay()->mutable_landed()->set_execution_id(landed_for);
    for (const std::string& p : paths) env.mutable_relay()->mutable_landed()->add_paths(p);
    env.mutable_relay()->mutable_landed()->add_discarded("d/AGENTS.md\x1b[2J");
    ASSERT_TRUE(Say(client.get(), env).ok());
    std::vector<WorkerHosts::Event> events;
    Await(hosts.get(), client.get(), milliseconds(300), &events);
    ASSERT_EQ(events.size(), 1u);  // the result itself is relayed all the same
  };
  relay("ex_1", "ex_1", {"b.txt", "a/c"});
  std::optional<WorkerHosts::Landed> l = hosts->TakeLanded("ex_1");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->paths, (std::vector<std::string>{"a/c", "b.txt"}));
  ASSERT_EQ(l->discarded.size(), 1u);
  EXPECT_EQ(l->discarded[0].find('\x1b'), std::string::npos) << "control characters reach the report";
  EXPECT_FALSE(hosts->TakeLanded("ex_1").has_value()) << "taken once";
  // Not with its own call's result; a path leaving the workspace.
  relay("ex_2", "ex_3", {"x"});
  EXPECT_FALSE(hosts->TakeLanded("ex_3").has_value());
  for (const char* bad : {"../outside", "/etc/passwd", "a/../../b", "a//b", "", "a/./b"}) {
    relay("ex_4", "ex_4", {"fine.txt", bad});
    EXPECT_FALSE(hosts->TakeLanded("ex_4").has_value()) << bad;
  }
  // A landing whose call never took it (it had ended): the next is not
  // enough to go by.
  relay("ex_5", "ex_5", {"five"});
  relay("ex_6", "ex_6", {"six"});
  EXPECT_FALSE(hosts->TakeLanded("ex_6").has_value());
  EXPECT_FALSE(hosts->TakeLanded("ex_5").has_value());
  relay("ex_7", "ex_7", {"seven"});
  EXPECT_TRUE(hosts->TakeLanded("ex_7").has_value());
}

TEST_F(RemoteHostsTest, AnUnknownKeyGetsNothingThrough) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  CurveKeyPair stranger = *GenerateCurveKeyPair();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), stranger);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  EXPECT_FALSE(Await(hosts.get(), client.get(), seconds(2)).has_value());
  EXPECT_TRUE(hosts->hosts().empty());
  std::vector<std::string> refused = hosts->refused_keys();
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(refused[0], stranger.public_key);
}

TEST_F(RemoteHostsTest, APlaintextClientGetsNothingThrough) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Take(ZmqEndpoint::ConnectDealer(hosts->endpoint(), "plain"));
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  EXPECT_FALSE(Await(hosts.get(), client.get(), seconds(2)).has_value());
  EXPECT_TRUE(hosts->hosts().empty());
}

TEST_F(RemoteHostsTest, AClientThatDoesNotKnowTheServersKeyGetsNothingThrough) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  CurveKeyPair impostor = *GenerateCurveKeyPair();
  std::unique_ptr<ZmqEndpoint> client =
      Take(ZmqEndpoint::ConnectCurveDealer(hosts->endpoint(), "host-test", host_, impostor.public_key));
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  EXPECT_FALSE(Await(hosts.get(), client.get(), seconds(2)).has_value());
  EXPECT_TRUE(hosts->hosts().empty());
}

TEST_F(RemoteHostsTest, AHostThatSeesAnotherWorkspaceIsRefused) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  struct Case {
    std::string workspace, token, why;
    bool retry;
  } cases[] = {{"/elsewhere", kToken, "sees the workspace at /elsewhere", false},
               {kWorkspace, std::string(64, 'b'), "does not see this workspace", true},
               {kWorkspace, "", "does not see this workspace", true}};
  for (const Case& c : cases) {
    std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
    ASSERT_TRUE(Say(client.get(), Hello(c.workspace, c.token)).ok());
    std::optional<v1::HostEnvelope> answer = Await(hosts.get(), client.get(), seconds(5));
    ASSERT_TRUE(answer.has_value() && answer->has_refused());
    EXPECT_NE(answer->refused().reason().find(c.why), std::string::npos) << answer->refused().reason();
    EXPECT_EQ(answer->refused().retry(), c.retry) << c.why;
  }
  EXPECT_TRUE(hosts->hosts().empty());
  EXPECT_EQ(hosts->refusals().size(), 3u);
}

TEST_F(RemoteHostsTest, AHostWithAWeakerSandboxIsRefusedWhereNamespacesAreRequired) {
  std::unique_ptr<RemoteHosts> strict = Listen(/*require_namespaces=*/true);
  std::unique_ptr<ZmqEndpoint> client = Connect(strict.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello(kWorkspace, kToken, false)).ok());
  std::optional<v1::HostEnvelope> answer = Await(strict.get(), client.get(), seconds(5));
  ASSERT_TRUE(answer.has_value() && answer->has_refused());
  EXPECT_NE(answer->refused().reason().find("weaker than sandbox policy require"), std::string::npos);
  EXPECT_FALSE(answer->refused().retry());

  std::unique_ptr<RemoteHosts> lenient = Listen(/*require_namespaces=*/false);
  std::unique_ptr<ZmqEndpoint> other = Connect(lenient.get(), host_);
  ASSERT_TRUE(Say(other.get(), Hello(kWorkspace, kToken, false)).ok());
  answer = Await(lenient.get(), other.get(), seconds(5));
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_welcome());
}

TEST_F(RemoteHostsTest, ASilentHostIsLostWithItsWorkersOnlyAfterItHadTheTimeToKillThem) {
  std::unique_ptr<RemoteHosts> hosts = Listen(true, milliseconds(50));
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_1", "s", WorkerPolicy::kSubagent, "").ok());
  // The client says nothing more: first its worker stops taking work...
  std::vector<WorkerHosts::Event> events;
  SteadyTime until = RealClock::Get()->Now() + seconds(5);
  while (events.empty() && RealClock::Get()->Now() < until) {
    hosts->Pump(&events);
    usleep(5000);
  }
  SteadyTime lost_at = RealClock::Get()->Now();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].stopping);
  EXPECT_FALSE(events[0].exited);
  EXPECT_NE(events[0].reason.find("node-7 was lost"), std::string::npos) << events[0].reason;
  EXPECT_TRUE(hosts->hosts().empty());
  EXPECT_EQ(hosts->Place(WorkerPolicy::kSubagent, "", false), "");
  // ...and it ends only once the host, hearing nothing from us for its
  // liveness timeout, has killed it (3 intervals, and a margin of 2).
  events.clear();
  while (events.empty() && RealClock::Get()->Now() < until) {
    hosts->Pump(&events);
    usleep(5000);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].exited);
  EXPECT_EQ(events[0].worker_id, "w_1");
  EXPECT_GE(RealClock::Get()->Now() - lost_at, milliseconds(200));
}

TEST_F(RemoteHostsTest, AGapInAHostsMessagesLosesIt) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_1", "s", WorkerPolicy::kSubagent, "").ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());  // the SpawnWorker
  // Message #2 never arrives (a connection that broke and came back).
  ++said_[client.get()];
  v1::HostEnvelope hb;
  hb.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
  hb.mutable_heartbeat();
  ASSERT_TRUE(Say(client.get(), hb).ok());
  std::vector<WorkerHosts::Event> events;
  std::optional<v1::HostEnvelope> bye = Await(hosts.get(), client.get(), seconds(5), &events);
  ASSERT_TRUE(bye.has_value());
  EXPECT_TRUE(bye->has_goodbye()) << "a host that may still hear us is told to end its workers";
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].stopping);
  EXPECT_NE(events[0].reason.find("messages were lost"), std::string::npos) << events[0].reason;
  EXPECT_TRUE(hosts->hosts().empty());
}

TEST_F(RemoteHostsTest, DroppingAHostLosesIt) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_TRUE(hosts->Spawn("node-7#1", "w_1", "s", WorkerPolicy::kSubagent, "").ok());
  hosts->Drop("node-7#1", "it did not end worker w_1 after SIGKILL");
  EXPECT_TRUE(hosts->hosts().empty());
  EXPECT_FALSE(hosts->Send("node-7#1", "w_1", v1::Envelope()).ok()) << "nothing more goes to it";
  std::vector<WorkerHosts::Event> events;
  hosts->Pump(&events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].stopping);
}

TEST_F(RemoteHostsTest, WhatAHostSaysOfItselfReachesNoLogWithControlCharacters) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  v1::HostEnvelope hello = Hello("/elsewhere\n[odin] forged line \x1b[2J");
  hello.mutable_hello()->set_host("evil\r\nhost\x1b]0;title\x07");
  ASSERT_TRUE(Say(client.get(), hello).ok());
  std::optional<v1::HostEnvelope> answer = Await(hosts.get(), client.get(), seconds(5));
  ASSERT_TRUE(answer.has_value() && answer->has_refused());
  ASSERT_EQ(hosts->refusals().size(), 1u);
  for (const std::string& text : {answer->refused().reason(), hosts->refusals()[0]}) {
    for (char c : text) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << text;
  }
}

TEST_F(RemoteHostsTest, AHostIsKnownByTheKeyItConnectedWith) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  ASSERT_TRUE(Await(hosts.get(), client.get(), seconds(5)).has_value());
  ASSERT_EQ(hosts->hosts().size(), 1u);
  EXPECT_EQ(hosts->hosts()[0].key, host_.public_key);
}

TEST_F(RemoteHostsTest, SpeakingBeforeHelloIsRefused) {
  std::unique_ptr<RemoteHosts> hosts = Listen();
  std::unique_ptr<ZmqEndpoint> client = Connect(hosts.get(), host_);
  v1::HostEnvelope hb;
  hb.set_protocol_version(v1::HOST_PROTOCOL_VERSION_CURRENT);
  hb.mutable_heartbeat();
  ASSERT_TRUE(Say(client.get(), hb).ok());
  ASSERT_TRUE(Say(client.get(), Hello()).ok());
  EXPECT_FALSE(Await(hosts.get(), client.get(), seconds(1)).has_value()) << "nothing it says is read afterwards";
  EXPECT_TRUE(hosts->hosts().empty());
}

// A launcher as RemoteHosts sees it: launches are names; ends and releases
// are recorded and handed in.
class FakeLauncher : public HostLauncher {
 public:
  StatusOr<std::string> Launch() override {
    launched.push_back("node-" + std::to_string(launched.size() + 1));
    return launched.back();
  }
  void Release(const std::string& name) override { released.push_back(name); }
  std::vector<std::pair<std::string, std::string>> Ended() override { return std::exchange(ended, {}); }
  std::vector<int> WatchFds() const override { return {}; }
  size_t max_hosts() const override { return 2; }
  int cpus() const override { return 1; }

  std::vector<std::string> launched, released;
  std::vector<std::pair<std::string, std::string>> ended;
};

class LaunchedHostsTest : public RemoteHostsTest {
 protected:
  std::unique_ptr<RemoteHosts> ListenWithLauncher(Duration idle, Duration join_timeout = seconds(60)) {
    std::unique_ptr<RemoteHosts> hosts = Listen();
    auto launcher = std::make_unique<FakeLauncher>();
    launcher_ = launcher.get();
    hosts->set_launcher(std::move(launcher), idle, join_timeout);
    return hosts;
  }
  // A host agent saying Hello under a name.
  std::unique_ptr<ZmqEndpoint> Join(RemoteHosts* hosts, const std::string& name) {
    std::unique_ptr<ZmqEndpoint> client = Connect(hosts, host_);
    v1::HostEnvelope hello = Hello();
    hello.mutable_hello()->set_host(name);
    hello.mutable_hello()->set_max_workers(1);
    EXPECT_TRUE(Say(client.get(), hello).ok());
    std::optional<v1::HostEnvelope> answer = Await(hosts, client.get(), seconds(5));
    EXPECT_TRUE(answer.has_value() && answer->has_welcome()) << (answer ? answer->DebugString() : "no answer");
    return client;
  }
  static void PumpOnce(RemoteHosts* hosts) {
    std::vector<WorkerHosts::Event> events;
    hosts->Pump(&events);
  }
  FakeLauncher* launcher_ = nullptr;
};

TEST_F(LaunchedHostsTest, WaitingCallsLaunchHostsOnlyForWhatTheHostsOnTheirWayCannotTake) {
  std::unique_ptr<RemoteHosts> hosts = ListenWithLauncher(seconds(60));
  PumpOnce(hosts.get());
  EXPECT_TRUE(launcher_->launched.empty()) << "nothing waits";
  hosts->SetDemand(1);
  PumpOnce(hosts.get());
  PumpOnce(hosts.get());
  ASSERT_EQ(launcher_->launched.size(), 1u) << "the one on its way takes the one call";
  hosts->SetDemand(5);
  PumpOnce(hosts.get());
  PumpOnce(hosts.get());
  EXPECT_EQ(launcher_->launched.size(), 2u) << "max_hosts";
  // The launched host joins: surplus workers may go there, the pool's own never.
  std::unique_ptr<ZmqEndpoint> client = Join(hosts.get(), "node-1");
  EXPECT_EQ(hosts->Place(WorkerPolicy::kReadonly, "", false), "");
  EXPECT_EQ(hosts->Place(WorkerPolicy::kReadonly, "", true), "node-1#1");
}

TEST_F(LaunchedHostsTest, ALaunchedHostWithNoWorkersIsGivenBackAndNotWelcomedAgain) {
  std::unique_ptr<RemoteHosts> hosts = ListenWithLauncher(milliseconds(100));
  hosts->SetDemand(1);
  PumpOnce(hosts.get());
  ASSERT_EQ(launcher_->launched.size(), 1u);
  hosts->SetDemand(0);
  std::unique_ptr<ZmqEndpoint> client = Join(hosts.get(), "node-1");
  ASSERT_EQ(hosts->hosts().size(), 1u);
  SteadyTime until = RealClock::Get()->Now() + seconds(5);
  while (launcher_->released.empty() && RealClock::Get()->Now() < until) {
    PumpOnce(hosts.get());
    usleep(5000);
  }
  ASSERT_EQ(launcher_->released, std::vector<std::string>{"node-1"});
  EXPECT_TRUE(hosts->hosts().empty());
  // Its agent, should it come back before its job ends, is refused.
  std::unique_ptr<ZmqEndpoint> again = Connect(hosts.get(), host_);
  v1::HostEnvelope hello = Hello();
  hello.mutable_hello()->set_host("node-1");
  ASSERT_TRUE(Say(again.get(), hello).ok());
  std::optional<v1::HostEnvelope> answer = Await(hosts.get(), again.get(), seconds(5));
  ASSERT_TRUE(answer.has_value() && answer->has_refused());
  EXPECT_NE(answer->refused().reason().find("given back"), std::string::npos);
}

TEST_F(LaunchedHostsTest, ALaunchThatEndsBeforeJoiningBacksOffAndOneThatNeverJoinsIsGivenBack) {
  std::unique_ptr<RemoteHosts> hosts = ListenWithLauncher(seconds(60), milliseconds(200));
  hosts->SetDemand(1);
  PumpOnce(hosts.get());
  ASSERT_EQ(launcher_->launched.size(), 1u);
  // srun fails at once (a bad partition): no hot loop of submissions.
  launcher_->ended.push_back({"node-1", "srun exited with status 1"});
  for (int i = 0; i < 20; ++i) PumpOnce(hosts.get());
  EXPECT_EQ(launcher_->launched.size(), 1u) << "the next launch waits";
  // A launch that never joins holds no place for ever.
  std::unique_ptr<RemoteHosts> other = ListenWithLauncher(seconds(60), milliseconds(200));
  other->SetDemand(1);
  PumpOnce(other.get());
  ASSERT_EQ(launcher_->launched.size(), 1u);
  usleep(250000);
  PumpOnce(other.get());
  EXPECT_EQ(launcher_->released, std::vector<std::string>{"node-1"});
}

TEST_F(LaunchedHostsTest, AJobThatEndsLosesItsHost) {
  std::unique_ptr<RemoteHosts> hosts = ListenWithLauncher(seconds(60));
  hosts->SetDemand(1);
  PumpOnce(hosts.get());
  std::unique_ptr<ZmqEndpoint> client = Join(hosts.get(), "node-1");
  ASSERT_TRUE(hosts->Spawn("node-1#1", "w_1", "s", WorkerPolicy::kReadonly, "").ok());
  launcher_->ended.push_back({"node-1", "srun exited with status 143"});
  std::vector<WorkerHosts::Event> events;
  hosts->Pump(&events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].stopping);
  EXPECT_NE(events[0].reason.find("its job ended: srun exited with status 143"), std::string::npos) << events[0].reason;
  EXPECT_TRUE(hosts->hosts().empty());
}

TEST(CurveKeysTest, GenerateWritesSecretsPrivatelyAndAllowsEachHost) {
  std::string dir = *MakeTempDir("odin-keys");
  StatusOr<std::vector<std::string>> wrote = GenerateKeys(dir, {"a", "b"});
  ASSERT_TRUE(wrote.ok()) << wrote.status().message();
  for (const char* secret : {"coordinator.key", "hosts/a.key", "hosts/b.key"}) {
    struct stat st;
    ASSERT_EQ(stat(JoinPath(dir, secret).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << secret;
    EXPECT_TRUE(LoadKeyPair(JoinPath(dir, secret)).ok()) << secret;
  }
  StatusOr<std::set<std::string>> allowed = LoadAllowedHosts(JoinPath(dir, "allowed_hosts"));
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->size(), 2u);
  EXPECT_EQ(allowed->count(LoadKeyPair(JoinPath(dir, "hosts/a.key"))->public_key), 1u);
  // Again: nothing is overwritten; a new host is added.
  std::string coordinator = *ReadFileToString(JoinPath(dir, "coordinator.key"));
  ASSERT_TRUE(GenerateKeys(dir, {"a", "c"}).ok());
  EXPECT_EQ(*ReadFileToString(JoinPath(dir, "coordinator.key")), coordinator);
  EXPECT_EQ(LoadAllowedHosts(JoinPath(dir, "allowed_hosts"))->size(), 3u);
  // A secret others may read is refused; so is a bad name.
  chmod(JoinPath(dir, "hosts/a.key").c_str(), 0644);
  Status loose = LoadKeyPair(JoinPath(dir, "hosts/a.key")).status();
  EXPECT_NE(loose.message().find("chmod 600"), std::string::npos) << loose.message();
  EXPECT_FALSE(GenerateKeys(dir, {"../evil"}).ok());
  // A path that happens to be 40 characters of Z85's alphabet is a file.
  std::string pub = *ReadFileToString(JoinPath(dir, "coordinator.pub"));
  pub.pop_back();
  std::string forty = JoinPath(dir, std::string(40 - dir.size() - 1, 'k'));
  ASSERT_EQ(forty.size(), 40u);
  ASSERT_TRUE(WriteFileAtomic(forty, pub + "\n").ok());
  EXPECT_EQ(*LoadPublicKey(forty), pub);
  EXPECT_EQ(*LoadPublicKey(pub), pub);
  RemoveTree(dir);
}

TEST(CurveKeysTest, TheWorkspaceTokenIsMadeOnceAndKeptPrivate) {
  std::string dir = *MakeTempDir("odin-token");
  StatusOr<std::string> first = EnsureWorkspaceToken(dir);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 64u);
  EXPECT_EQ(*EnsureWorkspaceToken(dir), *first);
  EXPECT_EQ(*ReadWorkspaceToken(dir), *first);
  struct stat st;
  ASSERT_EQ(stat(JoinPath(dir, "host-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  RemoveTree(dir);
}

}  // namespace
}  // namespace odin
