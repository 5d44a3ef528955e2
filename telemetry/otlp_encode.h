#pragma once
// OTLP's protobuf encoding of spans and metrics (the request bodies of
// POST /v1/traces and /v1/metrics), from opentelemetry-proto's own
// definitions (generated for the lite runtime; telemetry/CMakeLists.txt).

#include <string>
#include <vector>

#include "telemetry/telemetry.h"

namespace odin {

// An ExportTraceServiceRequest, serialized.
std::string EncodeTraces(const TelemetryResource& resource, const std::vector<TelemetrySpan>& spans);
// An ExportMetricsServiceRequest, serialized: each point cumulative from
// start_unix_ns to now_unix_ns.
std::string EncodeMetrics(const TelemetryResource& resource, const std::vector<TelemetryMetric>& metrics,
                          int64_t start_unix_ns, int64_t now_unix_ns);

}  // namespace odin
