// OpenTelemetry end to end: odin -p against the fake model, exporting to a
// local OTLP/HTTP receiver (httplib) that decodes what it gets with the
// official opentelemetry-proto messages. The session's spans and metrics
// arrive; no secret, prompt, argument, path or output does; telemetry is
// off unless the user opts in.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;
namespace otlp = opentelemetry::proto;

// A collector: keeps every request's decoded spans and metrics, and the
// raw bodies and headers.
class Collector {
 public:
  Collector() {
    server_.Post("/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      otlp::collector::trace::v1::ExportTraceServiceRequest r;
      std::lock_guard<std::mutex> lock(mu_);
      raw_ += req.body;
      headers_ += req.get_header_value("x-team") + "\n";
      if (!r.ParseFromString(req.body)) ++bad_;
      for (const auto& rs : r.resource_spans()) {
        for (const auto& ss : rs.scope_spans()) {
          for (const auto& s : ss.spans()) spans_.push_back(s);
        }
      }
      res.status = 200;
    });
    server_.Post("/v1/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      otlp::collector::metrics::v1::ExportMetricsServiceRequest r;
      std::lock_guard<std::mutex> lock(mu_);
      raw_ += req.body;
      if (!r.ParseFromString(req.body)) ++bad_;
      for (const auto& rm : r.resource_metrics()) {
        for (const auto& sm : rm.scope_metrics()) {
          for (const auto& m : sm.metrics()) metrics_[m.name()] = m;  // cumulative: the last one holds all
        }
      }
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Collector() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<otlp::trace::v1::Span> spans() {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }
  std::map<std::string, otlp::metrics::v1::Metric> metrics() {
    std::lock_guard<std::mutex> lock(mu_);
    return metrics_;
  }
  std::string raw() {
    std::lock_guard<std::mutex> lock(mu_);
    return raw_;
  }
  std::string headers() {
    std::lock_guard<std::mutex> lock(mu_);
    return headers_;
  }
  int bad() {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<otlp::trace::v1::Span> spans_;
  std::map<std::string, otlp::metrics::v1::Metric> metrics_;
  std::string raw_, headers_;
  int bad_ = 0;
};

std::string Attribute(const otlp::trace::v1::Span& s, const std::string& key) {
  for (const auto& a : s.attributes()) {
    if (a.key() != key) continue;
    if (a.value().has_string_value()) return a.value().string_value();
    if (a.value().has_int_value()) return std::to_string(a.value().int_value());
    return "?";
  }
  return "";
}

class OdinTelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("notes.txt"), "the notes say " + secret_ + "\n").ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  // A session that reads a file holding the secret, runs a command that
  // prints it, and writes it into another file; the prompt holds it too.
  Ran Session(std::map<std::string, std::string> extra) {
    llm_ = std::make_unique<FakeLlm>(
        json({{"responses",
               {Turn({Call("Read", {{"file_path", "notes.txt"}}),
                      Call("ExecuteCommand", {{"command", "echo " + secret_}})}),
                Turn({Call("WriteFile", {{"file_path", "out.txt"}, {"content", secret_ + "\n"}})}), Text("done")}}})
            .dump());
    std::map<std::string, std::string> env = FakeModelEnv(*llm_, marker_, user_);
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector_.url();
    env["OTEL_BSP_SCHEDULE_DELAY"] = "50";
    env["OTEL_METRIC_EXPORT_INTERVAL"] = "50";
    env["OTEL_EXPORTER_OTLP_HEADERS"] = "x-team=tools";
    for (auto& [k, v] : extra) env[k] = v;
    return RunOdin(ws_.path(), {"-p", "copy the notes, key " + secret_, "--mode", "edit"}, env);
  }

  Collector collector_;
  TempWorkspace ws_, user_;
  std::unique_ptr<FakeLlm> llm_;
  std::string marker_ = UniqueMarker();
  std::string secret_ = "sk-live-" + UniqueMarker();
};

