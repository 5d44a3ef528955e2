// HttpClient against a real HTTP server in this process (cpp-httplib on a
// thread of its own), driven the way the coordinator's loop drives it: poll
// its fds, wake for its timer, hand the readiness back. The server waits on
// gates the test opens, so every "before" and "after" is an event, never a
// sleep.

#include "llm/http_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

namespace odin {
namespace {

// A one-shot signal between the test and the server's handler threads.
class Gate {
 public:
  Gate() : future_(promise_.get_future().share()) {}
  void Open() {
    std::call_once(once_, [this] { promise_.set_value(); });
  }
  // Returns whether the gate opened within ten seconds.
  bool Wait() const { return future_.wait_for(std::chrono::seconds(10)) == std::future_status::ready; }

 private:
  std::promise<void> promise_;
  std::shared_future<void> future_;
  std::once_flag once_;
};

// What one transfer's callbacks saw.
struct Outcome {
  int heads = 0;
  HttpResponseHead head;
  std::vector<std::string> pieces;  // the body, as it arrived
  bool done = false;
  Status status;
  int http_status = -1;
  std::string body() const {
    std::string all;
    for (const std::string& p : pieces) all += p;
    return all;
  }
};

HttpClient::Callbacks Record(Outcome* o) {
  return {[o](const HttpResponseHead& h) {
            ++o->heads;
            o->head = h;
          },
          [o](std::string_view piece) { o->pieces.emplace_back(piece); },
          [o](const Status& s, int http_status) {
            o->done = true;
            o->status = s;
            o->http_status = http_status;
          }};
}

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

class HttpClientTest : public ::testing::Test {
 protected:
  // Starts the server with the handlers the test registered, and returns
  // once it has answered a first request (stop() does nothing to a server
  // whose loop has not begun).
  void Listen() {
    server_.Get("/ready", [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/plain"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    httplib::Client ping("127.0.0.1", port_);
    ping.set_read_timeout(10, 0);
    httplib::Result ready = ping.Get("/ready");
    ASSERT_TRUE(ready && ready->status == 200) << "the test server did not answer";
  }
  void TearDown() override {
    // Handlers still waiting are let go and kept-alive connections closed
    // first: stop() waits for every handler thread.
    for (Gate* g : {&first_sent_seen_, &release_}) g->Open();
    client_.reset();
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }

  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  HttpRequest Get(const std::string& path) const {
    HttpRequest r;
    r.method = "GET";
    r.url = Url(path);
    return r;
  }

  // Runs the client until `until` holds; false if that takes ten seconds.
  bool Drive(const std::function<bool()>& until) {
    return client_->RunUntil(until, RealClock::Get()->Now() + seconds(10));
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<HttpClient> client_ = std::make_unique<HttpClient>();
  Gate first_sent_seen_;  // the test has seen the first event of a stream
  Gate release_;          // a held handler may answer (or go on)
};

TEST_F(HttpClientTest, StreamedEventsArriveAsTheServerSendsThem) {
  // The second event is sent only once the client has delivered the first:
  // a client that waited for the whole body would never see it.
  server_.Post("/v1/stream", [this](const httplib::Request&, httplib::Response& res) {
    auto sent = std::make_shared<int>(0);
    res.set_chunked_content_provider("text/event-stream", [this, sent](size_t, httplib::DataSink& sink) {
      if (*sent == 0) {
        sink.write("data: one\n\n", 11);
      } else {
        if (!first_sent_seen_.Wait()) return false;
        sink.write("data: two\n\n", 11);
        sink.done();
      }
      ++*sent;
      return true;
    });
  });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/v1/stream");
  r.body = R"({"stream":true})";
  Outcome o;
  client_->Start(r, Record(&o));
  ASSERT_TRUE(Drive([&] { return o.body().find("data: one\n\n") != std::string::npos; }));
  EXPECT_EQ(o.heads, 1);
  EXPECT_EQ(o.head.status, 200);
  EXPECT_EQ(o.head.headers["content-type"], "text/event-stream");  // names in lower case
  EXPECT_FALSE(o.done);
  EXPECT_EQ(o.body(), "data: one\n\n");
  first_sent_seen_.Open();
  ASSERT_TRUE(Drive([&] { return o.done; }));
  EXPECT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.http_status, 200);
  EXPECT_EQ(o.body(), "data: one\n\ndata: two\n\n");
  EXPECT_EQ(o.heads, 1);
  EXPECT_TRUE(client_->idle());
}

TEST_F(HttpClientTest, TheRequestGoesOutWithItsMethodHeadersAndBody) {
  std::mutex mu;
  httplib::Request seen;
  server_.Post("/echo", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    seen = req;
    res.set_content("ok", "text/plain");
  });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/echo");
  r.headers = {"Authorization: Bearer k", "Content-Type: application/json"};
  r.body = std::string(2 << 20, 'x');  // large: still no "Expect: 100-continue" round trip
  Outcome o;
  client_->Start(r, Record(&o));
  ASSERT_TRUE(Drive([&] { return o.done; }));
  EXPECT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.body(), "ok");
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.get_header_value("Authorization"), "Bearer k");
  EXPECT_EQ(seen.get_header_value("Content-Type"), "application/json");
  EXPECT_FALSE(seen.has_header("Expect"));
  EXPECT_EQ(seen.body.size(), size_t{2} << 20);
}

TEST_F(HttpClientTest, AnErrorStatusIsAnAnswerWithItsHeadersAndBody) {
  server_.Post("/busy", [](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "7");
    res.set_content(R"({"error":{"message":"slow down"}})", "application/json");
  });
  server_.Get("/gone", [](const httplib::Request&, httplib::Response& res) { res.status = 500; });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/busy");
  Outcome busy, gone, missing;
  client_->Start(r, Record(&busy));
  client_->Start(Get("/gone"), Record(&gone));
  client_->Start(Get("/no-such-path"), Record(&missing));
  ASSERT_TRUE(Drive([&] { return busy.done && gone.done && missing.done; }));
  // The transfer worked: the status is the answer's, for the caller to judge.
  EXPECT_TRUE(busy.status.ok()) << busy.status.ToString();
  EXPECT_EQ(busy.http_status, 429);
  EXPECT_EQ(busy.heads, 1);
  EXPECT_EQ(busy.head.status, 429);
  EXPECT_EQ(busy.head.headers["retry-after"], "7");
  EXPECT_EQ(busy.body(), R"({"error":{"message":"slow down"}})");
  EXPECT_TRUE(gone.status.ok());
  EXPECT_EQ(gone.http_status, 500);
  EXPECT_EQ(gone.heads, 1);  // an empty body still has a head
  EXPECT_EQ(missing.http_status, 404);
}

