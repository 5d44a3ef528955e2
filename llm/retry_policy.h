#pragma once
// When and how soon to retry a model request: exponential backoff with full
// jitter on 429, 5xx and connection errors, honouring Retry-After.

#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace odin {

struct RetryPolicy {
  int max_retries = 4;  // retries after the first attempt
  Duration base_delay = milliseconds(500);
  Duration max_delay = seconds(30);         // backoff cap
  Duration max_retry_after = seconds(120);  // longest Retry-After honoured
};

// True iff an attempt that ended this way is worth repeating: HTTP 408, 409,
// 429 or 5xx, or a transport failure (no response, timeout, cut off).
bool IsRetryable(int http_status, const Status& transport);

// The delay before retry number `retry` (0 for the first). A Retry-After header
// (seconds, or an HTTP date) wins, capped at max_retry_after; otherwise
// min(max_delay, base_delay * 2^retry) scaled by random01 in [0, 1) ("full
// jitter"). now_wall_ms is the wall clock, for dates.
Duration RetryDelay(const RetryPolicy& policy, int retry, const std::string& retry_after, double random01,
                    int64_t now_wall_ms);

// What the user reads while a retry waits: "the model's provider answered
// HTTP 429 (slow down); retrying in 8 s (2/5)". why is the failure's
// message; its URL is left out.
std::string RetryNotice(int http_status, const std::string& why, int64_t delay_ms, int next_attempt, int max_attempts);

}  // namespace odin
