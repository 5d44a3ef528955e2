#pragma once
// Fetch: one HTTP(S) GET for the WebFetch tool, run by the sandboxed network
// worker. Blocking; libcurl's easy interface, one handle per hop.
//
// What it guarantees, on every hop (the first request and each redirect):
//   - only http and https, TLS verified, no cookies, no proxy from the
//     environment (only FetchOptions::proxy);
//   - every connection is judged at connect time, on the address libcurl is
//     about to use, by JudgeConnect (web/address_policy.h): a name that
//     resolves to a private address is refused unless allow-listed. With a
//     proxy the connection judged is the proxy's (the operator's choice);
//     the URL's host is then judged only when it is an IP literal or
//     "localhost", and the proxy must apply its own rules to names;
//   - redirects are followed by hand, only to the same scheme, host and port
//     (at most max_redirects); a redirect elsewhere comes back unfollowed,
//     with cross_host_redirect set, for the caller to decide (and ask);
//   - the body stops at max_bytes (truncated, not an error), and the whole
//     fetch, redirects included, at timeout_seconds.
//
// Every libcurl error becomes a Status here. Thread-safe: calls share
// nothing but libcurl's global state, set up once.

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "web/address_policy.h"

namespace odin {

struct FetchOptions {
  // Private endpoints that may be reached (see JudgeConnect).
  std::vector<PrivateAllow> allow_private;
  // A proxy URL ("http://127.0.0.1:3128"), or "" for none. The environment's
  // http_proxy and friends are never used.
  std::string proxy;
  // The most body kept, in bytes (after content decoding); the rest is not
  // read.
  size_t max_bytes = 5 << 20;
  // The whole fetch, every hop included, in seconds.
  int timeout_seconds = 30;
  // Same-host redirects followed before giving up.
  int max_redirects = 5;
  std::string user_agent = "Odin-WebFetch/1";
  // Set (by another thread) to stop the fetch as soon as libcurl next
  // reports progress: Fetch then returns Cancelled. Null: never.
  const std::atomic<bool>* cancel = nullptr;
};

struct FetchResult {
  std::string final_url;     // the URL of the last request, normalized
  long status = 0;           // its HTTP status
  std::string content_type;  // its Content-Type header, "" if none
  std::string body;          // at most max_bytes of its body
  bool truncated = false;    // the body had more than max_bytes
  // The address the last request went to, "1.2.3.4:443" or "[::1]:80"
  // (the proxy's, with a proxy).
  std::string connected_address;
  std::vector<std::string> redirects;  // the same-host URLs followed, in order
  // When the last response redirects to another scheme, host or port (or to
  // a URL with credentials): that absolute URL, not followed; status is
  // then the 3xx.
  std::string cross_host_redirect;
};

// Fetches url (http or https). OK with any HTTP status, a 4xx or 5xx
// included; a Status when there is no response to give: InvalidArgument
// for a URL that is not http(s) (or a redirect to one), PermissionDenied
// ("refused: 127.0.0.1:8080 is loopback, not a public address") for an
// address the policy refuses, DeadlineExceeded for the timeout,
// ResourceExhausted for too many redirects, Unavailable when the server
// cannot be reached, Cancelled when options.cancel was set.
StatusOr<FetchResult> Fetch(const std::string& url, const FetchOptions& options);

// The URL's host for the permission gate: lower case, IPv6 without brackets.
// InvalidArgument for a URL that is not absolute http(s), or that carries a
// user name or password.
StatusOr<std::string> UrlHost(const std::string& url);

}  // namespace odin
