#pragma once
// The tree's first look on a thread of its own (first_look.cc says when):
// the change tracker's reference (its Rescan) and, when asked, the
// protected paths' index, made while the model thinks. Whoever needs them
// joins it (Take); Stop cuts it short. Until Take, the tracker and the
// index are the thread's.

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

namespace odin {

class ChangeTracker;
class ProtectedIndex;

class FirstLookThread {
 public:
  FirstLookThread() = default;
  FirstLookThread(const FirstLookThread&) = delete;
  FirstLookThread& operator=(const FirstLookThread&) = delete;
  ~FirstLookThread() { Stop(); }

  // Starts the look with tracker and index (null: the index is made
  // already). False, and nothing kept, when no thread can be made.
  bool Start(std::unique_ptr<ChangeTracker> tracker, std::unique_ptr<ProtectedIndex> index);
  bool running() const { return tracker_ != nullptr; }
  // Whether a look was started and has ended (Take then waits for nothing).
  bool done() const { return running() && done_.load(std::memory_order_acquire); }
  // Waits for the look to end and hands over what it made, calling
  // while_waiting every 10 ms meanwhile (a large tree's look takes seconds:
  // the workers must go on hearing from the coordinator).
  std::pair<std::unique_ptr<ChangeTracker>, std::unique_ptr<ProtectedIndex>> Take(
      const std::function<void()>& while_waiting = nullptr);
  // Cuts the look short and drops what it made.
  void Stop();

 private:
  std::unique_ptr<ChangeTracker> tracker_;
  std::unique_ptr<ProtectedIndex> index_;
  std::thread thread_;
  std::atomic<bool> done_{false};
};

}  // namespace odin
