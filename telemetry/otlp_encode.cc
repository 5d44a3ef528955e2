#include "telemetry/otlp_encode.h"

#include <algorithm>

#include "base/ids.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace odin {

namespace otlp = opentelemetry::proto;

const std::vector<double> kDurationBoundsMs = {1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000};

namespace {

// Hex to bytes ("" for anything else).
std::string Bytes(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// The key a point's attributes make (they come in a fixed order).
std::string KeyOf(const TelemetryAttributes& attributes) {
  std::string key;
  for (const TelemetryAttribute& a : attributes) {
    key += a.key + '\x1f';
    std::visit(
        [&key](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            key += v;
          } else {
            key += std::to_string(v);
          }
        },
        a.value);
    key += '\x1e';
  }
  return key;
}

void Fill(otlp::common::v1::KeyValue* kv, const TelemetryAttribute& a) {
  kv->set_key(a.key);
  otlp::common::v1::AnyValue* v = kv->mutable_value();
  std::visit(
      [v](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          v->set_string_value(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          v->set_int_value(x);
        } else if constexpr (std::is_same_v<T, double>) {
          v->set_double_value(x);
        } else {
          v->set_bool_value(x);
        }
      },
      a.value);
}

template <typename Repeated>
void FillAll(Repeated* out, const TelemetryAttributes& attributes) {
  for (const TelemetryAttribute& a : attributes) Fill(out->Add(), a);
}

void FillResource(otlp::resource::v1::Resource* r, const TelemetryResource& resource) {
  Fill(r->add_attributes(), {"service.name", resource.service_name});
  if (!resource.service_version.empty()) Fill(r->add_attributes(), {"service.version", resource.service_version});
  FillAll(r->mutable_attributes(), resource.attributes);
}

void FillScope(otlp::common::v1::InstrumentationScope* scope, const TelemetryResource& resource) {
  scope->set_name("odin");
  scope->set_version(resource.service_version);
}

}  // namespace

std::string NewTraceId() { return Bytes(RandomHex(16)); }
std::string NewSpanId() { return Bytes(RandomHex(8)); }

void TelemetryAggregator::Add(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes,
                              double value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& [kind, points] =
      metrics_.try_emplace(instrument.name, instrument, std::map<std::string, TelemetryMetric::Point>{}).first->second;
  // Bounded: past kMaxPoints sets of attributes, new ones count together.
  constexpr size_t kMaxPoints = 1000;
  std::string key = KeyOf(attributes);
  const TelemetryAttributes overflow = {{"odin.overflow", true}};
  bool over = points.size() >= kMaxPoints && points.count(key) == 0;
  auto [it, fresh] = points.try_emplace(over ? KeyOf(overflow) : key);
  TelemetryMetric::Point& p = it->second;
  if (fresh) p.attributes = over ? overflow : attributes;
  switch (instrument.kind) {
    case TelemetryInstrument::Kind::kIntSum: p.int_value += static_cast<int64_t>(value); break;
    case TelemetryInstrument::Kind::kDoubleSum: p.double_value += value; break;
    case TelemetryInstrument::Kind::kHistogram: {
      if (p.bucket_counts.empty()) p.bucket_counts.assign(kDurationBoundsMs.size() + 1, 0);
      size_t bucket =
          std::lower_bound(kDurationBoundsMs.begin(), kDurationBoundsMs.end(), value) - kDurationBoundsMs.begin();
      ++p.bucket_counts[bucket];
      p.min = p.count == 0 ? value : std::min(p.min, value);
      p.max = p.count == 0 ? value : std::max(p.max, value);
      ++p.count;
      p.sum += value;
      break;
    }
  }
}

std::vector<TelemetryMetric> TelemetryAggregator::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TelemetryMetric> out;
  for (const auto& [name, entry] : metrics_) {
    TelemetryMetric m{entry.first, {}, {}};
    for (const auto& [key, p] : entry.second) m.points.push_back(p);
    if (entry.first.kind == TelemetryInstrument::Kind::kHistogram) m.bounds = kDurationBoundsMs;
    out.push_back(std::move(m));
  }
  return out;
}

