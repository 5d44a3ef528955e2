#include "telemetry/telemetry_settings.h"

#include <cctype>
#include <charconv>
#include <string_view>

namespace odin {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string Get(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

// "%41" -> "A"; a bad escape stays as it is.
std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int v = 0;
    if (s[i] == '%' && i + 2 < s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr == s.data() + i + 3) {
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "k=v,k2=v2" (W3C baggage-like, as the OTel spec says), values decoded.
StatusOr<Pairs> ParsePairs(const std::string& name, const std::string& text) {
  Pairs out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string key = eq == std::string::npos ? "" : Trim(item.substr(0, eq));
    if (key.empty()) return Status::InvalidArgument(name, "must be key=value pairs separated by commas");
    std::string value = PercentDecode(Trim(item.substr(eq + 1)));
    for (char c : value) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return Status::InvalidArgument(name, "holds a control character");
      }
    }
    // A header's or attribute's name: an HTTP token.
    for (char c : key) {
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
        return Status::InvalidArgument(name, "holds a name that is not a plain token");
      }
    }
    out.emplace_back(key, value);
  }
  return out;
}

StatusOr<Duration> Millis(const std::map<std::string, std::string>& env, const std::string& name, Duration fallback) {
  std::string text = Get(env, name);
  if (text.empty()) return fallback;
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms < 1 || ms > 3600 * 1000) {
    return Status::InvalidArgument(name, "must be milliseconds, 1 to 3600000");
  }
  return milliseconds(ms);
}

StatusOr<std::string> Url(const std::string& name, const std::string& url) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument(name, "must be an http:// or https:// URL");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20)
      return Status::InvalidArgument(name, "holds a space or control character");
  }
  return url;
}

}  // namespace

StatusOr<TelemetrySettings> ReadTelemetrySettings(bool config_enabled, const std::map<std::string, std::string>& env) {
  TelemetrySettings s;
  std::string opt_in = Get(env, "ODIN_TELEMETRY");
  if (opt_in == "1" || opt_in == "true") {
    s.enabled = true;
    s.because = "ODIN_TELEMETRY=" + opt_in;
  } else if (opt_in.empty() && config_enabled) {
    s.enabled = true;
    s.because = "telemetry.enabled in your config";
  } else if (!opt_in.empty() && opt_in != "0" && opt_in != "false") {
    return Status::InvalidArgument("ODIN_TELEMETRY", "must be 1 or 0");
  }
  if (!s.enabled) return s;

  std::string protocol = Get(env, "OTEL_EXPORTER_OTLP_PROTOCOL");
  for (const char* p : {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}) {
    if (!Get(env, p).empty() && Get(env, p) != "http/protobuf") protocol = Get(env, p);
  }
  if (!protocol.empty() && protocol != "http/protobuf") {
    return Status::InvalidArgument("OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol.substr(0, 32),
                                   "Odin exports http/protobuf only");
  }
  std::string base = Get(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base.empty()) base = "http://localhost:4318";
  while (!base.empty() && base.back() == '/') base.pop_back();
  ASSIGN_OR_RETURN(Pairs common, ParsePairs("OTEL_EXPORTER_OTLP_HEADERS", Get(env, "OTEL_EXPORTER_OTLP_HEADERS")));
  ASSIGN_OR_RETURN(Duration common_timeout, Millis(env, "OTEL_EXPORTER_OTLP_TIMEOUT", seconds(10)));

  struct Signal {
    const char* upper;  // TRACES, METRICS
    const char* path;
    std::string* url;
    std::vector<std::string>* headers;
    Duration* timeout;
  };
  for (Signal sig : {Signal{"TRACES", "/v1/traces", &s.traces_url, &s.traces_headers, &s.traces_timeout},
                     Signal{"METRICS", "/v1/metrics", &s.metrics_url, &s.metrics_headers, &s.metrics_timeout}}) {
    std::string upper = sig.upper;
    std::string exporter = Get(env, "OTEL_" + upper + "_EXPORTER");
    if (exporter == "none") continue;
    if (!exporter.empty() && exporter != "otlp") {
      return Status::InvalidArgument("OTEL_" + upper + "_EXPORTER=" + exporter.substr(0, 32), "must be otlp or none");
    }
    std::string own = Get(env, "OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT");
    std::string name = own.empty() ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT";
    ASSIGN_OR_RETURN(*sig.url, Url(name, own.empty() ? base + sig.path : own));
    std::map<std::string, std::string> headers(common.begin(), common.end());
    ASSIGN_OR_RETURN(Pairs mine, ParsePairs("OTEL_EXPORTER_OTLP_" + upper + "_HEADERS",
                                            Get(env, "OTEL_EXPORTER_OTLP_" + upper + "_HEADERS")));
    for (auto& [k, v] : mine) headers[k] = v;
    for (const auto& [k, v] : headers) sig.headers->push_back(k + ": " + v);
    ASSIGN_OR_RETURN(*sig.timeout, Millis(env, "OTEL_EXPORTER_OTLP_" + upper + "_TIMEOUT", common_timeout));
  }
  if (!Get(env, "OTEL_SERVICE_NAME").empty()) s.service_name = Get(env, "OTEL_SERVICE_NAME");
  ASSIGN_OR_RETURN(s.resource_attributes, ParsePairs("OTEL_RESOURCE_ATTRIBUTES", Get(env, "OTEL_RESOURCE_ATTRIBUTES")));
  // Both signals off: nothing to send, nothing started.
  if (s.traces_url.empty() && s.metrics_url.empty()) s.enabled = false;
  ASSIGN_OR_RETURN(s.span_delay, Millis(env, "OTEL_BSP_SCHEDULE_DELAY", seconds(5)));
  ASSIGN_OR_RETURN(s.metric_interval, Millis(env, "OTEL_METRIC_EXPORT_INTERVAL", seconds(60)));
  return s;
}

}  // namespace odin
