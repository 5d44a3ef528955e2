#pragma once
// Whether and where Odin exports OpenTelemetry, read once per runtime.
//
// Off unless the user opts in: `"telemetry": {"enabled": true}` in the
// user's own odinconfig.json (a workspace's is ignored: config_loader.cc)
// or ODIN_TELEMETRY=1 (ODIN_TELEMETRY=0 turns it off whatever the config
// says). OTEL_* variables alone, common in CI, never turn it on. Once on,
// the standard variables say where and how:
//   OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318; /v1/traces
//     and /v1/metrics appended), OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT
//     (used as they are);
//   OTEL_EXPORTER_OTLP_HEADERS and the per-signal ones (k=v,k=v, values
//     percent-decoded);
//   OTEL_EXPORTER_OTLP_TIMEOUT and the per-signal ones (ms, default 10000);
//   OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf only;
//   OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER: otlp (default) or none;
//   OTEL_SERVICE_NAME (default odin), OTEL_RESOURCE_ATTRIBUTES (k=v,...);
//   OTEL_BSP_SCHEDULE_DELAY (ms between span batches, default 5000),
//   OTEL_METRIC_EXPORT_INTERVAL (ms, default 60000).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace odin {

struct TelemetrySettings {
  bool enabled = false;
  std::string because;                       // what turned it on: "telemetry.enabled" or "ODIN_TELEMETRY=1"
  std::string traces_url;                    // "" when traces are off
  std::string metrics_url;                   // "" when metrics are off
  std::vector<std::string> traces_headers;   // "Name: value"
  std::vector<std::string> metrics_headers;  // "Name: value"
  Duration traces_timeout = seconds(10);
  Duration metrics_timeout = seconds(10);
  std::string service_name = "odin";
  std::vector<std::pair<std::string, std::string>> resource_attributes;
  Duration span_delay = seconds(5);
  Duration metric_interval = seconds(60);
};

// The settings from the user's config's telemetry.enabled and the
// environment. A setting it cannot use is an error naming the variable
// (the caller says so and runs without telemetry).
StatusOr<TelemetrySettings> ReadTelemetrySettings(bool config_enabled, const std::map<std::string, std::string>& env);

}  // namespace odin
