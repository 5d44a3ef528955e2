#include "llm/retry_policy.h"

#include "base/terminal_text.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace odin {

bool IsRetryable(int http_status, const Status& transport) {
  if (http_status == 0) {
    return transport.code() == StatusCode::kUnavailable || transport.code() == StatusCode::kDeadlineExceeded ||
           transport.code() == StatusCode::kIOError;
  }
  return http_status == 408 || http_status == 409 || http_status == 429 || http_status >= 500;
}

Duration RetryDelay(const RetryPolicy& p, int retry, const std::string& retry_after, double random01,
                    int64_t now_wall_ms) {
  if (!retry_after.empty()) {
    char* end = nullptr;
    double secs = std::strtod(retry_after.c_str(), &end);
    if (end != retry_after.c_str() && *end == '\0' && secs >= 0) {
      // Capped while a double: "inf" or 1e30 must not overflow the cast.
      double cap = std::chrono::duration<double>(p.max_retry_after).count();
      return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(std::min(secs, cap)));
    }
    struct tm tm {};
    if (strptime(retry_after.c_str(), "%a, %d %b %Y %H:%M:%S", &tm) != nullptr) {
      int64_t at_ms = static_cast<int64_t>(timegm(&tm)) * 1000;
      return std::clamp<Duration>(milliseconds(at_ms - now_wall_ms), Duration::zero(), p.max_retry_after);
    }
  }
  double factor = std::ldexp(1.0, std::min(retry, 30));
  Duration backoff = std::min<Duration>(std::chrono::duration_cast<Duration>(p.base_delay * factor), p.max_delay);
  return std::chrono::duration_cast<Duration>(backoff * std::clamp(random01, 0.0, 1.0));
}

std::string RetryNotice(int http_status, const std::string& why, int64_t delay_ms, int next_attempt, int max_attempts) {
  // "URL: HTTP 429: slow down" -> "HTTP 429: slow down"; a transport
  // failure's message stays whole.
  std::string what = why;
  if (size_t http = what.find("HTTP "); http != std::string::npos) what = what.substr(http);
  if (what.size() > 200) what = what.substr(0, 197) + "...";
  // The provider's words: shown, never obeyed by the terminal.
  what = VisibleControls(what, Layout::kOneLine);
  std::string head = http_status == 429 ? "the model's provider is rate-limiting (" + what + ")"
                     : http_status != 0 ? "the model's provider failed (" + what + ")"
                                        : "the model could not be reached (" + what + ")";
  int64_t secs = (delay_ms + 999) / 1000;
  return head + "; retrying in " + std::to_string(secs) + " s (" + std::to_string(next_attempt) + "/" +
         std::to_string(max_attempts) + ")";
}

}  // namespace odin
