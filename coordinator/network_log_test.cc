#include "coordinator/network_log.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(NetworkLogTest, OneAggregatePerCommandAndHost) {
  NetworkLog log;
  log.Opened(1, "ex_a", "pypi.org", 443, true, "pypi.org", "", "1.2.3.4:443");
  log.Opened(2, "ex_a", "pypi.org", 443, true, "pypi.org", "", "1.2.3.4:443");
  log.Opened(3, "ex_a", "evil.test", 80, false, "", "evil.test:80 is not in sandbox.network's allow list", "");
  log.Opened(4, "ex_b", "pypi.org", 443, true, "pypi.org", "", "1.2.3.4:443");
  log.Closed(1, 100, 2000);
  log.Closed(2, 10, 20);
  std::vector<NetworkAggregate> a = log.TakeEnded("ex_a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].host, "evil.test");
  EXPECT_EQ(a[0].refused, 1);
  EXPECT_EQ(a[1].host, "pypi.org");
  EXPECT_EQ(a[1].allowed, 2);
  EXPECT_EQ(a[1].bytes_up, 110u);
  EXPECT_EQ(a[1].bytes_down, 2020u);
  EXPECT_EQ(NetworkLog::Refusals(a),
            std::vector<std::string>{"evil.test:80 (evil.test:80 is not in sandbox.network's allow list)"});
  EXPECT_TRUE(log.TakeLate().empty());  // ex_b still runs
}

TEST(NetworkLogTest, BytesAfterTheEndAreRecordedLate) {
  NetworkLog log;
  log.Opened(1, "ex_a", "pypi.org", 443, true, "pypi.org", "", "");
  EXPECT_EQ(log.TakeEnded("ex_a").size(), 1u);
  log.Closed(1, 5, 7);
  std::vector<NetworkAggregate> late = log.TakeLate();
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].execution_id, "ex_a");
  EXPECT_EQ(late[0].allowed, 0);
  EXPECT_EQ(late[0].bytes_down, 7u);
  EXPECT_TRUE(log.TakeLate().empty());
}

TEST(NetworkLogTest, UnattributedConnectionsAreLateAtOnce) {
  NetworkLog log;
  log.Opened(1, "", "x.test", 443, false, "", "no", "");
  EXPECT_EQ(log.TakeLate().size(), 1u);
}

TEST(NetworkLogTest, AConnectionThatFailsCountsAsRefused) {
  NetworkLog log;
  log.Opened(1, "ex_a", "pypi.org", 443, true, "pypi.org", "", "");
  log.Closed(1, 0, 0, "10.0.0.1:443 is private, not a public address");
  std::vector<NetworkAggregate> a = log.TakeEnded("ex_a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].allowed, 0);
  EXPECT_EQ(a[0].refused, 1);
  EXPECT_EQ(a[0].why, "10.0.0.1:443 is private, not a public address");
}

TEST(NetworkLogTest, RefusalsAreCut) {
  std::vector<NetworkAggregate> many;
  for (int i = 0; i < 25; ++i) many.push_back({"ex", "h" + std::to_string(i) + ".test", 443, 0, 1, 0, 0, "", "no", ""});
  std::vector<std::string> lines = NetworkLog::Refusals(many);
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines.back(), "and 15 more hosts");
}

TEST(NetworkLogTest, AFailureAfterItsCommandEndedIsARefusalOfItsOwn) {
  NetworkLog log;
  log.Opened(1, "ex_a", "slow.test", 443, true, "slow.test", "", "");
  std::vector<NetworkAggregate> ended = log.TakeEnded("ex_a");
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].allowed, 1);
  log.Closed(1, 0, 0, "no answer in 10 s");
  std::vector<NetworkAggregate> late = log.TakeLate();
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].allowed, 0);
  EXPECT_EQ(late[0].refused, 1);
}

}  // namespace
}  // namespace odin
