#include "workers/overlay_keeper.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "base/subprocess.h"

namespace odin {

// How long Take waits for the overlay being made: a mount that hangs must
// not hold a command up (it makes an overlay of its own then).
constexpr auto kTakeWait = std::chrono::milliseconds(100);
// How long the destructor waits for the thread before it kills the child
// making an overlay, and again before it leaves the thread be: the
// coordinator SIGKILLs a worker one second after its SIGTERM.
constexpr auto kStopWait = std::chrono::milliseconds(200);

struct OverlayKeeper::State {
  State(MakeFn m, std::unique_ptr<PreparedOverlay> r, int t) : make(std::move(m)), tries(t), ready(std::move(r)) {}

  const MakeFn make;
  const int tries;
  std::mutex mu;
  std::condition_variable wake;   // the thread: asked to make one, to let go, or to stop
  std::condition_variable made;   // Take: the one being made is done
  std::condition_variable ended;  // the destructor: the thread is done
  std::unique_ptr<PreparedOverlay> ready;
  std::vector<std::unique_ptr<PreparedOverlay>> used;
  bool wanted = false, making = false, stop = false, enabled = true, done = false;
  int failures = 0;  // in a row
  pid_t tid = 0;     // the thread's, once it runs

  // REQUIRES: mu held.
  void Failed() {
    if (++failures >= tries) enabled = false;
  }
};

OverlayKeeper::OverlayKeeper(MakeFn make, std::unique_ptr<PreparedOverlay> ready, int tries)
    : s_(std::make_shared<State>(std::move(make), std::move(ready), tries)) {
  // The thread inherits our mask: every signal blocked from its first
  // instruction, so none is delivered to it.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  thread_ = std::thread([s = s_] { Run(s); });
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

OverlayKeeper::~OverlayKeeper() {
  std::unique_lock<std::mutex> lock(s_->mu);
  s_->stop = true;
  s_->wake.notify_one();
  if (!s_->ended.wait_for(lock, kStopWait, [this] { return s_->done; })) {
    // A mount that hangs (a workspace on a stuck network file system):
    // kill the child doing it, whose waiter then goes on.
    if (s_->tid != 0) {
      for (pid_t child : ListChildrenOfThread(s_->tid)) kill(child, SIGKILL);
    }
    if (!s_->ended.wait_for(lock, kStopWait, [this] { return s_->done; })) {
      // Not even a killed child lets it go: the process's exit ends it.
      // What it holds is its own (the state is shared), never freed under it.
      fprintf(stderr, "odin-worker: the overlay keeper did not stop; left to the exit\n");
      lock.unlock();
      thread_.detach();
      return;
    }
  }
  lock.unlock();
  thread_.join();
  // The thread's last reference may be gone already; ours lets go of the
  // rest here, on this thread.
  s_->used.clear();
  s_->ready.reset();
}

void OverlayKeeper::Prepare() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (!s_->enabled || s_->ready != nullptr || s_->making) return;
    s_->wanted = true;
  }
  s_->wake.notify_one();
}

std::unique_ptr<PreparedOverlay> OverlayKeeper::Take() {
  std::unique_lock<std::mutex> lock(s_->mu);
  bool finished = s_->made.wait_for(lock, kTakeWait, [this] { return !s_->enabled || (!s_->making && !s_->wanted); });
  // One that takes this long is no help (and may never come): after a few
  // such in a row, commands make their own.
  if (!finished) {
    fprintf(stderr, "odin-worker: the overlay being prepared was not ready in time\n");
    s_->Failed();
  }
  return std::move(s_->ready);
}

void OverlayKeeper::Release(std::unique_ptr<PreparedOverlay> used) {
  if (used == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->used.push_back(std::move(used));
  }
  s_->wake.notify_one();
}

void OverlayKeeper::StopPreparing() {
  std::unique_ptr<PreparedOverlay> ready;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->enabled = false;
    s_->wanted = false;
    ready = std::move(s_->ready);
  }
  s_->made.notify_all();
  Release(std::move(ready));
}

bool OverlayKeeper::preparing() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->enabled;
}

void OverlayKeeper::Run(const std::shared_ptr<State>& s) {
  // A command's end kills what it left running (KillAllDescendants): not
  // the child making an overlay. Where the process has no slot left for
  // us, nothing is prepared (it would be killed half made).
  bool keeps = KeepOwnChildren();
  std::unique_lock<std::mutex> lock(s->mu);
  s->tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (!keeps) {
    fprintf(stderr, "odin-worker: no overlay prepared: no slot to keep the preparing child in\n");
    s->enabled = false;
    s->wanted = false;
  }
  for (;;) {
    s->wake.wait(lock, [&] { return s->stop || s->wanted || !s->used.empty(); });
    if (s->stop) break;
    // The next command's overlay first: a command may be waiting for it.
    if (s->wanted) {
      s->wanted = false;
      s->making = true;
      lock.unlock();
      StatusOr<std::unique_ptr<PreparedOverlay>> next = s->make();
      lock.lock();
      s->making = false;
      if (next.ok()) {
        s->failures = 0;
        if (s->enabled)
          s->ready = std::move(*next);
        else
          s->used.push_back(std::move(*next));
      } else {
        // Out of fds or space for a moment, or never: the next command
        // makes its own, and after a few failures in a row all do.
        fprintf(stderr, "odin-worker: no overlay prepared: %s\n", next.status().ToString().c_str());
        s->Failed();
      }
      s->made.notify_all();
    }
    std::vector<std::unique_ptr<PreparedOverlay>> used = std::move(s->used);
    s->used.clear();
    lock.unlock();
    used.clear();  // the mount namespaces' teardown, off the command's way
    lock.lock();
  }
  if (keeps) KeepOwnChildren(false);
  s->done = true;
  s->ended.notify_all();
}

}  // namespace odin
