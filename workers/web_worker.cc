#include "workers/web_worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/unique_fd.h"
#include "odin/v1/worker.pb.h"
#include "tools/text_file.h"
#include "tools/tool_catalog.h"
#include "tools/tool_input.h"
#include "tools/tool_result.h"
#include "web/html_markdown.h"
#include "web/web_fetch.h"
#include "workers/worker_channel.h"

namespace odin {
namespace {

using nlohmann::json;

// What of a page the result carries: the utility model reads at most
// 100 KiB of it (planner/web_answer.h), the ledger keeps this much.
constexpr size_t kPageBytes = 256 * 1024;

// Types whose bytes are text a model can read; HTML is converted first.
bool IsHtml(const std::string& type) { return type == "text/html" || type == "application/xhtml+xml"; }
bool IsText(const std::string& type) {
  if (type.rfind("text/", 0) == 0) return true;
  for (const char* t : {"application/json", "application/xml", "application/javascript", "application/x-javascript",
                        "application/ecmascript", "application/yaml", "application/x-yaml", "application/toml",
                        "application/x-sh", "application/rss+xml", "application/atom+xml"}) {
    if (type == t) return true;
  }
  return type.size() > 5 &&
         (type.compare(type.size() - 5, 5, "+json") == 0 || type.compare(type.size() - 4, 4, "+xml") == 0);
}

// "text/html; charset=utf-8" -> "text/html".
std::string MediaType(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  for (char& ch : t) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  return t;
}

// One fetch, run on a thread of its own: libcurl blocks, heartbeats must not.
struct Job {
  v1::ToolRequest req;
  std::atomic<bool> cancel{false};
  std::optional<StatusOr<FetchResult>> done;  // written by the thread before it signals
  std::thread thread;
};

class Worker : public WorkerLogic {
 public:
  explicit Worker(Clock* clock) : clock_(clock) {}
  ~Worker() override { Stop(); }

  bool Init() {
    StatusOr<Pipe> p = MakePipe(O_CLOEXEC | O_NONBLOCK);
    if (!p.ok()) return false;
    wake_ = std::move(*p);
    return true;
  }
  void Attach(WorkerChannel* channel) override { channel_ = channel; }
  void Handle(const v1::Envelope& env) override;
  void AddWatchFds(std::vector<PollFd>* fds) override { fds->push_back({wake_.read_end.get()}); }
  void Service() override;
  void Stop() override {
    if (job_) {
      job_->cancel = true;
      if (job_->thread.joinable()) job_->thread.join();
      job_.reset();
    }
  }

 private:
  void Start(const v1::ToolRequest& req);
  void Finish(const StatusOr<FetchResult>& fetched);
  void Fail(const v1::ToolRequest& req, v1::ToolStatus status, const Status& why,
            int exit_reason = v1::EXIT_REASON_NORMAL, uint64_t duration_us = 0);

