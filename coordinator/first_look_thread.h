#pragma once
// A look at the whole tree on a thread of its own (first_look.cc says
// when), made while the model thinks: the change tracker's first look (its
// reference) and, when asked, the protected paths' index; or, where the
// tracker has no watches, a later look, whose findings Take hands over.
// Whoever needs them joins it (Take); Stop cuts it short. Until Take, the
// tracker and the index are the thread's.

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

namespace odin {

class ChangeTracker;
class ProtectedIndex;
struct ChangeSet;

class FirstLookThread {
 public:
  FirstLookThread() = default;
  FirstLookThread(const FirstLookThread&) = delete;
  FirstLookThread& operator=(const FirstLookThread&) = delete;
  ~FirstLookThread();

  // Starts the look with tracker and index (null: the index is made
  // already). False when no thread can be made: then nothing was looked
  // at, and Take hands tracker and index back at once.
  bool Start(std::unique_ptr<ChangeTracker> tracker, std::unique_ptr<ProtectedIndex> index);
  bool running() const { return tracker_ != nullptr; }
  // Whether a look was started and has ended (Take then waits for nothing).
  bool done() const { return running() && done_.load(std::memory_order_acquire); }
  // Waits for the look to end and hands over what it made, calling
  // while_waiting every 10 ms meanwhile (a large tree's look takes seconds:
  // the workers must go on hearing from the coordinator). found, if not
  // null, gets what the look found changed since the tracker's previous
  // one (nothing, for a first look).
  std::pair<std::unique_ptr<ChangeTracker>, std::unique_ptr<ProtectedIndex>> Take(
      const std::function<void()>& while_waiting = nullptr, ChangeSet* found = nullptr);
  // Cuts the look short and drops what it made.
  void Stop();

 private:
  std::unique_ptr<ChangeTracker> tracker_;
  std::unique_ptr<ProtectedIndex> index_;
  std::unique_ptr<ChangeSet> found_;
  std::thread thread_;
  std::atomic<bool> done_{false};
};

}  // namespace odin
