#include "web/web_fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/clock.h"

namespace odin {
namespace {

// libcurl's global state, set up once per process, by the first call.
bool CurlReady() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

struct CurlFree {
  void operator()(char* p) const { curl_free(p); }
};
struct UrlCleanup {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct EasyCleanup {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlCleanup>;
using EasyHandle = std::unique_ptr<CURL, EasyCleanup>;

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
  }
  return s;
}

std::string UrlPart(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* s = nullptr;
  if (curl_url_get(u, part, &s, flags) != CURLUE_OK || s == nullptr) return "";
  std::unique_ptr<char, CurlFree> owned(s);
  return s;
}

// An http(s) URL, taken apart by libcurl's URL parser: the same parser
// that makes the request, so the host judged is the host connected to.
struct Target {
  std::string url;     // absolute, normalized
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case, IPv6 without brackets
  int port = 0;        // as written, or the scheme's default
  bool credentials = false;
};

// Parses url, resolved against base when base is not empty.
StatusOr<Target> ParseTarget(const std::string& url, const std::string& base) {
  UrlHandle u(curl_url());
  if (u == nullptr) return Status::Internal("curl_url", "out of memory");
  if (!base.empty() && curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument(base, "not a URL");
  }
  CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0);
  if (rc == CURLUE_UNSUPPORTED_SCHEME) return Status::InvalidArgument(url, "only http and https URLs can be fetched");
  if (rc != CURLUE_OK) {
    return Status::InvalidArgument(url, std::string("not an absolute http(s) URL (") + curl_url_strerror(rc) + ")");
  }
  Target t;
  t.scheme = Lower(UrlPart(u.get(), CURLUPART_SCHEME));
  if (t.scheme != "http" && t.scheme != "https") {
    return Status::InvalidArgument(url, "only http and https URLs can be fetched, not " + t.scheme);
  }
  t.host = Lower(UrlPart(u.get(), CURLUPART_HOST));
  if (t.host.size() >= 2 && t.host.front() == '[' && t.host.back() == ']') t.host = t.host.substr(1, t.host.size() - 2);
  if (t.host.empty()) return Status::InvalidArgument(url, "no host");
  t.port = std::atoi(UrlPart(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT).c_str());
  t.credentials = !UrlPart(u.get(), CURLUPART_USER).empty() || !UrlPart(u.get(), CURLUPART_PASSWORD).empty();
  t.url = UrlPart(u.get(), CURLUPART_URL);
  return t;
}

// What one request's callbacks share.
struct Transfer {
  const FetchOptions* options = nullptr;
  std::string url_host;
  bool judge = true;    // false with a proxy: every connection is to it
  std::string refusal;  // why the policy refused a connection, if it did
  std::string body;
  bool truncated = false;
  char error[CURL_ERROR_SIZE] = {0};
};

// Called for every connection libcurl opens, with the address it is about
// to connect to: after DNS, so the policy judges what is really reached.
curl_socket_t OpenSocket(void* p, curlsocktype purpose, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(p);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  if (t->judge) {
    std::string why = JudgeConnect(&address->addr, t->url_host, t->options->allow_private);
    if (!why.empty()) {
      if (t->refusal.empty()) t->refusal = why;
      return CURL_SOCKET_BAD;
    }
  }
  int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

size_t OnWrite(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  size_t len = size * n;
  size_t room = t->options->max_bytes - std::min(t->options->max_bytes, t->body.size());
  if (len > room) {
    // The cap: keep what fits and stop reading (libcurl ends the transfer
    // with CURLE_WRITE_ERROR, which Request takes as success).
    t->body.append(data, room);
    t->truncated = true;
    return 0;
  }
  t->body.append(data, len);
  return len;
}

// Stops the transfer once the caller cancels it.
int OnProgress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* t = static_cast<Transfer*>(p);
  return t->options->cancel != nullptr && t->options->cancel->load() ? 1 : 0;
}

// The one place libcurl's errors become Status.
Status CurlError(const std::string& url, CURLcode code, const Transfer& t, int timeout_seconds) {
  if (!t.refusal.empty() && code == CURLE_COULDNT_CONNECT) return Status::PermissionDenied("refused", t.refusal);
  if (code == CURLE_ABORTED_BY_CALLBACK) return Status::Cancelled(url + ": cancelled");
  std::string what = t.error[0] != '\0' ? t.error : curl_easy_strerror(code);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return Status::DeadlineExceeded(url, "timed out after " + std::to_string(timeout_seconds) + " s");
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return Status::Unavailable("cannot reach " + url, what);
    case CURLE_PARTIAL_FILE: return Status::Unavailable(url, "the response was cut off: " + what);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL: return Status::InvalidArgument(url, what);
    default: return Status::IOError(url, what);
  }
}

// Fills a sockaddr for an IP literal; false for a name.
bool LiteralAddress(const std::string& host, int port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof *out);
  auto* in = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, host.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  return false;
}