  Clock* clock_;
  WorkerChannel* channel_ = nullptr;
  Pipe wake_;
  std::unique_ptr<Job> job_;
  SteadyTime started_{};
};

void Worker::Handle(const v1::Envelope& env) {
  switch (env.body_case()) {
    case v1::Envelope::kToolRequest: Start(env.tool_request()); break;
    case v1::Envelope::kCancel: {
      if (!job_ || env.cancel().execution_id() != job_->req.execution_id()) break;
      bool timeout = env.cancel().reason() == v1::CANCEL_REASON_TIMEOUT;
      v1::ToolRequest req = job_->req;
      Stop();  // the transfer's progress callback sees the flag at once
      Fail(req, timeout ? v1::TOOL_STATUS_TIMED_OUT : v1::TOOL_STATUS_CANCELLED,
           timeout ? Status::DeadlineExceeded("WebFetch", "out of time") : Status::Cancelled("WebFetch cancelled"),
           timeout ? v1::EXIT_REASON_TIMEOUT : v1::EXIT_REASON_KILLED);
      break;
    }
    default: break;
  }
}

void Worker::Fail(const v1::ToolRequest& req, v1::ToolStatus status, const Status& why, int exit_reason,
                  uint64_t duration_us) {
  v1::ToolResult r;
  r.set_execution_id(req.execution_id());
  r.set_duration_us(duration_us);
  std::string text = FailResult(&r, status, why);
  r.set_exit_reason(static_cast<v1::ExitReason>(exit_reason));
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  channel_->QueueResult(std::move(r));
}

void Worker::Start(const v1::ToolRequest& req) {
  if (job_) {
    return Fail(req, v1::TOOL_STATUS_ERROR, Status::FailedPrecondition("the network worker", "is busy"));
  }
  if (!req.input().has_web_fetch()) {
    return Fail(req, v1::TOOL_STATUS_ERROR, Status::InvalidArgument("the network worker runs only WebFetch"));
  }
  StatusOr<WebFetchArgs> args = ArgsOf(req.input().web_fetch());
  const v1::WebFetchOptions& w = req.web_fetch();
  // The domain rules judged the host the coordinator read; libcurl must
  // read the same one.
  StatusOr<std::string> host = UrlHost(args->url);
  if (!host.ok()) return Fail(req, v1::TOOL_STATUS_ERROR, host.status());
  if (*host != w.expected_host()) {
    return Fail(req, v1::TOOL_STATUS_REJECTED,
                Status::PermissionDenied("WebFetch " + args->url, "the permission rules judged the host '" +
                                                                      w.expected_host() + "', libcurl reads '" + *host +
                                                                      "': an ambiguous URL is not fetched"));
  }
  FetchOptions options;
  for (const std::string& entry : w.allow_private()) {
    StatusOr<PrivateAllow> allow = ParsePrivateAllow(entry);
    if (allow.ok()) options.allow_private.push_back(*allow);
  }
  options.proxy = w.proxy();
  if (w.max_bytes() > 0) options.max_bytes = w.max_bytes();
  if (w.timeout_seconds() > 0) options.timeout_seconds = static_cast<int>(w.timeout_seconds());
  options.max_redirects = static_cast<int>(w.max_redirects());
  job_ = std::make_unique<Job>();
  job_->req = req;
  options.cancel = &job_->cancel;
  started_ = clock_->Now();
  Job* job = job_.get();
  int wake = wake_.write_end.get();
  job->thread = std::thread([job, wake, url = args->url, options] {
    job->done = Fetch(url, options);
    char byte = 1;
    (void)!write(wake, &byte, 1);
  });
}

void Worker::Service() {
  char drain[64];
  while (read(wake_.read_end.get(), drain, sizeof drain) > 0) {
  }
  if (!job_ || !job_->done) return;
  job_->thread.join();
  StatusOr<FetchResult> fetched = std::move(*job_->done);
  Finish(fetched);
}

void Worker::Finish(const StatusOr<FetchResult>& fetched) {
  v1::ToolRequest req = std::move(job_->req);
  job_.reset();
  uint64_t duration_us =
      static_cast<uint64_t>(std::chrono::duration_cast<microseconds>(clock_->Now() - started_).count());
  // Refused at connect time, timed out, unreachable: Odin's word, and no page.
  if (!fetched.ok()) return Fail(req, v1::TOOL_STATUS_ERROR, fetched.status(), v1::EXIT_REASON_NORMAL, duration_us);
  const FetchResult& f = *fetched;
  json facts = {{"url", req.input().web_fetch().url()},    {"final_url", f.final_url}, {"http_status", f.status},
                {"content_type", f.content_type},          {"bytes", f.body.size()},   {"truncated", f.truncated},
                {"connected_address", f.connected_address}};
  if (!f.redirects.empty()) facts["redirects"] = f.redirects;
  v1::ToolResult r;
  r.set_execution_id(req.execution_id());
  r.set_duration_us(duration_us);
  std::string text;
  std::string type = MediaType(f.content_type);
  if (!f.cross_host_redirect.empty()) {
    facts["cross_host_redirect"] = f.cross_host_redirect;
    r.set_status(v1::TOOL_STATUS_OK);
    text = "The server redirected (HTTP " + std::to_string(f.status) +
           ") to another host: " + ToDisplayText(f.cross_host_redirect) +
           "\nOdin does not follow a redirect to another host. Fetch that URL with WebFetch if you still need it "
           "(its domain meets the permission rules).\n";
  } else if (f.status < 200 || f.status >= 300) {
    text = FailResult(&r, v1::TOOL_STATUS_ERROR,
                      Status::Unavailable(f.final_url, "answered HTTP " + std::to_string(f.status)));
  } else if (IsHtml(type) || (type.empty() && f.body.find("<html") != std::string::npos)) {
    std::string title;
    text = HtmlToMarkdown(f.body, &title, kPageBytes);
    if (!title.empty()) facts["title"] = ToDisplayText(title);
    r.set_status(v1::TOOL_STATUS_OK);
  } else if (IsText(type)) {
    text = ToDisplayText(f.body.substr(0, kPageBytes));
    r.set_status(v1::TOOL_STATUS_OK);
  } else {
    text = FailResult(
        &r, v1::TOOL_STATUS_ERROR,
        Status::InvalidArgument(f.final_url, "is " + (type.empty() ? std::string("of no stated type") : type) +
                                                 ", not text or HTML: WebFetch reads only pages"));
  }
  r.set_output_json(facts.dump(-1, ' ', false, json::error_handler_t::replace));
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  channel_->QueueResult(std::move(r));
}

}  // namespace

int RunWebWorker(const WorkerOptions& options, Clock* clock) {
  Worker worker(clock);
  if (!worker.Init()) {
    spdlog::error("odin-web-worker: cannot make its wake-up pipe");
    return 1;
  }
  WorkerHello hello;
  hello.kind = v1::WORKER_KIND_NET_TOOL;
  hello.capabilities = {kWebFetchTool};
  return RunWorkerLoop(options, hello, clock, &worker);
}

}  // namespace odin
