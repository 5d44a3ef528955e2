#include "telemetry/otlp_encode.h"

#include <gtest/gtest.h>

#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace odin {
namespace {

namespace otlp = opentelemetry::proto;

TEST(OtlpEncodeTest, SpansDecodeAsTheCollectorReadsThem) {
  TelemetryResource resource{"odin", "1.2", {{"deployment.environment", std::string("ci")}}};
  TelemetrySpan s;
  s.trace_id = NewTraceId();
  s.span_id = NewSpanId();
  s.parent_span_id = NewSpanId();
  s.name = "odin.tool_call";
  s.start_unix_ns = 1000;
  s.end_unix_ns = 5000;
  s.attributes = {{"odin.tool.name", std::string("Read")}, {"odin.exit_code", int64_t{2}}, {"odin.cost_usd", 0.5}};
  s.error = true;
  otlp::collector::trace::v1::ExportTraceServiceRequest req;
  ASSERT_TRUE(req.ParseFromString(EncodeTraces(resource, {s})));
  ASSERT_EQ(req.resource_spans_size(), 1);
  const auto& rs = req.resource_spans(0);
  EXPECT_EQ(rs.resource().attributes(0).key(), "service.name");
  EXPECT_EQ(rs.resource().attributes(0).value().string_value(), "odin");
  EXPECT_EQ(rs.resource().attributes(2).value().string_value(), "ci");
  const otlp::trace::v1::Span& got = rs.scope_spans(0).spans(0);
  EXPECT_EQ(got.trace_id().size(), 16u);
  EXPECT_EQ(got.span_id().size(), 8u);
  EXPECT_EQ(got.parent_span_id(), s.parent_span_id);
  EXPECT_EQ(got.name(), "odin.tool_call");
  EXPECT_EQ(got.end_time_unix_nano(), 5000u);
  EXPECT_EQ(got.attributes(1).value().int_value(), 2);
  EXPECT_DOUBLE_EQ(got.attributes(2).value().double_value(), 0.5);
  EXPECT_EQ(got.status().code(), otlp::trace::v1::Status::STATUS_CODE_ERROR);
}

TEST(OtlpEncodeTest, MetricsAreCumulativeSumsAndHistograms) {
  TelemetryAggregator agg;
  TelemetryInstrument tokens{"odin.token.usage", "{token}", "", TelemetryInstrument::Kind::kIntSum};
  TelemetryInstrument duration{"odin.tool.duration", "ms", "", TelemetryInstrument::Kind::kHistogram};
  agg.Add(tokens, {{"type", std::string("input")}}, 100);
  agg.Add(tokens, {{"type", std::string("input")}}, 20);
  agg.Add(tokens, {{"type", std::string("output")}}, 7);
  agg.Add(duration, {}, 3);
  agg.Add(duration, {}, 7000);
  otlp::collector::metrics::v1::ExportMetricsServiceRequest req;
  ASSERT_TRUE(req.ParseFromString(EncodeMetrics({}, agg.Snapshot(), 10, 20)));
  const auto& metrics = req.resource_metrics(0).scope_metrics(0).metrics();
  ASSERT_EQ(metrics.size(), 2);
  const otlp::metrics::v1::Metric& hist = metrics[0].name() == "odin.tool.duration" ? metrics[0] : metrics[1];
  const otlp::metrics::v1::Metric& sum = metrics[0].name() == "odin.token.usage" ? metrics[0] : metrics[1];
  EXPECT_TRUE(sum.sum().is_monotonic());
  EXPECT_EQ(sum.sum().aggregation_temporality(), otlp::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE);
  ASSERT_EQ(sum.sum().data_points_size(), 2);
  EXPECT_EQ(sum.sum().data_points(0).as_int() + sum.sum().data_points(1).as_int(), 127);
  const auto& h = hist.histogram().data_points(0);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_DOUBLE_EQ(h.sum(), 7003);
  EXPECT_EQ(h.bucket_counts_size(), h.explicit_bounds_size() + 1);
  EXPECT_DOUBLE_EQ(h.min(), 3);
  EXPECT_DOUBLE_EQ(h.max(), 7000);
}

}  // namespace
}  // namespace odin