TEST_F(HttpClientTest, AServerThatIsNotThereIsUnavailable) {
  int port = ClosedPort();
  ASSERT_GT(port, 0);
  HttpRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
  Outcome o;
  client_->Start(r, Record(&o));
  ASSERT_TRUE(Drive([&] { return o.done; }));
  EXPECT_EQ(o.status.code(), StatusCode::kUnavailable) << o.status.ToString();
  EXPECT_NE(o.status.message().find("cannot reach " + r.url), std::string::npos) << o.status.message();
  EXPECT_EQ(o.http_status, 0);
  EXPECT_EQ(o.heads, 0);
  EXPECT_TRUE(client_->idle());
}

TEST_F(HttpClientTest, AnAnswerSlowerThanTheTotalTimeoutIsDeadlineExceeded) {
  // The handler answers only when the test lets it, after the timeout.
  server_.Post("/slow", [this](const httplib::Request&, httplib::Response& res) {
    release_.Wait();
    res.set_content("too late", "text/plain");
  });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/slow");
  r.total_timeout = milliseconds(200);
  Outcome o;
  client_->Start(r, Record(&o));
  ASSERT_TRUE(Drive([&] { return o.done; }));
  release_.Open();
  EXPECT_EQ(o.status.code(), StatusCode::kDeadlineExceeded) << o.status.ToString();
  EXPECT_EQ(o.http_status, 0);
  EXPECT_TRUE(o.pieces.empty());
}

TEST_F(HttpClientTest, AResponseCutShortIsUnavailable) {
  // A raw server: promises 100 bytes, sends 3 and hangs up.
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  std::thread raw([listener] {
    int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::string request;
    char buf[4096];
    ssize_t n;
    while (request.find("\r\n\r\n") == std::string::npos && (n = read(c, buf, sizeof buf)) > 0) request.append(buf, n);
    std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc";
    (void)!write(c, answer.data(), answer.size());
    close(c);
  });
  HttpRequest r;
  r.method = "GET";
  r.url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/";
  Outcome o;
  client_->Start(r, Record(&o));
  bool finished = Drive([&] { return o.done; });
  raw.join();
  close(listener);
  ASSERT_TRUE(finished);
  EXPECT_EQ(o.status.code(), StatusCode::kUnavailable) << o.status.ToString();
  EXPECT_NE(o.status.message().find("cut off"), std::string::npos) << o.status.message();
  EXPECT_EQ(o.body(), "abc");
  EXPECT_EQ(o.http_status, 200);
}

