#include "cli/stdio_lines.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <optional>
#include <fcntl.h>

namespace odin {

StdoutLines::StdoutLines(int fd, size_t max_bytes) : fd_(fd), max_bytes_(max_bytes) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Non-blocking, so the destructor's deadline holds on a client that reads
  // nothing; the file's flags are put back at the end (it may be a
  // terminal's, or shared with stderr).
  flags_ = fcntl(fd_, F_GETFL);
  fcntl(fd_, F_SETFL, flags_ | O_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

StdoutLines::~StdoutLines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  if (flags_ >= 0) fcntl(fd_, F_SETFL, flags_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

bool StdoutLines::Write(std::string line) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.empty()) return false;
    if (queued_bytes_ + line.size() + 1 > max_bytes_) {
      failed_ = "the client stopped reading (" + std::to_string(queued_bytes_ >> 20) + " MiB of output waiting)";
    } else {
      line += '\n';
      queued_bytes_ += line.size();
      queue_.push_back(std::move(line));
    }
  }
  changed_.notify_all();
  if (failed().empty()) return true;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  return false;
}

std::string StdoutLines::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void StdoutLines::Fail(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.empty()) failed_ = why;
    queue_.clear();
    queued_bytes_ = 0;
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void StdoutLines::Run() {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;  // set once stopping
  for (;;) {
    std::string line;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() || !failed_.empty()) return;
      if (stopping_ && !deadline) deadline = Clock::now() + std::chrono::seconds(5);
      line = std::move(queue_.front());
      queue_.pop_front();
    }
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = write(fd_, line.data() + done, line.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        bool stopping, failed;
        {
          std::lock_guard<std::mutex> lock(mu_);
          stopping = stopping_;
          failed = !failed_.empty();
        }
        if (failed) return;  // the lines stopped: nobody waits for the rest
        if (stopping && !deadline) deadline = Clock::now() + std::chrono::seconds(5);
        if (deadline && Clock::now() >= *deadline) return Fail("the client stopped reading");
        pollfd p = {fd_, POLLOUT, 0};
        (void)poll(&p, 1, 200);
        continue;
      }
      return Fail("the client went away");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      queued_bytes_ -= line.size();
    }
  }
}

StdinLines::StdinLines(int fd, size_t max_line_bytes, std::function<bool(const std::string&)> route)
    : fd_(fd), max_line_bytes_(max_line_bytes), route_(std::move(route)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  flags_ = fcntl(fd_, F_GETFL);
  fcntl(fd_, F_SETFL, flags_ | O_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

StdinLines::~StdinLines() {
  stopping_ = true;
  thread_.join();
  if (flags_ >= 0) fcntl(fd_, F_SETFL, flags_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void StdinLines::Wake() {
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

std::deque<std::string> StdinLines::Take(std::string* ended) {
  uint64_t n;
  (void)!read(wake_fd_, &n, sizeof n);
  std::lock_guard<std::mutex> lock(mu_);
  *ended = ended_;
  std::deque<std::string> out;
  out.swap(lines_);
  return out;
}

void StdinLines::Run() {
  auto end = [this](std::string why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = std::move(why);
    }
    Wake();
  };
  std::string in;
  char buf[64 * 1024];
  while (!stopping_) {
    pollfd p = {fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return end(n == 0 ? "eof" : std::string("reading stdin: ") + strerror(errno));
    in.append(buf, static_cast<size_t>(n));
    size_t from = 0;
    bool queued = false;
    for (size_t nl; (nl = in.find('\n', from)) != std::string::npos; from = nl + 1) {
      std::string line = in.substr(from, nl - from);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos || route_(line)) continue;
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(std::move(line));
      queued = true;
    }
    in.erase(0, from);
    if (queued) Wake();
    if (in.size() > max_line_bytes_) {
      return end("a message longer than " + std::to_string(max_line_bytes_ >> 20) + " MiB");
    }
  }
}

}  // namespace odin