TEST_F(OdinTelemetryTest, ASessionsSpansAndMetricsReachTheCollectorWithoutItsWords) {
  UserConfig({{"telemetry", {{"enabled", true}}}, {"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}});
  Ran r = Session({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<otlp::trace::v1::Span> spans = collector_.spans();
  std::map<std::string, int> names;
  std::string session_span, trace;
  for (const auto& s : spans) {
    ++names[s.name()];
    if (s.name() == "odin.session") {
      session_span = s.span_id();
      trace = s.trace_id();
    }
  }
  EXPECT_EQ(names["odin.session"], 1) << ::testing::PrintToString(names);
  EXPECT_EQ(names["odin.message"], 1);
  EXPECT_EQ(names["odin.model_call"], 3);
  EXPECT_GE(names["odin.tool_call"], 3);  // Read, ExecuteCommand, WriteFile
  std::set<std::string> tools;
  for (const auto& s : spans) {
    EXPECT_EQ(s.trace_id(), trace) << s.name();
    if (s.name() == "odin.tool_call")
      tools.insert(Attribute(s, "odin.tool.name") + "|" + Attribute(s, "odin.tool.status"));
    if (s.name() == "odin.message") EXPECT_EQ(s.parent_span_id(), session_span);
    if (s.name() == "odin.model_call") {
      EXPECT_FALSE(Attribute(s, "gen_ai.request.model").empty());
      EXPECT_EQ(Attribute(s, "gen_ai.system"), "openai");
      EXPECT_EQ(Attribute(s, "gen_ai.usage.output_tokens"), "5");
    }
  }
  EXPECT_TRUE(tools.count("Read|ok") && tools.count("ExecuteCommand|ok") && tools.count("WriteFile|ok"))
      << ::testing::PrintToString(tools);
  std::map<std::string, otlp::metrics::v1::Metric> metrics = collector_.metrics();
  for (const char* name : {"odin.token.usage", "odin.model.calls", "odin.model.duration", "odin.tool.calls",
                           "odin.tool.duration", "odin.session.count"}) {
    EXPECT_TRUE(metrics.count(name)) << name;
  }
  int64_t output_tokens = 0;
  for (const auto& p : metrics["odin.token.usage"].sum().data_points()) {
    for (const auto& a : p.attributes()) {
      if (a.key() == "type" && a.value().string_value() == "output") output_tokens += p.as_int();
    }
  }
  EXPECT_EQ(output_tokens, 15);  // three calls of 5
  EXPECT_EQ(collector_.bad(), 0);
  EXPECT_NE(collector_.headers().find("tools"), std::string::npos);
  // Nothing the session read, ran, wrote or was asked, nor the workspace's path.
  std::string raw = collector_.raw();
  EXPECT_EQ(raw.find(secret_), std::string::npos);
  EXPECT_EQ(raw.find(ws_.path()), std::string::npos);
  EXPECT_EQ(raw.find("notes"), std::string::npos);
}

// OTEL_* variables alone (common in CI) and a workspace's own config never
// turn it on; ODIN_TELEMETRY=1 does.
TEST_F(OdinTelemetryTest, OnlyTheUsersOptInTurnsItOn) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("odinconfig.json"), json({{"telemetry", {{"enabled", true}}}}).dump()).ok());
  Ran r = Session({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ignoring telemetry in"), std::string::npos) << r.err;
  EXPECT_TRUE(collector_.spans().empty());
  EXPECT_TRUE(collector_.raw().empty());
  r = Session({{"ODIN_TELEMETRY", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(collector_.spans().empty());
}

// A collector that never answers (it listens, but never accepts) leaves
// the session its result: every call runs and is recorded, and odin exits
// (the exporter gives the last export up; bench section 16 has the times).
TEST_F(OdinTelemetryTest, ACollectorThatNeverAnswersLeavesTheSessionItsResult) {
  int dead = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(dead, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(dead, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(dead, 16), 0);
  ASSERT_EQ(getsockname(dead, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  Ran r = Session({{"ODIN_TELEMETRY", "1"},
                   {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port))}});
  close(dead);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> out = ReadFileToString(ws_.Join("out.txt"));
  EXPECT_TRUE(out.ok() && out->find(secret_) != std::string::npos);
  std::vector<std::string> calls = LedgerRows(ws_.Join(".odin/odin.db"),
                                              "SELECT s.tool || '|' || e.status FROM execution_starts s JOIN "
                                              "execution_ends e USING (execution_id) ORDER BY s.rowid");
  EXPECT_TRUE(Contains(calls, "Read|ok") && Contains(calls, "ExecuteCommand|ok") && Contains(calls, "WriteFile|ok"))
      << ::testing::PrintToString(calls);
}

// A setting it cannot use says so in one line and the session runs.
TEST_F(OdinTelemetryTest, AnUnusableSettingSaysSoAndTheSessionRuns) {
  Ran r = Session({{"ODIN_TELEMETRY", "1"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("odin: telemetry is off: OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), std::string::npos) << r.err;
  EXPECT_TRUE(collector_.raw().empty());
}

}  // namespace
}  // namespace odin::testing