TEST_F(HttpClientTest, AnUnsupportedUrlIsInvalidArgument) {
  HttpRequest r;
  r.url = "nosuchscheme://127.0.0.1/";
  Outcome o;
  client_->Start(r, Record(&o));
  ASSERT_TRUE(Drive([&] { return o.done; }));
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument) << o.status.ToString();
  EXPECT_EQ(o.http_status, 0);
}

TEST_F(HttpClientTest, ACancelledTransferSaysNothingMore) {
  // A stream that sends one event, then more once the test lets it.
  server_.Post("/v1/stream", [this](const httplib::Request&, httplib::Response& res) {
    auto sent = std::make_shared<int>(0);
    res.set_chunked_content_provider("text/event-stream", [this, sent](size_t, httplib::DataSink& sink) {
      if (*sent > 0 && !release_.Wait()) return false;
      std::string event = "data: " + std::to_string(*sent) + "\n\n";
      ++*sent;
      return sink.write(event.data(), event.size());
    });
  });
  server_.Get("/after",
              [](const httplib::Request&, httplib::Response& res) { res.set_content("after", "text/plain"); });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/v1/stream");
  Outcome cancelled;
  HttpClient::Id id = client_->Start(r, Record(&cancelled));
  ASSERT_TRUE(Drive([&] { return !cancelled.pieces.empty(); }));
  client_->Cancel(id);
  EXPECT_TRUE(client_->idle());
  release_.Open();  // the server goes on writing into a closed connection
  // Another transfer runs to its end; the cancelled one never speaks again.
  size_t pieces = cancelled.pieces.size();
  Outcome after;
  client_->Start(Get("/after"), Record(&after));
  ASSERT_TRUE(Drive([&] { return after.done; }));
  EXPECT_EQ(after.body(), "after");
  EXPECT_FALSE(cancelled.done);
  EXPECT_EQ(cancelled.pieces.size(), pieces);
  client_->Cancel(id);  // a second cancel, of an id that is gone, does nothing
  EXPECT_TRUE(client_->idle());
}

TEST_F(HttpClientTest, CancelFromInsideACallbackEndsTheTransferWithoutOnDone) {
  server_.Post("/v1/stream", [this](const httplib::Request&, httplib::Response& res) {
    auto sent = std::make_shared<int>(0);
    res.set_chunked_content_provider("text/event-stream", [this, sent](size_t, httplib::DataSink& sink) {
      if (*sent > 0 && !release_.Wait()) return false;
      ++*sent;
      return sink.write("data: one\n\n", 11);
    });
  });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest r;
  r.url = Url("/v1/stream");
  Outcome o;
  HttpClient::Id id = 0;
  HttpClient::Callbacks cb = Record(&o);
  cb.on_body = [&](std::string_view piece) {
    o.pieces.emplace_back(piece);
    client_->Cancel(id);  // the model's caller gives up mid-stream
  };
  id = client_->Start(r, cb);
  ASSERT_TRUE(Drive([&] { return client_->idle(); }));
  EXPECT_FALSE(o.done);
  EXPECT_EQ(o.pieces.size(), 1u);
}

TEST_F(HttpClientTest, ASecondRequestToTheSameServerReusesTheConnection) {
  std::mutex mu;
  std::vector<int> ports;  // the client's side of each request's connection
  server_.Get("/n", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    ports.push_back(req.remote_port);
    res.set_content("n", "text/plain");
  });
  ASSERT_NO_FATAL_FAILURE(Listen());
  for (int i = 0; i < 2; ++i) {
    Outcome o;
    client_->Start(Get("/n"), Record(&o));
    ASSERT_TRUE(Drive([&] { return o.done; }));
    EXPECT_TRUE(o.status.ok()) << o.status.ToString();
  }
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0], ports[1]);
}

TEST_F(HttpClientTest, TransfersRunSideBySide) {
  // The first answer waits for the test, which waits for the second: one
  // transfer at a time would never finish.
  server_.Post("/held", [this](const httplib::Request&, httplib::Response& res) {
    release_.Wait();
    res.set_content("held", "text/plain");
  });
  server_.Post("/quick",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("quick", "text/plain"); });
  ASSERT_NO_FATAL_FAILURE(Listen());
  HttpRequest held, quick;
  held.url = Url("/held");
  quick.url = Url("/quick");
  Outcome h, q;
  client_->Start(held, Record(&h));
  client_->Start(quick, Record(&q));
  ASSERT_TRUE(Drive([&] { return q.done; }));
  EXPECT_FALSE(h.done);
  EXPECT_FALSE(client_->idle());
  release_.Open();
  ASSERT_TRUE(Drive([&] { return h.done; }));
  EXPECT_EQ(h.body(), "held");
  EXPECT_EQ(q.body(), "quick");
  EXPECT_TRUE(client_->idle());
}

}  // namespace
}  // namespace odin