// With a proxy, libcurl never connects to the URL's host: what can be
// judged here is an IP literal, and "localhost", which a proxy would take
// as its own loopback.
std::string JudgeBehindProxy(const Target& target, const FetchOptions& options) {
  sockaddr_storage addr;
  bool localhost = target.host == "localhost" ||
                   (target.host.size() > 10 && target.host.compare(target.host.size() - 10, 10, ".localhost") == 0);
  if (localhost) LiteralAddress("127.0.0.1", target.port, &addr);
  if (!localhost && !LiteralAddress(target.host, target.port, &addr)) return "";
  return JudgeConnect(reinterpret_cast<sockaddr*>(&addr), target.host, options.allow_private);
}

// What one request brought back.
struct Hop {
  long status = 0;
  std::string content_type;
  std::string location;  // the Location header, "" if none
  std::string body;
  bool truncated = false;
  std::string connected_address;
};

StatusOr<Hop> Request(const Target& target, const FetchOptions& options, SteadyTime deadline) {
  int64_t left_ms = ToMillis(deadline - RealClock::Get()->Now());
  if (left_ms <= 0) {
    return Status::DeadlineExceeded(target.url, "timed out after " + std::to_string(options.timeout_seconds) + " s");
  }
  if (!options.proxy.empty()) {
    std::string why = JudgeBehindProxy(target, options);
    if (!why.empty()) return Status::PermissionDenied("refused", why);
  }
  EasyHandle easy(curl_easy_init());
  if (easy == nullptr) return Status::Internal("curl_easy_init", "out of memory");
  CURL* e = easy.get();
  Transfer t;
  t.options = &options;
  t.url_host = target.host;
  t.judge = options.proxy.empty();
  curl_easy_setopt(e, CURLOPT_URL, target.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);  // followed by hand, each hop judged
  curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  // "" turns off the proxy from the environment (http_proxy, ...) as well.
  curl_easy_setopt(e, CURLOPT_PROXY, options.proxy.c_str());
  curl_easy_setopt(e, CURLOPT_NOPROXY, "");          // and no_proxy: every host goes through options.proxy
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(left_ms));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min<int64_t>(left_ms, 10'000)));
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
  CURLcode rc = curl_easy_perform(e);
  if (rc == CURLE_WRITE_ERROR && t.truncated) rc = CURLE_OK;
  if (rc != CURLE_OK) return CurlError(target.url, rc, t, options.timeout_seconds);

  Hop hop;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &hop.status);
  char* type = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) hop.content_type = type;
  curl_header* location = nullptr;
  if (curl_easy_header(e, "Location", 0, CURLH_HEADER, -1, &location) == CURLHE_OK) hop.location = location->value;
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip != nullptr && *ip != '\0') {
    curl_easy_getinfo(e, CURLINFO_PRIMARY_PORT, &port);
    std::string text = ip;
    if (text.find(':') != std::string::npos) text = "[" + text + "]";
    hop.connected_address = text + ":" + std::to_string(port);
  }
  hop.body = std::move(t.body);
  hop.truncated = t.truncated;
  return hop;
}

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

StatusOr<FetchResult> Fetch(const std::string& url, const FetchOptions& options) {
  if (!CurlReady()) return Status::FailedPrecondition("libcurl", "curl_global_init failed");
  ASSIGN_OR_RETURN(Target target, ParseTarget(url, ""));
  if (target.credentials) return Status::InvalidArgument(url, "URLs with a user name or password are not fetched");
  SteadyTime deadline = RealClock::Get()->Now() + seconds(options.timeout_seconds);
  FetchResult result;
  for (int followed = 0;;) {
    ASSIGN_OR_RETURN(Hop hop, Request(target, options, deadline));
    result.final_url = target.url;
    result.status = hop.status;
    result.content_type = std::move(hop.content_type);
    result.body = std::move(hop.body);
    result.truncated = hop.truncated;
    result.connected_address = std::move(hop.connected_address);
    if (!IsRedirect(hop.status) || hop.location.empty()) return result;
    StatusOr<Target> next = ParseTarget(hop.location, target.url);
    if (!next.ok()) {
      return Status::InvalidArgument(target.url,
                                     "redirects to a URL that cannot be fetched: " + next.status().message());
    }
    // Another origin is another permission: the caller decides (and asks).
    if (next->scheme != target.scheme || next->host != target.host || next->port != target.port || next->credentials) {
      result.cross_host_redirect = next->url;
      return result;
    }
    if (followed >= options.max_redirects) {
      return Status::ResourceExhausted(
          url, "more than " + std::to_string(options.max_redirects) + " redirects (the last to " + next->url + ")");
    }
    ++followed;
    result.redirects.push_back(next->url);
    target = std::move(next).value();
  }
}

StatusOr<std::string> UrlHost(const std::string& url) {
  if (!CurlReady()) return Status::FailedPrecondition("libcurl", "curl_global_init failed");
  ASSIGN_OR_RETURN(Target target, ParseTarget(url, ""));
  if (target.credentials) return Status::InvalidArgument(url, "URLs with a user name or password are not fetched");
  return target.host;
}

}  // namespace odin
