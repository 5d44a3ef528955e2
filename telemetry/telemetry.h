#pragma once
// What Odin's telemetry is made of, without the OTLP encoding
// (otlp_encode.h) or its transport (otlp_exporter.h): spans, metric
// instruments and their aggregation, and the sink both go to.
//
// Attributes come from an allow list, set in ledger_telemetry.cc: ids,
// tool and model names, statuses, counts and durations; never arguments,
// prompts, paths, output or error text.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

namespace odin {

struct TelemetryAttribute {
  std::string key;
  std::variant<std::string, int64_t, double, bool> value;
};
using TelemetryAttributes = std::vector<TelemetryAttribute>;

struct TelemetrySpan {
  std::string trace_id;        // 16 bytes
  std::string span_id;         // 8 bytes
  std::string parent_span_id;  // 8 bytes, or "" for a root
  std::string name;
  bool client = false;  // SPAN_KIND_CLIENT (a model call), else INTERNAL
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  TelemetryAttributes attributes;
  bool error = false;  // STATUS_CODE_ERROR, else UNSET
};

struct TelemetryResource {
  std::string service_name = "odin";
  std::string service_version;
  TelemetryAttributes attributes;
};

// An instrument: a monotonic cumulative sum (integer or not) or a
// histogram with explicit bounds.
struct TelemetryInstrument {
  enum class Kind { kIntSum, kDoubleSum, kHistogram };
  const char* name;
  const char* unit;
  const char* description;
  Kind kind;
};

// One instrument's points as they stand (cumulative since start_unix_ns).
struct TelemetryMetric {
  TelemetryInstrument instrument;
  struct Point {
    TelemetryAttributes attributes;
    int64_t int_value = 0;
    double double_value = 0;
    uint64_t count = 0;  // histogram
    double sum = 0;
    double min = 0;
    double max = 0;
    std::vector<uint64_t> bucket_counts;  // bounds.size() + 1
  };
  std::vector<Point> points;
  std::vector<double> bounds;  // histogram
};

// Histogram bounds in milliseconds, for durations.
extern const std::vector<double> kDurationBoundsMs;

// Cumulative aggregation of every instrument's points, keyed by their
// attributes. Thread-safe.
class TelemetryAggregator {
 public:
  void Add(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes, double value);
  std::vector<TelemetryMetric> Snapshot() const;
  bool empty() const;

 private:
  mutable std::mutex mu_;
  // instrument name -> (attributes' key -> point)
  std::map<std::string, std::pair<TelemetryInstrument, std::map<std::string, TelemetryMetric::Point>>> metrics_;
};

// Where spans and measurements go: the exporter, or a test's recorder.
class TelemetrySink {
 public:
  virtual ~TelemetrySink() = default;
  // Never blocks.
  virtual void Emit(TelemetrySpan span) = 0;
  virtual void Measure(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes, double value) = 0;
};

// Random ids: 16 bytes for a trace, 8 for a span.
std::string NewTraceId();
std::string NewSpanId();

}  // namespace odin
