#pragma once
// OtlpExporter: sends spans and metrics to an OpenTelemetry collector over
// OTLP/HTTP (protobuf), from a thread of its own, so that a slow or dead
// collector costs the session nothing: Emit and Measure only queue (spans
// past kMaxQueued are dropped and counted), the thread batches them
// (TelemetrySettings::span_delay, or sooner once kBatch wait) and sends
// the cumulative metrics every metric_interval, one request of each kind
// in flight at a time, each bounded by its timeout. Shutdown sends what is
// left and waits for it at most the time it is given.
//
// Thread-safety: Emit and Measure from any thread.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "telemetry/telemetry.h"
#include "telemetry/telemetry_settings.h"

namespace odin {

class OtlpExporter final : public TelemetrySink {
 public:
  static constexpr size_t kBatch = 512;
  static constexpr size_t kMaxQueued = 4096;
  // How long the destructor waits for the last export.
  static constexpr Duration kShutdownWait = seconds(2);

  OtlpExporter(TelemetrySettings settings, TelemetryResource resource);
  ~OtlpExporter() override;
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void Emit(TelemetrySpan span) override;
  void Measure(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes, double value) override;
  // Sends what is queued and the metrics, waits at most wait, and stops.
  void Shutdown(Duration wait);

  struct Stats {
    uint64_t spans_sent = 0;     // in requests the collector accepted
    uint64_t spans_dropped = 0;  // past kMaxQueued, or in requests that failed
    uint64_t exports_failed = 0;
    uint64_t metric_exports = 0;  // accepted
  };
  Stats stats() const;

 private:
  void Run();

  const TelemetrySettings s_;
  const TelemetryResource resource_;
  const int64_t start_unix_ns_;
  TelemetryAggregator metrics_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TelemetrySpan> queue_;
  bool stop_ = false;
  SteadyTime stop_by_{};
  bool measured_ = false;  // metrics changed since the last export
  Stats stats_;
  std::thread thread_;
};

}  // namespace odin
