#include "base/unique_fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <gtest/gtest.h>

namespace odin {
namespace {

Pipe NewPipe() {
  StatusOr<Pipe> p = MakePipe(O_CLOEXEC);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

// True iff fd names an open file description in this process.
bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// Reads one byte: the byte, or -1 at end of file (every write end closed).
int ReadByte(int fd) {
  char c;
  ssize_t n = read(fd, &c, 1);
  return n == 1 ? c : -1;
}

TEST(UniqueFdTest, DefaultOwnsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
}

TEST(UniqueFdTest, DestructionClosesTheFd) {
  Pipe p = NewPipe();
  int number = p.write_end.get();
  {
    UniqueFd owner = std::move(p.write_end);
    EXPECT_FALSE(p.write_end.valid());
    EXPECT_EQ(owner.get(), number);
    ASSERT_EQ(write(owner.get(), "x", 1), 1);
  }
  EXPECT_EQ(ReadByte(p.read_end.get()), 'x');
  EXPECT_EQ(ReadByte(p.read_end.get()), -1);  // the only write end is closed
}

TEST(UniqueFdTest, ReleaseHandsTheFdOverUnclosed) {
  Pipe p = NewPipe();
  int fd = p.write_end.release();
  EXPECT_FALSE(p.write_end.valid());
  p.write_end.reset();  // owns nothing: closes nothing
  ASSERT_TRUE(IsOpen(fd));
  EXPECT_EQ(write(fd, "y", 1), 1);
  close(fd);
  EXPECT_EQ(ReadByte(p.read_end.get()), 'y');
  EXPECT_EQ(ReadByte(p.read_end.get()), -1);
}

TEST(UniqueFdTest, MoveAssignmentClosesTheFdItHeld) {
  Pipe a = NewPipe();
  Pipe b = NewPipe();
  a.write_end = std::move(b.write_end);
  EXPECT_EQ(ReadByte(a.read_end.get()), -1);  // a's own write end is closed
  ASSERT_EQ(write(a.write_end.get(), "z", 1), 1);
  EXPECT_EQ(ReadByte(b.read_end.get()), 'z');
}

TEST(UniqueFdTest, SelfMoveAssignmentKeepsTheFd) {
  Pipe p = NewPipe();
  int number = p.write_end.get();
  UniqueFd& same = p.write_end;
  p.write_end = std::move(same);
  EXPECT_EQ(p.write_end.get(), number);
  EXPECT_TRUE(IsOpen(number));
}

TEST(UniqueFdTest, ResetClosesTheOldFdAndTakesTheNew) {
  Pipe a = NewPipe();
  Pipe b = NewPipe();
  int old_fd = a.write_end.get();
  a.write_end.reset(b.write_end.release());
  EXPECT_FALSE(IsOpen(old_fd));
  EXPECT_EQ(ReadByte(a.read_end.get()), -1);
  ASSERT_EQ(write(a.write_end.get(), "w", 1), 1);
  EXPECT_EQ(ReadByte(b.read_end.get()), 'w');
  a.write_end.reset();
  EXPECT_FALSE(a.write_end.valid());
  EXPECT_EQ(ReadByte(b.read_end.get()), -1);
}

TEST(UniqueFdTest, ResetToTheFdItOwnsKeepsItOpen) {
  Pipe p = NewPipe();
  int number = p.write_end.get();
  p.write_end.reset(number);
  EXPECT_EQ(p.write_end.get(), number);
  EXPECT_TRUE(IsOpen(number));
}

TEST(UniqueFdTest, ClosingLeavesErrnoAlone) {
  Pipe p = NewPipe();
  errno = ENOENT;
  p.write_end.reset();
  p.read_end.reset();
  EXPECT_EQ(errno, ENOENT);
}

TEST(MakePipeTest, AppliesTheFlagsToBothEnds) {
  StatusOr<Pipe> p = MakePipe(O_CLOEXEC | O_NONBLOCK);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (int fd : {p->read_end.get(), p->write_end.get()}) {
    EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  }
  char c;
  EXPECT_EQ(read(p->read_end.get(), &c, 1), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(MakePipeTest, WithoutCloexecTheEndsAreInheritable) {
  StatusOr<Pipe> p = MakePipe(0);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(fcntl(p->read_end.get(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_EQ(fcntl(p->write_end.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(MakePipeTest, TranslatesErrno) {
  StatusOr<Pipe> p = MakePipe(-1);  // no such flags: EINVAL
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(), std::string("pipe: ") + strerror(EINVAL));
}

// Exits 0 iff MakePipe, with no fd left below the limit, says so.
void MakePipeWithFdsExhausted() {
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = 3;  // fds 0-2 only
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(3);
  StatusOr<Pipe> p = MakePipe(O_CLOEXEC);
  _exit(p.ok() ? 1 : p.status().code() == StatusCode::kResourceExhausted ? 0 : 2);
}

TEST(MakePipeTest, OutOfFdsIsResourceExhausted) {
  // In a child of its own: the limit must not hold for the rest of the tests.
  EXPECT_EXIT(MakePipeWithFdsExhausted(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace odin
