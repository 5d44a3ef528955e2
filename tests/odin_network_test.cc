// The commands' network through the proxy (sandbox.network's rules), end to
// end through the real odin, its sandbox, odin-net-proxy and the fake model
// server. Names are mapped to a server of the test on 127.0.0.1 through the
// user's config (sandbox.network.hosts, web.allow_private).

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

// odin exec's one command gets the proxy too.
TEST_F(OdinNetworkTest, OdinExecReachesAllowedNamesOnly) {
  WriteConfig(user_.Join("config/odin/odinconfig.json"), NetworkConfig());
  FakeLlm llm(json({{"responses", json::array()}}).dump());
  Ran r = Run(llm, {"exec", "--", "sh", "-c",
                    Curl("http://" + Target("allowed.test") + "/hello") + "; " +
                        Curl("http://" + Target("other.test") + "/hello")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hello-through-proxy-41"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("odin: " + Target("other.test") + " is not in sandbox.network's allow list"), std::string::npos)
      << r.out << r.err;
  EXPECT_EQ(site_.hits(), 1);
}

}  // namespace
}  // namespace odin::testing
