#include "telemetry/otlp_exporter.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "llm/http_client.h"
#include "telemetry/otlp_encode.h"

namespace odin {
namespace {

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

OtlpExporter::OtlpExporter(TelemetrySettings settings, TelemetryResource resource)
    : s_(std::move(settings)), resource_(std::move(resource)), start_unix_ns_(NowUnixNs()) {
  thread_ = std::thread([this] { Run(); });
}

OtlpExporter::~OtlpExporter() { Shutdown(kShutdownWait); }

void OtlpExporter::Emit(TelemetrySpan span) {
  if (s_.traces_url.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_ || queue_.size() >= kMaxQueued) {
    ++stats_.spans_dropped;
    return;
  }
  queue_.push_back(std::move(span));
  if (queue_.size() == kBatch) cv_.notify_one();
}

void OtlpExporter::Measure(const TelemetryInstrument& instrument, const TelemetryAttributes& attributes, double value) {
  if (s_.metrics_url.empty()) return;
  metrics_.Add(instrument, attributes, value);
  std::lock_guard<std::mutex> lock(mu_);
  measured_ = true;
}

void OtlpExporter::Shutdown(Duration wait) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    if (!stop_) {
      stop_ = true;
      stop_by_ = std::chrono::steady_clock::now() + wait;
    }
  }
  cv_.notify_one();
  thread_.join();
}

OtlpExporter::Stats OtlpExporter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void OtlpExporter::Run() {
  HttpClient http;
  SteadyTime next_spans = std::chrono::steady_clock::now() + s_.span_delay;
  SteadyTime next_metrics = std::chrono::steady_clock::now() + s_.metric_interval;
  for (;;) {
    std::vector<TelemetrySpan> batch;
    bool send_metrics = false, stopping = false;
    SteadyTime stop_by;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_until(lock, std::min(next_spans, next_metrics), [this] { return stop_ || queue_.size() >= kBatch; });
      SteadyTime now = std::chrono::steady_clock::now();
      stopping = stop_;
      stop_by = stop_by_;
      if (stopping || queue_.size() >= kBatch || now >= next_spans) {
        size_t n = std::min(queue_.size(), stopping ? kMaxQueued : kBatch);
        batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
        queue_.erase(queue_.begin(), queue_.begin() + n);
        next_spans = now + s_.span_delay;
      }
      if ((stopping || now >= next_metrics) && measured_) {
        send_metrics = true;
        measured_ = false;
      }
      if (stopping || now >= next_metrics) next_metrics = now + s_.metric_interval;
    }
    // Each kind's request, its outcome counted when it ends.
    int in_flight = 0;
    bool spans_in_flight = false;
    auto send = [&](const std::string& url, const std::vector<std::string>& headers, Duration timeout, std::string body,
                    size_t spans) {
      HttpRequest req;
      req.method = "POST";
      req.url = url;
      req.headers = headers;
      req.headers.push_back("Content-Type: application/x-protobuf");
      req.body = std::move(body);
      req.connect_timeout = std::min<Duration>(timeout, seconds(5));
      req.total_timeout = timeout;
      req.quick_exit = true;  // a hung name lookup never holds the exit
      HttpClient::Callbacks cb;
      cb.on_done = [this, &in_flight, &spans_in_flight, spans](const Status& st, int status) {
        --in_flight;
        if (spans > 0) spans_in_flight = false;
        std::lock_guard<std::mutex> lock(mu_);
        if (st.ok() && status >= 200 && status < 300) {
          if (spans > 0) stats_.spans_sent += spans;
          if (spans == 0) ++stats_.metric_exports;
          return;
        }
        ++stats_.exports_failed;
        stats_.spans_dropped += spans;
        spdlog::debug("telemetry: export to the collector failed: {} (HTTP {})", st.message(), status);
      };
      ++in_flight;
      if (spans > 0) spans_in_flight = true;
      http.Start(std::move(req), std::move(cb));
    };
    if (!batch.empty()) {
      send(s_.traces_url, s_.traces_headers, s_.traces_timeout, EncodeTraces(resource_, batch), batch.size());
    }
    if (send_metrics) {
      send(s_.metrics_url, s_.metrics_headers, s_.metrics_timeout,
           EncodeMetrics(resource_, metrics_.Snapshot(), start_unix_ns_, NowUnixNs()), 0);
    }
    // Driven in slices, so that a shutdown's own deadline cuts a request
    // to a collector that never answers.
    while (in_flight > 0) {
      SteadyTime now = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) {
          stopping = true;
          stop_by = stop_by_;
        }
      }
      if (stopping && now >= stop_by) break;
      http.RunUntil([&in_flight] { return in_flight == 0; }, now + milliseconds(100));
    }
    if (in_flight > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.exports_failed += static_cast<uint64_t>(in_flight);
      if (spans_in_flight) stats_.spans_dropped += batch.size();
      return;  // http's destruction drops the requests, calling nothing
    }
    if (stopping) {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty() || std::chrono::steady_clock::now() >= stop_by_) return;
    }
  }
}

}  // namespace odin
