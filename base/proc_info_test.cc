#include "base/proc_info.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

// The state letter of pid in /proc, '?' when it is gone.
char StateOf(pid_t pid) {
  StatusOr<std::string> stat = ReadRegularFile("/proc/" + std::to_string(pid) + "/stat", 1 << 16);
  if (!stat.ok()) return '?';
  size_t close = stat->rfind(')');
  return close == std::string::npos || close + 2 >= stat->size() ? '?' : (*stat)[close + 2];
}

// A process has a start time while it runs; once it has ended it has none,
// even while its parent has not reaped it yet (a zombie is no owner).
TEST(ProcInfoTest, AProcessThatEndedHasNoStartTimeEvenUnreaped) {
  EXPECT_FALSE(ProcessStartTime(getpid()).empty());
  EXPECT_FALSE(BootId().empty());
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    close(go[1]);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  close(go[0]);
  std::string started = ProcessStartTime(child);
  EXPECT_FALSE(started.empty());
  close(go[1]);  // the child ends; nobody reaps it yet
  for (int i = 0; i < 500 && StateOf(child) != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(StateOf(child), 'Z');
  EXPECT_EQ(ProcessStartTime(child), "");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(ProcessStartTime(child), "");
}

}  // namespace
}  // namespace odin
