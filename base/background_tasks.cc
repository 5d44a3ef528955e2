#include "base/background_tasks.h"

#include <thread>

namespace odin {

void BackgroundTasks::Run(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    ++state_->running;
  }
  // The thread holds the state, so it outlives this object if it must.
  std::thread([state = state_, task = std::move(task)] {
    task();
    std::lock_guard<std::mutex> lock(state->mu);
    if (--state->running == 0) state->idle.notify_all();
  }).detach();
}

bool BackgroundTasks::WaitAll(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->idle.wait_for(lock, limit, [this] { return state_->running == 0; });
}

}  // namespace odin
