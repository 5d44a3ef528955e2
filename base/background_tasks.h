#pragma once
// Work put off the caller's way onto threads of their own (removing what a
// command's overlay used), which the owner waits for before it goes: a
// process that exits while such a thread runs leaves the work half done.

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
  ~BackgroundTasks() { WaitAll(); }

  // Runs task on a thread of its own.
  void Run(std::function<void()> task);
  // Returns once every task run so far has finished.
  void WaitAll();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable idle;
    int running = 0;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace odin
