#include "base/background_tasks.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(BackgroundTasks, WaitAllReturnsOnlyOnceEveryTaskHasFinished) {
  std::atomic<int> done{0};
  BackgroundTasks tasks;
  for (int i = 0; i < 4; ++i) {
    tasks.Run([&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ++done;
    });
  }
  tasks.WaitAll();
  EXPECT_EQ(done.load(), 4);
}

TEST(BackgroundTasks, TheDestructorWaitsToo) {
  std::atomic<bool> done{false};
  {
    BackgroundTasks tasks;
    tasks.Run([&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace odin
