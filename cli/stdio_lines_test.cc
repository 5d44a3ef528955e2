#include "cli/stdio_lines.h"

#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace odin {
namespace {

bool Readable(int fd, int ms) {
  pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1;
}

TEST(StdioLinesTest, AClientThatStopsReadingFailsTheLinesInsteadOfStallingTheWriter) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  {
    StdoutLines out(p[1], 1 << 20);
    EXPECT_TRUE(out.Write("{\"first\":1}"));
    // Written before the rest is queued: once failed, what waits is dropped.
    ASSERT_TRUE(Readable(p[0], 5000));
    std::string line(64 << 10, 'x');
    bool refused = false;
    // Nobody reads: the pipe fills, then the queue; Write never blocks.
    for (int i = 0; i < 64 && !refused; ++i) refused = !out.Write(line);
    EXPECT_TRUE(refused);
    EXPECT_NE(out.failed().find("stopped reading"), std::string::npos) << out.failed();
    EXPECT_TRUE(Readable(out.wake_fd(), 1000));
    EXPECT_FALSE(out.Write("later"));
  }  // returns within its deadline though nothing reads
  char first[12] = {};
  ASSERT_EQ(read(p[0], first, 11), 11);
  EXPECT_STREQ(first, "{\"first\":1}");
  close(p[0]);
  close(p[1]);
}

TEST(StdioLinesTest, LinesGoToTheRouteOrTheQueueAndTheEndIsSaid) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::vector<std::string> routed;
  StdinLines in(p[0], 1 << 10, [&](const std::string& line) {
    if (line.rfind("answer", 0) != 0) return false;
    routed.push_back(line);
    return true;
  });
  std::string text = "one\r\n  \nanswer 1\ntw";
  ASSERT_EQ(write(p[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_TRUE(Readable(in.wake_fd(), 5000));
  std::string ended;
  std::deque<std::string> lines = in.Take(&ended);
  EXPECT_EQ(lines, std::deque<std::string>{"one"});
  EXPECT_EQ(ended, "");
  ASSERT_EQ(write(p[1], "o\n", 2), 2);
  close(p[1]);
  std::deque<std::string> all;
  while (ended.empty() && Readable(in.wake_fd(), 5000)) {
    for (std::string& l : in.Take(&ended)) all.push_back(l);
  }
  EXPECT_EQ(all, std::deque<std::string>{"two"});
  EXPECT_EQ(ended, "eof");
  EXPECT_EQ(routed, std::vector<std::string>{"answer 1"});
  close(p[0]);
}

TEST(StdioLinesTest, ALineOverTheBoundEndsTheInput) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  StdinLines in(p[0], 1 << 10, [](const std::string&) { return false; });
  std::string big(4 << 10, 'x');
  ASSERT_EQ(write(p[1], big.data(), big.size()), static_cast<ssize_t>(big.size()));
  std::string ended;
  while (ended.empty() && Readable(in.wake_fd(), 5000)) in.Take(&ended);
  EXPECT_NE(ended.find("longer than"), std::string::npos) << ended;
  close(p[1]);
  close(p[0]);
}

}  // namespace
}  // namespace odin
