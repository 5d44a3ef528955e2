#include "tools/output_capture.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(OutputCaptureTest, SmallOutputFitsInHead) {
  OutputCapture c(8, 4);
  c.Append("hello");
  EXPECT_EQ(c.head(), "hello");
  EXPECT_EQ(c.tail(), "");
  EXPECT_EQ(c.total(), 5u);
  EXPECT_TRUE(c.complete());
}

TEST(OutputCaptureTest, KeepsFirstAndLastBytesAndCountsAll) {
  OutputCapture c(4, 3);
  for (char ch = 'a'; ch <= 'z'; ++ch) c.Append(std::string(1, ch));
  EXPECT_EQ(c.head(), "abcd");
  EXPECT_EQ(c.tail(), "xyz");
  EXPECT_EQ(c.total(), 26u);
  EXPECT_FALSE(c.complete());
}

TEST(OutputCaptureTest, TailNeverOverlapsHead) {
  OutputCapture c(4, 8);
  c.Append("abcdef");
  EXPECT_EQ(c.head(), "abcd");
  EXPECT_EQ(c.tail(), "ef");
  EXPECT_TRUE(c.complete());
}

TEST(OutputCaptureTest, LargeChunkSplitsAcrossHeadAndTail) {
  OutputCapture c(2, 2);
  c.Append(std::string(1000, 'x') + "yz");
  EXPECT_EQ(c.head(), "xx");
  EXPECT_EQ(c.tail(), "yz");
  EXPECT_EQ(c.total(), 1002u);
}

}  // namespace
}  // namespace odin
