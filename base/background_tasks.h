#pragma once
// Work put off the caller's way onto threads of their own (removing what a
// command's overlay used), which the owner waits for before it goes: a
// process that exits while such a thread runs leaves the work half done.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace odin {

class BackgroundTasks {
 public:
  BackgroundTasks() = default;
  BackgroundTasks(const BackgroundTasks&) = delete;
  BackgroundTasks& operator=(const BackgroundTasks&) = delete;
  // Does not wait: a task still running keeps what it needs of this.
  ~BackgroundTasks() = default;

  // Runs task on a thread of its own.
  void Run(std::function<void()> task);
  // Returns once every task run so far has finished (true), or when limit
  // has passed (false).
  bool WaitAll(std::chrono::milliseconds limit);

 private:
  struct State {
    std::mutex mu;
    std::condition_variable idle;
    int running = 0;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace odin
