#include "workers/overlay_keeper.h"

#include <signal.h>

#include <chrono>
#include <cstdio>

#include "base/subprocess.h"

namespace odin {

// How long Take waits for the overlay being made: a mount that hangs must
// not hold a command up (it makes an overlay of its own then).
constexpr auto kTakeWait = std::chrono::milliseconds(100);

OverlayKeeper::OverlayKeeper(std::string workspace, std::string mounts, std::unique_ptr<PreparedOverlay> ready,
                             int tries)
    : workspace_(std::move(workspace)), mounts_(std::move(mounts)), tries_(tries), ready_(std::move(ready)) {
  // The thread inherits our mask: every signal blocked from its first
  // instruction, so none is delivered to it.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  thread_ = std::thread([this] { Run(); });
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

OverlayKeeper::~OverlayKeeper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  used_.clear();
  ready_.reset();
}

void OverlayKeeper::Prepare() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_ || ready_ != nullptr || making_) return;
    wanted_ = true;
  }
  wake_.notify_one();
}

std::unique_ptr<PreparedOverlay> OverlayKeeper::Take() {
  std::unique_lock<std::mutex> lock(mu_);
  made_.wait_for(lock, kTakeWait, [this] { return !making_ && !wanted_; });
  return std::move(ready_);
}

void OverlayKeeper::Release(std::unique_ptr<PreparedOverlay> used) {
  if (used == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_.push_back(std::move(used));
  }
  wake_.notify_one();
}

void OverlayKeeper::StopPreparing() {
  std::unique_ptr<PreparedOverlay> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    enabled_ = false;
    wanted_ = false;
    ready = std::move(ready_);
  }
  made_.notify_all();
  Release(std::move(ready));
}

void OverlayKeeper::Run() {
  // A command's end kills what it left running (KillAllDescendants): not
  // the child making an overlay.
  KeepOwnChildren();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || wanted_ || !used_.empty(); });
    if (stop_) break;
    // The next command's overlay first: a command may be waiting for it.
    if (wanted_) {
      wanted_ = false;
      making_ = true;
      lock.unlock();
      StatusOr<std::unique_ptr<PreparedOverlay>> next = PreparedOverlay::Make(workspace_, mounts_);
      lock.lock();
      making_ = false;
      if (next.ok()) {
        failures_ = 0;
        if (enabled_)
          ready_ = std::move(*next);
        else
          used_.push_back(std::move(*next));
      } else {
        // Out of fds or space for a moment, or never: the next command
        // makes its own, and after a few failures in a row all do.
        fprintf(stderr, "odin-worker: no overlay prepared: %s\n", next.status().ToString().c_str());
        if (++failures_ >= tries_) enabled_ = false;
      }
      made_.notify_all();
    }
    std::vector<std::unique_ptr<PreparedOverlay>> used = std::move(used_);
    used_.clear();
    lock.unlock();
    used.clear();  // the mount namespaces' teardown, off the command's way
    lock.lock();
  }
  KeepOwnChildren(false);
}

}  // namespace odin
