#include "llm/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <type_traits>

namespace odin {

// libcurl, loaded when the first HttpClient is made rather than when the
// process starts: most odin processes never talk to a model (odin exec, odin
// log, odin tool), and loading libcurl with the libraries it needs (TLS,
// SSH, LDAP, Kerberos, IDN, HTTP/2: about 25 of them) costs ~10 ms of every
// start. libcurl.so.4 has been its ABI since 7.16 (2006).
struct HttpClient::CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_socket_action) multi_socket_action;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_cleanup) multi_cleanup;

  // Loads it once per process (curl_global_init included). Returns null,
  // with *error saying why, if it cannot be loaded.
  static const CurlApi* Get(std::string* error) {
    static std::string failed;
    static const CurlApi* api = []() -> const CurlApi* {
      void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) {
        failed = dlerror();
        return nullptr;
      }
      static CurlApi a;
      bool all = true;
      auto get = [&](auto* fn, const char* name) {
        *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
        if (*fn == nullptr) {
          failed = std::string("libcurl.so.4 has no ") + name;
          all = false;
        }
      };
      get(&a.global_init, "curl_global_init");
      get(&a.easy_init, "curl_easy_init");
      get(&a.easy_setopt, "curl_easy_setopt");
      get(&a.easy_getinfo, "curl_easy_getinfo");
      get(&a.easy_strerror, "curl_easy_strerror");
      get(&a.easy_cleanup, "curl_easy_cleanup");
      get(&a.slist_append, "curl_slist_append");
      get(&a.slist_free_all, "curl_slist_free_all");
      get(&a.multi_init, "curl_multi_init");
      get(&a.multi_setopt, "curl_multi_setopt");
      get(&a.multi_add_handle, "curl_multi_add_handle");
      get(&a.multi_remove_handle, "curl_multi_remove_handle");
      get(&a.multi_socket_action, "curl_multi_socket_action");
      get(&a.multi_info_read, "curl_multi_info_read");
      get(&a.multi_cleanup, "curl_multi_cleanup");
      if (!all) return nullptr;
      if (a.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        failed = "curl_global_init failed";
        return nullptr;
      }
      return &a;
    }();
    if (api == nullptr) *error = failed;
    return api;
  }
};

struct HttpClient::Transfer {
  const CurlApi* curl = nullptr;
  Id id;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  HttpRequest request;
  Callbacks callbacks;
  HttpResponseHead head;
  bool head_sent = false;
  bool cancelled = false;
  char error[CURL_ERROR_SIZE] = {0};
  void SendHead() {
    if (head_sent || cancelled) return;
    head_sent = true;
    if (callbacks.on_head) callbacks.on_head(head);
  }
  ~Transfer() {
    if (headers != nullptr) curl->slist_free_all(headers);
    if (easy != nullptr) curl->easy_cleanup(easy);
  }
};

namespace {

// The one place libcurl's errors become Status.
Status CurlError(const std::string& url, CURLcode code, const char* detail, const char* strerror) {
  std::string what = std::string(detail != nullptr && *detail ? detail : strerror);
  std::string context = "cannot reach " + url;
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR: return Status::Unavailable(context, what);
    case CURLE_OPERATION_TIMEDOUT: return Status::DeadlineExceeded(url, what);
    case CURLE_PARTIAL_FILE: return Status::Unavailable(url, "the response was cut off: " + what);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL: return Status::InvalidArgument(url, what);
    default: return Status::IOError(url, what);
  }
}

}  // namespace

HttpClient::HttpClient() {
  curl_ = CurlApi::Get(&load_error_);
  if (curl_ == nullptr) return;  // every transfer fails, saying why
  multi_ = curl_->multi_init();
  curl_->multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &HttpClient::OnSocket);
  curl_->multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_->multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &HttpClient::OnTimer);
  curl_->multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

HttpClient::~HttpClient() {
  if (curl_ == nullptr) return;
  for (auto& [id, t] : transfers_) curl_->multi_remove_handle(multi_, t->easy);
  transfers_.clear();
  curl_->multi_cleanup(multi_);
}

int HttpClient::OnSocket(void*, int fd, int what, void* self, void*) {
  auto* client = static_cast<HttpClient*>(self);
  if (what == CURL_POLL_REMOVE) {
    client->sockets_.erase(fd);
  } else {
    client->sockets_[fd] = what;
  }
  return 0;
}

int HttpClient::OnTimer(void*, long timeout_ms, void* self) {
  auto* client = static_cast<HttpClient*>(self);
  if (timeout_ms < 0) {
    client->timer_.reset();
  } else {
    client->timer_ = RealClock::Get()->Now() + milliseconds(timeout_ms);
  }
  return 0;
}

size_t HttpClient::OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  std::string_view line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after a redirect or 100 Continue): start over.
    t->head = HttpResponseHead();
    size_t sp = line.find(' ');
    if (sp != std::string_view::npos) t->head.status = std::atoi(std::string(line.substr(sp + 1, 3)).c_str());
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    // A header given twice (two WWW-Authenticate challenges) is one list.
    std::string& held = t->head.headers[name];
    held = held.empty() ? std::string(value) : held + ", " + std::string(value);
  }
  return size * n;
}

size_t HttpClient::OnWrite(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  t->SendHead();
  if (t->cancelled) return 0;  // aborts the transfer
  if (t->callbacks.on_body) t->callbacks.on_body(std::string_view(data, size * n));
  return size * n;
}

