#include "coordinator/first_look_thread.h"

#include <chrono>
#include <set>
#include <string>
#include <system_error>

#include <spdlog/spdlog.h>

#include "workspace/change_tracker.h"
#include "workspace/protected_paths.h"

namespace odin {

FirstLookThread::~FirstLookThread() { Stop(); }

bool FirstLookThread::Start(std::unique_ptr<ChangeTracker> tracker, std::unique_ptr<ProtectedIndex> index) {
  tracker_ = std::move(tracker);
  index_ = std::move(index);
  found_ = std::make_unique<ChangeSet>();
  try {
    done_.store(false, std::memory_order_relaxed);
    thread_ = std::thread([look = tracker_.get(), index = index_.get(), found = found_.get(), done = &done_] {
      *found = look->Rescan();  // the reference, the first time
      if (index != nullptr && !look->stopped()) {
        // The protected paths' index too; what changes after it, the tracker hears.
        std::set<std::string> seen;
        look->TakeReported(&seen);
        index->Refresh();
      }
      done->store(true, std::memory_order_release);
    });
  } catch (const std::system_error& e) {
    spdlog::warn("no thread for a look at the tree: {}", e.what());
    done_.store(true, std::memory_order_release);
    return false;
  }
  return true;
}

std::pair<std::unique_ptr<ChangeTracker>, std::unique_ptr<ProtectedIndex>> FirstLookThread::Take(
    const std::function<void()>& while_waiting, ChangeSet* found) {
  while (while_waiting && thread_.joinable() && !done_.load(std::memory_order_acquire)) {
    while_waiting();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (thread_.joinable()) thread_.join();
  if (found != nullptr && found_) *found = std::move(*found_);
  found_.reset();
  return {std::move(tracker_), std::move(index_)};
}

void FirstLookThread::Stop() {
  if (!tracker_) return;
  tracker_->Stop();
  if (thread_.joinable()) thread_.join();
  tracker_.reset();  // its watches are released on a thread of its own
  index_.reset();
  found_.reset();
}

}  // namespace odin
