// Fetch against real HTTP servers in this process (cpp-httplib on a thread
// of its own, on loopback: every test allow-lists it, or shows that it is
// refused). Nothing waits on time but the timeout test, which waits for the
// fetch's own timeout to fire; nothing asserts how long anything took.

#include "web/web_fetch.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

namespace odin {
namespace {

// A port on which nothing listens (taken and given back at once).
int ClosedPort() {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(s);
    return 0;
  }
  close(s);
  return ntohs(a.sin_port);
}

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

constexpr char kPage[] = "<html><head><title>T</title></head><body><p>Hello</p></body></html>";

class WebFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/page", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      user_agent_ = req.get_header_value("User-Agent");
      res.set_content(kPage, "text/html; charset=utf-8");
    });
    server_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content("no", "text/plain");
    });
    server_.Get("/r1", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/dir/r2", 302); });
    server_.Get("/dir/r2", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect(Url("/dir/r3"), 301);  // absolute, same host
    });
    server_.Get("/dir/r3", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("../page", 307);  // relative to /dir/
    });
    // /chain/N redirects N times before it reaches the page.
    server_.Get(R"(/chain/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      int n = std::stoi(req.matches[1]);
      res.set_redirect(n == 0 ? "/page" : "/chain/" + std::to_string(n - 1), 302);
    });
    server_.Get("/no-location", [](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_content("moved, but where?", "text/plain");
    });
    server_.Get("/to-other-port", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://127.0.0.1:" + std::to_string(closed_port_) + "/page", 302);
    });
    server_.Get("/to-other-name", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://localhost:" + std::to_string(port_) + "/page", 302);
    });
    server_.Get("/to-https", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("https://127.0.0.1:" + std::to_string(port_) + "/page", 302);
    });
    server_.Get("/to-credentials", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://user:pw@127.0.0.1:" + std::to_string(port_) + "/page", 302);
    });
    server_.Get("/to-ftp",
                [](const httplib::Request&, httplib::Response& res) { res.set_redirect("ftp://127.0.0.1/file", 302); });
    server_.Get("/to-file",
                [](const httplib::Request&, httplib::Response& res) { res.set_redirect("file:///etc/passwd", 302); });
    server_.Get(R"(/bytes/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::string(std::stoul(req.matches[1]), 'x'), "application/octet-stream");
    });
    server_.Get("/ready", [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/plain"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Once it has answered, stop() in TearDown has a loop to stop.
    httplib::Client ping("127.0.0.1", port_);
    ping.set_read_timeout(10, 0);
    httplib::Result ready = ping.Get("/ready");
    ASSERT_TRUE(ready && ready->status == 200) << "the test server did not answer";
    closed_port_ = ClosedPort();
    ASSERT_GT(closed_port_, 0);
    options_.allow_private = {{"127.0.0.1", port_}};
    options_.timeout_seconds = 20;  // a backstop: no test here should need it
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  httplib::Server server_;
  int port_ = 0;
  int closed_port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
  std::string user_agent_;
  FetchOptions options_;
};

TEST_F(WebFetchTest, FetchesAPage) {
  StatusOr<FetchResult> r = Fetch(Url("/page"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, kPage);
  EXPECT_EQ(r->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r->final_url, Url("/page"));
  EXPECT_EQ(r->connected_address, "127.0.0.1:" + std::to_string(port_));
  EXPECT_FALSE(r->truncated);
  EXPECT_TRUE(r->redirects.empty());
  EXPECT_EQ(r->cross_host_redirect, "");
  EXPECT_EQ(user_agent_, "Odin-WebFetch/1");
}

TEST_F(WebFetchTest, AnErrorStatusIsAResult) {
  StatusOr<FetchResult> r = Fetch(Url("/missing"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "no");
}

TEST_F(WebFetchTest, SameHostRedirectsAreFollowedAndListed) {
  StatusOr<FetchResult> r = Fetch(Url("/r1"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, kPage);
  EXPECT_EQ(r->final_url, Url("/page"));
  EXPECT_EQ(r->redirects, (std::vector<std::string>{Url("/dir/r2"), Url("/dir/r3"), Url("/page")}));
  EXPECT_EQ(r->cross_host_redirect, "");
}

TEST_F(WebFetchTest, AsManyRedirectsAsAllowedAreFollowed) {
  options_.max_redirects = 5;
  StatusOr<FetchResult> r = Fetch(Url("/chain/4"), options_);  // 4 + 1 to /page
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->redirects.size(), 5u);
}

TEST_F(WebFetchTest, OneRedirectTooManyIsAnError) {
  options_.max_redirects = 5;
  StatusOr<FetchResult> r = Fetch(Url("/chain/5"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("more than 5 redirects"), std::string::npos) << r.status().message();
  options_.max_redirects = 0;
  EXPECT_EQ(Fetch(Url("/r1"), options_).status().code(), StatusCode::kResourceExhausted);
}

TEST_F(WebFetchTest, ARedirectWithoutALocationIsTheResult) {
  StatusOr<FetchResult> r = Fetch(Url("/no-location"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->body, "moved, but where?");
  EXPECT_EQ(r->cross_host_redirect, "");
}

TEST_F(WebFetchTest, ARedirectToAnotherPortIsReportedNotFollowed) {
  // Nothing listens on the other port: following it would fail.
  StatusOr<FetchResult> r = Fetch(Url("/to-other-port"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->cross_host_redirect, "http://127.0.0.1:" + std::to_string(closed_port_) + "/page");
  EXPECT_EQ(r->final_url, Url("/to-other-port"));
  EXPECT_TRUE(r->redirects.empty());
}

TEST_F(WebFetchTest, RedirectsToAnotherHostSchemeOrCredentialsAreReportedNotFollowed) {
  for (const char* path : {"/to-other-name", "/to-https", "/to-credentials"}) {
    StatusOr<FetchResult> r = Fetch(Url(path), options_);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 302) << path;
    EXPECT_NE(r->cross_host_redirect, "") << path;
  }
  EXPECT_EQ(requests_, 0);
  StatusOr<FetchResult> r = Fetch(Url("/to-other-name"), options_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cross_host_redirect, "http://localhost:" + std::to_string(port_) + "/page");
}

TEST_F(WebFetchTest, ARedirectToAnotherSchemeIsRefused) {
  for (const char* path : {"/to-ftp", "/to-file"}) {
    StatusOr<FetchResult> r = Fetch(Url(path), options_);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find("only http and https"), std::string::npos) << r.status().message();
  }
}

TEST_F(WebFetchTest, TheBodyIsCutAtMaxBytes) {
  options_.max_bytes = 1000;
  StatusOr<FetchResult> r = Fetch(Url("/bytes/1048576"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->body, std::string(1000, 'x'));
}

TEST_F(WebFetchTest, ABodyOfExactlyMaxBytesIsWhole) {
  options_.max_bytes = 1000;
  StatusOr<FetchResult> r = Fetch(Url("/bytes/1000"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->truncated);
  EXPECT_EQ(r->body.size(), 1000u);
}

TEST_F(WebFetchTest, A20MiBBodyIsCutAtTheDefault5MiB) {
  FetchOptions defaults;
  defaults.allow_private = options_.allow_private;
  ASSERT_EQ(defaults.max_bytes, size_t{5} << 20);
  StatusOr<FetchResult> r = Fetch(Url("/bytes/" + std::to_string(20 << 20)), defaults);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->body.size(), size_t{5} << 20);
}

TEST_F(WebFetchTest, AServerThatNeverAnswersTimesOut) {
  // Listening, never accepting: the kernel completes the handshake and the
  // request goes out, but no answer ever comes.
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  int port = ntohs(a.sin_port);
  options_.allow_private = {{"127.0.0.1", port}};
  options_.timeout_seconds = 1;
  StatusOr<FetchResult> r = Fetch("http://127.0.0.1:" + std::to_string(port) + "/", options_);
  close(listener);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_NE(r.status().message().find("timed out after 1 s"), std::string::npos) << r.status().message();
}

TEST_F(WebFetchTest, ACancelledFetchStops) {
  // The server accepts and never answers; the test cancels once it has
  // seen the connection arrive.
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  int port = ntohs(a.sin_port);
  options_.allow_private = {{"127.0.0.1", port}};
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  std::optional<StatusOr<FetchResult>> result;
  std::thread fetch([&] { result = Fetch("http://127.0.0.1:" + std::to_string(port) + "/", options_); });
  int connection = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  cancel = true;
  fetch.join();
  if (connection >= 0) close(connection);
  close(listener);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->status().code(), StatusCode::kCancelled) << result->status().ToString();
  // Cancelled before it starts, it stops at once.
  options_.allow_private = {{"127.0.0.1", port_}};
  EXPECT_EQ(Fetch(Url("/page"), options_).status().code(), StatusCode::kCancelled);
}

TEST_F(WebFetchTest, LoopbackIsRefusedUnlessAllowListed) {
  options_.allow_private.clear();
  StatusOr<FetchResult> r = Fetch(Url("/page"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.status().message(), "refused: 127.0.0.1:" + std::to_string(port_) + " is loopback, not a public address");
  // Another port of the same address is not enough either.
  options_.allow_private = {{"127.0.0.1", closed_port_}};
  EXPECT_EQ(Fetch(Url("/page"), options_).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(requests_, 0);
}

TEST_F(WebFetchTest, OtherSpellingsOfLoopbackAreRefusedEvenWithItListed) {
  std::string port = std::to_string(port_);
  for (const std::string& url :
       {"http://[::ffff:127.0.0.1]:" + port + "/page", "http://0.0.0.0:" + port + "/page",
        "http://[::]:" + port + "/page", "http://[::1]:" + port + "/page", "http://127.0.0.2:" + port + "/page"}) {
    StatusOr<FetchResult> r = Fetch(url, options_);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << url << ": " << r.status().ToString();
    EXPECT_EQ(r.status().message().rfind("refused: ", 0), 0u) << r.status().message();
  }
  EXPECT_EQ(requests_, 0);
}

TEST_F(WebFetchTest, LocalhostIsRefusedUnlessListedByName) {
  std::string url = "http://localhost:" + std::to_string(port_) + "/page";
  StatusOr<FetchResult> refused = Fetch(url, options_);  // 127.0.0.1:PORT is listed, localhost is not
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("is loopback"), std::string::npos) << refused.status().message();
  EXPECT_EQ(requests_, 0);
  options_.allow_private = {{"localhost", port_}};
  StatusOr<FetchResult> allowed = Fetch(url, options_);
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(allowed->connected_address, "127.0.0.1:" + std::to_string(port_));
}

TEST_F(WebFetchTest, OnlyHttpAndHttpsUrlsAreFetched) {
  for (const char* url : {"file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "example.com/page",
                          "javascript:alert(1)", "", "http://"}) {
    StatusOr<FetchResult> r = Fetch(url, options_);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << url << ": " << r.status().ToString();
  }
  EXPECT_NE(Fetch("ftp://127.0.0.1/x", options_).status().message().find("only http and https"), std::string::npos);
  StatusOr<FetchResult> credentials = Fetch("http://user:pw@127.0.0.1:" + std::to_string(port_) + "/page", options_);
  EXPECT_EQ(credentials.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(requests_, 0);
}

TEST_F(WebFetchTest, ProxiesFromTheEnvironmentAreIgnored) {
  std::string dead = "http://127.0.0.1:" + std::to_string(closed_port_);
  ScopedEnv http("http_proxy", dead);
  ScopedEnv https("https_proxy", dead);
  ScopedEnv all("ALL_PROXY", dead);
  ScopedEnv all_lower("all_proxy", dead);
  ScopedEnv no("no_proxy", "");
  StatusOr<FetchResult> r = Fetch(Url("/page"), options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->connected_address, "127.0.0.1:" + std::to_string(port_));
}

TEST_F(WebFetchTest, TheConfiguredProxyIsUsedAndLiteralHostsAreStillJudged) {
  options_.proxy = "http://127.0.0.1:" + std::to_string(closed_port_);
  // The proxy is used: it is not there, so the fetch cannot reach it.
  StatusOr<FetchResult> r = Fetch("http://example.com/", options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  // A private literal (or localhost) is refused before the proxy is asked.
  options_.allow_private.clear();
  for (const char* url : {"http://10.0.0.1/", "http://[::1]:8080/", "http://localhost/", "http://a.localhost/"}) {
    StatusOr<FetchResult> refused = Fetch(url, options_);
    EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << url << ": " << refused.status().ToString();
  }
}

TEST(UrlHostTest, IsTheLowerCaseHostWithoutBrackets) {
  EXPECT_EQ(*UrlHost("HTTPS://Docs.Example.COM:8443/a?b#c"), "docs.example.com");
  EXPECT_EQ(*UrlHost("http://[::1]:8080/"), "::1");
  EXPECT_EQ(*UrlHost("http://[2001:DB8::1]/"), "2001:db8::1");
  EXPECT_EQ(*UrlHost("http://127.1/"), "127.0.0.1");  // as libcurl will connect
}

TEST(UrlHostTest, RefusesWhatFetchRefuses) {
  for (const char* url : {"ftp://example.com/", "file:///etc/passwd", "example.com", "http://user:pw@example.com/",
                          "https://user@example.com/", "not a url"}) {
    StatusOr<std::string> host = UrlHost(url);
    ASSERT_FALSE(host.ok()) << url << " -> " << *host;
    EXPECT_EQ(host.status().code(), StatusCode::kInvalidArgument) << url;
  }
}

}  // namespace
}  // namespace odin