HttpClient::Id HttpClient::Start(HttpRequest request, Callbacks callbacks) {
  auto t = std::make_unique<Transfer>();
  t->curl = curl_;
  t->id = next_id_++;
  t->request = std::move(request);
  t->callbacks = std::move(callbacks);
  if (curl_ == nullptr) {
    // Fails at the next Process, as a transfer does, not inside Start.
    Id id = t->id;
    transfers_[id] = std::move(t);
    timer_ = RealClock::Get()->Now();
    return id;
  }
  CURL* e = curl_->easy_init();
  t->easy = e;
  curl_->easy_setopt(e, CURLOPT_URL, t->request.url.c_str());
  curl_->easy_setopt(e, CURLOPT_CUSTOMREQUEST, t->request.method.c_str());
  if (t->request.method == "POST") {
    curl_->easy_setopt(e, CURLOPT_POSTFIELDS, t->request.body.c_str());
    curl_->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->request.body.size()));
  }
  for (const std::string& h : t->request.headers) t->headers = curl_->slist_append(t->headers, h.c_str());
  // No "Expect: 100-continue" round trip for large bodies.
  t->headers = curl_->slist_append(t->headers, "Expect:");
  curl_->easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  curl_->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(ToMillis(t->request.connect_timeout)));
  curl_->easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(ToMillis(t->request.total_timeout)));
  curl_->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  if (t->request.quick_exit) curl_->easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
  curl_->easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_->easy_setopt(e, CURLOPT_HEADERFUNCTION, &HttpClient::OnHeader);
  curl_->easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_->easy_setopt(e, CURLOPT_WRITEFUNCTION, &HttpClient::OnWrite);
  curl_->easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_->easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_->easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_->easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  Id id = t->id;
  transfers_[id] = std::move(t);
  curl_->multi_add_handle(multi_, e);
  return id;
}

void HttpClient::Cancel(Id id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  if (curl_ == nullptr) {
    transfers_.erase(it);
    return;
  }
  if (processing_) {
    // Inside one of its callbacks: libcurl still holds it; remove it after.
    it->second->cancelled = true;
    return;
  }
  curl_->multi_remove_handle(multi_, it->second->easy);
  transfers_.erase(it);
}

size_t HttpClient::AddWatchFds(std::vector<PollFd>* fds) const {
  for (const auto& [fd, what] : sockets_) {
    fds->push_back(
        {fd, what == CURL_POLL_IN || what == CURL_POLL_INOUT, what == CURL_POLL_OUT || what == CURL_POLL_INOUT});
  }
  return sockets_.size();
}

std::optional<SteadyTime> HttpClient::NextTimer() const { return timer_; }

bool HttpClient::RunUntil(const std::function<bool()>& done, SteadyTime deadline) {
  while (!done()) {
    SteadyTime now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::vector<PollFd> fds;
    size_t n = AddWatchFds(&fds);
    SteadyTime wake = std::min(deadline, timer_.value_or(deadline));
    std::vector<pollfd> p;
    for (const PollFd& f : fds) {
      p.push_back({f.fd, static_cast<short>((f.want_read ? POLLIN : 0) | (f.want_write ? POLLOUT : 0)), 0});
    }
    // Rounded up: woken before its timer, the client would do nothing.
    int64_t ms = std::max<int64_t>(0, ToMillis(wake - now) + 1);
    if (poll(p.data(), p.size(), static_cast<int>(ms)) < 0 && errno != EINTR) return false;
    for (size_t i = 0; i < n; ++i) {
      fds[i].readable = (p[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      fds[i].writable = (p[i].revents & (POLLOUT | POLLERR)) != 0;
    }
    Process(fds, 0, n);
  }
  return true;
}

void HttpClient::Process(const std::vector<PollFd>& fds, size_t first, size_t count) {
  if (curl_ == nullptr) {
    timer_.reset();
    std::map<Id, std::unique_ptr<Transfer>> failed = std::move(transfers_);
    transfers_.clear();
    for (auto& [id, t] : failed) {
      if (t->callbacks.on_done) t->callbacks.on_done(Status::FailedPrecondition("libcurl", load_error_), 0);
    }
    return;
  }
  processing_ = true;
  int running = 0;
  for (size_t i = first; i < first + count && i < fds.size(); ++i) {
    int mask = (fds[i].readable ? CURL_CSELECT_IN : 0) | (fds[i].writable ? CURL_CSELECT_OUT : 0);
    if (mask != 0) curl_->multi_socket_action(multi_, fds[i].fd, mask, &running);
  }
  if (timer_ && RealClock::Get()->Now() >= *timer_) {
    timer_.reset();
    curl_->multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  }
  Drain();
  processing_ = false;
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    if (it->second->cancelled) {
      curl_->multi_remove_handle(multi_, it->second->easy);
      it = transfers_.erase(it);
    } else {
      ++it;
    }
  }
}

void HttpClient::Drain() {
  int left = 0;
  while (CURLMsg* msg = curl_->multi_info_read(multi_, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* raw = nullptr;
    curl_->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &raw);
    CURLcode code = msg->data.result;
    auto it = transfers_.find(raw->id);
    if (it == transfers_.end()) continue;
    std::unique_ptr<Transfer> t = std::move(it->second);
    transfers_.erase(it);
    curl_->multi_remove_handle(multi_, t->easy);
    if (t->cancelled) continue;
    long status = 0;
    curl_->easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 0) t->SendHead();
    Status s = code == CURLE_OK ? Status::OK() : CurlError(t->request.url, code, t->error, curl_->easy_strerror(code));
    if (t->callbacks.on_done) t->callbacks.on_done(s, static_cast<int>(status));
  }
}

}  // namespace odin
