// The commands' network through the proxy (sandbox.network's rules), end to
// end through the real odin, its sandbox, odin-net-proxy and the fake model
// server. Names are mapped to a server of the test on 127.0.0.1 through the
// user's config (sandbox.network.hosts, web.allow_private).

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class Site {
 public:
  Site() {
    server_.Get("/hello", [this](const httplib::Request&, httplib::Response& res) {
      ++hits_;
      res.set_content("hello-through-proxy-41\n", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Site() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int hits() const { return hits_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> hits_{0};
};

class OdinNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::string Target(const std::string& host) const { return host + ":" + std::to_string(site_.port()); }
  // allowed.test is allowed; both names lead to the site.
  json NetworkConfig() const {
    return {{"sandbox",
             {{"network",
               {{"allow", {Target("allowed.test")}},
                {"hosts", {{"allowed.test", "127.0.0.1"}, {"other.test", "127.0.0.1"}}}}}}},
            {"web", {{"allow_private", {Target("allowed.test"), Target("other.test")}}}},
            {"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}};
  }
  void WriteConfig(const std::string& path, const json& config) {
    ASSERT_TRUE(WriteFileAtomic(path, config.dump()).ok());
  }
  Ran Run(const FakeLlm& llm, std::vector<std::string> args) {
    return RunOdin(ws_.path(), args, FakeModelEnv(llm, marker_, user_));
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  std::string Curl(const std::string& args) { return "curl -sS -m 10 " + args + " 2>&1; echo \" rc=$?\""; }

  Site site_;
  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
};

// An allowed name is reached (plain and through CONNECT); another name and
// an address are refused, by the proxy or for want of a route; the result
// names the refused host; the ledger has one record per command and host.
TEST_F(OdinNetworkTest, AllowedNamesAreReachedAndTheRestRefusedAndRecorded) {
  WriteConfig(user_.Join("config/odin/odinconfig.json"), NetworkConfig());
  std::string ip = "http://127.0.0.1:" + std::to_string(site_.port()) + "/hello";
  std::string script = Curl("http://" + Target("allowed.test") + "/hello") + "; " +
                       Curl("-p http://" + Target("allowed.test") + "/hello") + "; " +
                       Curl("http://" + Target("other.test") + "/hello") + "; " + Curl("--noproxy '' " + ip) + "; " +
                       Curl(ip);
  FakeLlm llm(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", script}})}), Text("Done.")}}}).dump());
  Ran r = Run(llm, {"-p", "fetch the pages", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 1u);
  std::string out = results[0].dump();
  // Reached twice: a plain request and a tunnel.
  EXPECT_EQ(site_.hits(), 2) << out;
  size_t first = out.find("hello-through-proxy-41");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find("hello-through-proxy-41", first + 1), std::string::npos) << out;
  // Refused, each named: the other name, the address through the proxy.
  EXPECT_NE(out.find("[odin] the network proxy refused: 127.0.0.1:"), std::string::npos) << out;
  EXPECT_NE(out.find("; " + Target("other.test") + " (" + Target("other.test") +
                     " is not in sandbox.network's allow list, and was not approved)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("host '127.0.0.1': is an IP address"), std::string::npos) << out;
  // Straight to the address: no route out of the commands' network.
  EXPECT_NE(out.find("rc=7"), std::string::npos) << out;
  std::vector<std::string> records = Rows(
      "SELECT json_extract(detail_json, '$.host') || ' ' || json_extract(detail_json, '$.allowed') || ' ' || "
      "json_extract(detail_json, '$.refused') || ' ' || (json_extract(detail_json, '$.bytes_down') > 0) FROM "
      "gate_events WHERE kind = 'network' ORDER BY 1");
  EXPECT_EQ(records, (std::vector<std::string>{"127.0.0.1 0 1 0", "allowed.test 2 0 1", "other.test 0 1 0"}));
  // Each is the command's.
  EXPECT_EQ(Rows("SELECT count(*) FROM gate_events g JOIN execution_starts s ON s.execution_id = g.execution_id "
                 "WHERE g.kind = 'network' AND s.tool = 'ExecuteCommand'"),
            std::vector<std::string>{"3"});
}

// A repository's own config cannot open the network: sandbox.network is
// the user's (trusted-only), so its commands reach nothing.
TEST_F(OdinNetworkTest, AnUntrustedWorkspaceCannotAllowHosts) {
  WriteConfig(ws_.Join("odinconfig.json"), NetworkConfig());
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("ExecuteCommand", {{"command", Curl("http://" + Target("allowed.test") + "/hello")}})}),
              Text("Done.")}}})
          .dump());
  Ran r = Run(llm, {"-p", "fetch the page", "--mode", "edit"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::string out = ToolResultsOf(requests[1])[0].dump();
  EXPECT_EQ(site_.hits(), 0) << out;
  EXPECT_NE(out.find("Could not resolve host"), std::string::npos) << out;
  EXPECT_EQ(Rows("SELECT count(*) FROM gate_events WHERE kind = 'network'"), std::vector<std::string>{"0"});
}

// Interactively, a host no rule names is asked once; "always" is saved as
// network:HOST:PORT, answers the next session headless, and is listed and
// removed by odin permissions.
TEST_F(OdinNetworkTest, AnUnknownHostIsAskedAndAlwaysIsSavedUntilRemoved) {
  WriteConfig(user_.Join("config/odin/odinconfig.json"), NetworkConfig());
  std::string fetch = Curl("http://" + Target("other.test") + "/hello");
  FakeLlm first(json({{"responses",
                       {Turn({Call("ExecuteCommand", {{"command", fetch}})}),
                        Turn({Call("ExecuteCommand", {{"command", fetch}})}), Text("done")}}})
                    .dump());
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, FakeModelEnv(first, marker_, user_));
  auto say = [in](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  say("fetch it twice");
  std::string seen = ReadUntil(out, "odin permissions lists and removes it)\n");
  EXPECT_NE(seen.find("connect to " + Target("other.test")), std::string::npos) << seen;
  EXPECT_NE(seen.find("not in sandbox.network's allow list"), std::string::npos) << seen;
  say("A");
  seen = ReadUntil(out, "── Odin report");
  // Asked once: the second fetch went through on the saved answer.
  EXPECT_EQ(seen.find("connect to " + Target("other.test")), std::string::npos) << seen;
  close(in);
  ReadUntil(out, "(the end)");
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_EQ(site_.hits(), 2);
  std::string store = *ReadFileToString(user_.Join("config/odin/approvals.json"));
  EXPECT_NE(store.find("\"network:" + Target("other.test") + "\""), std::string::npos) << store;

  // Headless: the saved answer lets it through; removed, it is refused.
  FakeLlm second(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", fetch}})}), Text("done")}}}).dump());
  ASSERT_EQ(Run(second, {"-p", "again"}).exit_code, 0);
  EXPECT_EQ(site_.hits(), 3);
  Ran list = RunOdin(ws_.path(), {"permissions", "list"}, FakeModelEnv(second, marker_, user_));
  EXPECT_NE(list.out.find("1. commands' connections to " + Target("other.test")), std::string::npos) << list.out;
  ASSERT_EQ(RunOdin(ws_.path(), {"permissions", "remove", "1"}, FakeModelEnv(second, marker_, user_)).exit_code, 0);
  FakeLlm third(json({{"responses", {Turn({Call("ExecuteCommand", {{"command", fetch}})}), Text("done")}}}).dump());
  ASSERT_EQ(Run(third, {"-p", "once more"}).exit_code, 0);
  EXPECT_EQ(site_.hits(), 3);
  std::vector<json> requests = ScriptRequestsOf(third);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(ToolResultsOf(requests[1])[0].dump().find("the network proxy refused: " + Target("other.test")),
            std::string::npos);
}

// odin exec's one command gets the proxy too.
TEST_F(OdinNetworkTest, OdinExecReachesAllowedNamesOnly) {
  WriteConfig(user_.Join("config/odin/odinconfig.json"), NetworkConfig());
  FakeLlm llm(json({{"responses", json::array()}}).dump());
  Ran r = Run(llm, {"exec", "--", "sh", "-c",
                    Curl("http://" + Target("allowed.test") + "/hello") + "; " +
                        Curl("http://" + Target("other.test") + "/hello") + "; " +
                        Curl("-x http://127.0.0.1:3128 http://" + Target("allowed.test") + "/hello") + "; " +
                        Curl("-x http://made-up:x@127.0.0.1:3128 http://" + Target("allowed.test") + "/hello")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hello-through-proxy-41"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("odin: " + Target("other.test") + " is not in sandbox.network's allow list"), std::string::npos)
      << r.out << r.err;
  // A request that does not say whose command asks is no command's.
  EXPECT_NE(r.out.find("odin: use the proxy as HTTP_PROXY names it"), std::string::npos) << r.out << r.err;
  // Nor is one naming no worker of the session.
  EXPECT_NE(r.out.find("odin: the proxy's user names none of this session's command workers"), std::string::npos)
      << r.out << r.err;
  EXPECT_EQ(site_.hits(), 1);
}

}  // namespace
}  // namespace odin::testing