bool TelemetryAggregator::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_.empty();
}

std::string EncodeTraces(const TelemetryResource& resource, const std::vector<TelemetrySpan>& spans) {
  otlp::collector::trace::v1::ExportTraceServiceRequest req;
  otlp::trace::v1::ResourceSpans* rs = req.add_resource_spans();
  FillResource(rs->mutable_resource(), resource);
  otlp::trace::v1::ScopeSpans* ss = rs->add_scope_spans();
  FillScope(ss->mutable_scope(), resource);
  for (const TelemetrySpan& s : spans) {
    otlp::trace::v1::Span* out = ss->add_spans();
    out->set_trace_id(s.trace_id);
    out->set_span_id(s.span_id);
    if (!s.parent_span_id.empty()) out->set_parent_span_id(s.parent_span_id);
    out->set_name(s.name);
    out->set_kind(s.client ? otlp::trace::v1::Span::SPAN_KIND_CLIENT : otlp::trace::v1::Span::SPAN_KIND_INTERNAL);
    out->set_start_time_unix_nano(static_cast<uint64_t>(s.start_unix_ns));
    out->set_end_time_unix_nano(static_cast<uint64_t>(std::max(s.end_unix_ns, s.start_unix_ns)));
    FillAll(out->mutable_attributes(), s.attributes);
    if (s.error) out->mutable_status()->set_code(otlp::trace::v1::Status::STATUS_CODE_ERROR);
  }
  return req.SerializeAsString();
}

std::string EncodeMetrics(const TelemetryResource& resource, const std::vector<TelemetryMetric>& metrics,
                          int64_t start_unix_ns, int64_t now_unix_ns) {
  otlp::collector::metrics::v1::ExportMetricsServiceRequest req;
  otlp::metrics::v1::ResourceMetrics* rm = req.add_resource_metrics();
  FillResource(rm->mutable_resource(), resource);
  otlp::metrics::v1::ScopeMetrics* sm = rm->add_scope_metrics();
  FillScope(sm->mutable_scope(), resource);
  const auto cumulative = otlp::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE;
  for (const TelemetryMetric& m : metrics) {
    otlp::metrics::v1::Metric* out = sm->add_metrics();
    out->set_name(m.instrument.name);
    out->set_unit(m.instrument.unit);
    out->set_description(m.instrument.description);
    if (m.instrument.kind == TelemetryInstrument::Kind::kHistogram) {
      otlp::metrics::v1::Histogram* h = out->mutable_histogram();
      h->set_aggregation_temporality(cumulative);
      for (const TelemetryMetric::Point& p : m.points) {
        otlp::metrics::v1::HistogramDataPoint* d = h->add_data_points();
        FillAll(d->mutable_attributes(), p.attributes);
        d->set_start_time_unix_nano(static_cast<uint64_t>(start_unix_ns));
        d->set_time_unix_nano(static_cast<uint64_t>(now_unix_ns));
        d->set_count(p.count);
        d->set_sum(p.sum);
        d->set_min(p.min);
        d->set_max(p.max);
        for (uint64_t c : p.bucket_counts) d->add_bucket_counts(c);
        for (double b : m.bounds) d->add_explicit_bounds(b);
      }
      continue;
    }
    otlp::metrics::v1::Sum* sum = out->mutable_sum();
    sum->set_aggregation_temporality(cumulative);
    sum->set_is_monotonic(true);
    for (const TelemetryMetric::Point& p : m.points) {
      otlp::metrics::v1::NumberDataPoint* d = sum->add_data_points();
      FillAll(d->mutable_attributes(), p.attributes);
      d->set_start_time_unix_nano(static_cast<uint64_t>(start_unix_ns));
      d->set_time_unix_nano(static_cast<uint64_t>(now_unix_ns));
      if (m.instrument.kind == TelemetryInstrument::Kind::kIntSum) {
        d->set_as_int(p.int_value);
      } else {
        d->set_as_double(p.double_value);
      }
    }
  }
  return req.SerializeAsString();
}

}  // namespace odin
