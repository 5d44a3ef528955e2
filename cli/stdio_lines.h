#pragma once
// The lines of a stdio protocol server (odin acp; one JSON-RPC message a
// line), each way on a thread of its own:
// - StdoutLines: what it sends its client, so that a client that stops
//   reading never stalls the session: Write only queues. Past max_bytes
//   queued, or once the client has gone (EPIPE), Write refuses and
//   failed() says why; the server's loop polls wake_fd() and ends the
//   session instead of waiting on it.
// - StdinLines: what the client sends, so that an answer a session's thread
//   waits for reaches it while the server's own thread is busy.
//
// Thread-safety: Write and Take may be called from any thread.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace odin {

class StdoutLines {
 public:
  StdoutLines(int fd, size_t max_bytes);
  // Writes what is queued, for up to 5 seconds, then stops the thread.
  ~StdoutLines();
  StdoutLines(const StdoutLines&) = delete;
  StdoutLines& operator=(const StdoutLines&) = delete;

  // Queues line (a "\n" is added); false, dropping it, once failed.
  bool Write(std::string line);
  // Why the lines stopped ("" while they flow): the client stopped
  // reading, or went away.
  std::string failed() const;
  // Readable once failed() is not "" (an eventfd).
  int wake_fd() const { return wake_fd_; }

 private:
  void Run();
  void Fail(const std::string& why);

  int fd_;
  size_t max_bytes_;
  int flags_ = -1;  // fd_'s, as they were
  int wake_fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::string failed_;
  std::thread thread_;
};

// Reads fd (stdin) into lines until it ends. A line route takes (returns
// true for: an answer someone waits on) goes there, on the reading thread;
// the rest queue for Take. Blank lines are dropped, a "\r" before "\n"
// too.
class StdinLines {
 public:
  StdinLines(int fd, size_t max_line_bytes, std::function<bool(const std::string&)> route);
  // Stops the reading thread.
  ~StdinLines();
  StdinLines(const StdinLines&) = delete;
  StdinLines& operator=(const StdinLines&) = delete;

  // Readable when lines are queued or the input ended (an eventfd).
  int wake_fd() const { return wake_fd_; }
  // The lines queued; *ended is "" while the input is open, "eof" at its
  // end, else what went wrong (a line over max_line_bytes, a read error).
  std::deque<std::string> Take(std::string* ended);

 private:
  void Run();
  void Wake();

  int fd_;
  size_t max_line_bytes_;
  std::function<bool(const std::string&)> route_;
  int flags_ = -1;  // fd_'s, as they were
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::deque<std::string> lines_;
  std::string ended_;
  std::thread thread_;
};

}  // namespace odin
