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
  EXPECT_TRUE(tasks.WaitAll(std::chrono::seconds(30)));
  EXPECT_EQ(done.load(), 4);
}

TEST(BackgroundTasks, AWaitHasADeadlineAndATaskOutlivesItsOwner) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto done = std::make_shared<std::atomic<bool>>(false);
  {
    BackgroundTasks tasks;
    tasks.Run([release, done] {
      while (!*release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      *done = true;
    });
    EXPECT_FALSE(tasks.WaitAll(std::chrono::milliseconds(50)));
  }  // gone, the task still running
  *release = true;
  for (int i = 0; i < 2000 && !*done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(*done);
}

}  // namespace
}  // namespace odin
