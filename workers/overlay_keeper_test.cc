#include "workers/overlay_keeper.h"

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include <gtest/gtest.h>

#include "base/subprocess.h"

namespace odin {
namespace {

using Made = StatusOr<std::unique_ptr<PreparedOverlay>>;

// A make that does not return until let go (a mount that hangs and that no
// signal ends). Shared with the keeper's thread, which may outlive the test.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, open = false;

  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  bool WaitEntered() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [this] { return entered; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

// A command finds the overlay still being made (a mount that hangs): it
// does not wait for it, and after `tries` such commands none is prepared.
TEST(OverlayKeeperTest, ATakeThatFindsTheOverlayUnfinishedCountsAsAFailure) {
  auto gate = std::make_shared<Gate>();
  {
    OverlayKeeper keeper(
        [gate]() -> Made {
          gate->Wait();
          return Status::Internal("let go");
        },
        nullptr, 2);
    keeper.Prepare();
    ASSERT_TRUE(gate->WaitEntered());
    EXPECT_EQ(keeper.Take(), nullptr);
    EXPECT_TRUE(keeper.preparing());
    EXPECT_EQ(keeper.Take(), nullptr);
    EXPECT_FALSE(keeper.preparing()) << "two unfinished in a row, with tries 2";
    gate->Open();
  }
}

// A make that fails `tries` times in a row stops preparing.
TEST(OverlayKeeperTest, FailuresInARowStopPreparing) {
  std::atomic<int> made{0};
  OverlayKeeper keeper(
      [&made]() -> Made {
        ++made;
        return Status::Internal("no overlay");
      },
      nullptr, 3);
  for (int i = 0; i < 5; ++i) {
    keeper.Prepare();
    EXPECT_EQ(keeper.Take(), nullptr);
  }
  EXPECT_FALSE(keeper.preparing());
  EXPECT_EQ(made.load(), 3);
}

// The worker's stop does not wait forever on a mount that hangs: the child
// making the overlay is killed, and the thread then ends.
TEST(OverlayKeeperTest, StopKillsTheChildOfAMakeThatHangs) {
  std::atomic<pid_t> child{0};
  std::atomic<int> status{-1};
  {
    OverlayKeeper keeper(
        [&]() -> Made {
          StatusOr<pid_t> pid = Spawn({.argv = {"sleep", "600"}, .env = {"PATH=/usr/bin:/bin"}});
          if (!pid.ok()) return pid.status();
          child = *pid;
          int st = 0;
          WaitPid(*pid, &st, 0);
          status = st;
          return Status::Internal("the mount was killed");
        },
        nullptr, 3);
    keeper.Prepare();
    for (int i = 0; i < 3000 && child.load() == 0; ++i) usleep(10000);
    ASSERT_NE(child.load(), 0);
  }
  // Joined: the make returned, with its child killed.
  ASSERT_TRUE(WIFSIGNALED(status.load())) << status.load();
  EXPECT_EQ(WTERMSIG(status.load()), SIGKILL);
}

// Not even that ends it (no child to kill): the stop still returns, and
// the thread, left to the process's exit, holds its state safely.
TEST(OverlayKeeperTest, StopReturnsWhenTheThreadCannotBeEnded) {
  auto gate = std::make_shared<Gate>();
  {
    OverlayKeeper keeper(
        [gate]() -> Made {
          gate->Wait();
          return Status::Internal("let go");
        },
        nullptr, 3);
    keeper.Prepare();
    ASSERT_TRUE(gate->WaitEntered());
  }
  // The keeper is gone; its thread goes on, on state of its own.
  gate->Open();
}

}  // namespace
}  // namespace odin
