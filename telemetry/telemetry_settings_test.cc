#include "telemetry/telemetry_settings.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(TelemetrySettingsTest, OffUnlessTheUserOptsInWhateverOtelVariablesSay) {
  std::map<std::string, std::string> ci = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"},
                                           {"OTEL_SERVICE_NAME", "ci"}};
  StatusOr<TelemetrySettings> s = ReadTelemetrySettings(false, ci);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->enabled);
  s = ReadTelemetrySettings(true, ci);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->enabled);
  EXPECT_EQ(s->traces_url, "http://collector:4318/v1/traces");
  EXPECT_EQ(s->metrics_url, "http://collector:4318/v1/metrics");
  EXPECT_EQ(s->service_name, "ci");
  ci["ODIN_TELEMETRY"] = "0";  // off, whatever the config says
  EXPECT_FALSE(ReadTelemetrySettings(true, ci)->enabled);
  ci["ODIN_TELEMETRY"] = "1";
  EXPECT_TRUE(ReadTelemetrySettings(false, ci)->enabled);
}

TEST(TelemetrySettingsTest, TheStandardVariablesSayWhereAndHow) {
  StatusOr<TelemetrySettings> s =
      ReadTelemetrySettings(false, {{"ODIN_TELEMETRY", "1"},
                                    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t.example/x"},
                                    {"OTEL_METRICS_EXPORTER", "none"},
                                    {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=se%20cret, team = core"},
                                    {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "team=tools"},
                                    {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                    {"OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"},
                                    {"OTEL_BSP_SCHEDULE_DELAY", "200"}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->traces_url, "https://t.example/x");
  EXPECT_EQ(s->metrics_url, "");
  EXPECT_EQ(s->traces_headers, (std::vector<std::string>{"api-key: se cret", "team: tools"}));
  EXPECT_EQ(s->traces_timeout, milliseconds(2500));
  ASSERT_EQ(s->resource_attributes.size(), 1u);
  EXPECT_EQ(s->resource_attributes[0].second, "ci");
  EXPECT_EQ(s->span_delay, milliseconds(200));
}

TEST(TelemetrySettingsTest, WhatItCannotUseIsAnErrorNamingTheVariable) {
  for (auto [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
                                                        {"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317"},
                                                        {"OTEL_EXPORTER_OTLP_TIMEOUT", "soon"},
                                                        {"OTEL_EXPORTER_OTLP_HEADERS", "novalue"},
                                                        {"OTEL_EXPORTER_OTLP_HEADERS", "a=b%0d%0aX-Injected: 1"},
                                                        {"OTEL_TRACES_EXPORTER", "zipkin"},
                                                        {"OTEL_EXPORTER_OTLP_HEADERS", "x y=1"},
                                                        {"OTEL_EXPORTER_OTLP_HEADERS", "a=b\x01"}}) {
    StatusOr<TelemetrySettings> s = ReadTelemetrySettings(false, {{"ODIN_TELEMETRY", "1"}, {name, value}});
    ASSERT_FALSE(s.ok()) << name << "=" << value;
    EXPECT_NE(s.status().message().find(name), std::string::npos) << s.status().message();
  }
  EXPECT_FALSE(ReadTelemetrySettings(false, {{"ODIN_TELEMETRY", "yes"}}).ok());
  // Both signals off: nothing to start.
  StatusOr<TelemetrySettings> none = ReadTelemetrySettings(
      false, {{"ODIN_TELEMETRY", "1"}, {"OTEL_TRACES_EXPORTER", "none"}, {"OTEL_METRICS_EXPORTER", "none"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->enabled);
}

}  // namespace
}  // namespace odin
