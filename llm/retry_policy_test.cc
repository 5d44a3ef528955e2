#include "llm/retry_policy.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(RetryPolicyTest, WhatIsRetried) {
  EXPECT_TRUE(IsRetryable(429, Status::OK()));
  EXPECT_TRUE(IsRetryable(500, Status::OK()));
  EXPECT_TRUE(IsRetryable(503, Status::OK()));
  EXPECT_FALSE(IsRetryable(400, Status::OK()));
  EXPECT_FALSE(IsRetryable(401, Status::OK()));
  EXPECT_FALSE(IsRetryable(404, Status::OK()));
  EXPECT_TRUE(IsRetryable(0, Status::Unavailable("cannot reach", "refused")));
  EXPECT_TRUE(IsRetryable(0, Status::DeadlineExceeded("url", "timeout")));
  EXPECT_FALSE(IsRetryable(0, Status::InvalidArgument("url", "malformed")));
}

TEST(RetryPolicyTest, ExponentialBackoffWithFullJitterAndACap) {
  RetryPolicy p;
  EXPECT_EQ(RetryDelay(p, 0, "", 1.0, 0), milliseconds(500));
  EXPECT_EQ(RetryDelay(p, 1, "", 1.0, 0), milliseconds(1000));
  EXPECT_EQ(RetryDelay(p, 3, "", 0.5, 0), milliseconds(2000));
  EXPECT_EQ(RetryDelay(p, 20, "", 1.0, 0), seconds(30));
  EXPECT_EQ(RetryDelay(p, 2, "", 0.0, 0), Duration::zero());
}

TEST(RetryPolicyTest, RetryAfterWins) {
  RetryPolicy p;
  EXPECT_EQ(RetryDelay(p, 0, "7", 0.1, 0), seconds(7));
  EXPECT_EQ(RetryDelay(p, 0, "1.5", 0.1, 0), milliseconds(1500));
  EXPECT_EQ(RetryDelay(p, 0, "9999", 0.1, 0), seconds(120));  // capped
  // An HTTP date 5 s after "now".
  EXPECT_EQ(RetryDelay(p, 0, "Thu, 01 Jan 1970 00:00:15 GMT", 0.1, 10000), seconds(5));
  EXPECT_EQ(RetryDelay(p, 0, "nonsense", 1.0, 0), milliseconds(500));
  EXPECT_EQ(RetryDelay(p, 0, "1e30", 0.1, 0), seconds(120));  // no overflow
  EXPECT_EQ(RetryDelay(p, 0, "inf", 0.1, 0), seconds(120));
}

}  // namespace
}  // namespace odin
