#include "base/money.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(CostTextTest, PricedCallsShowDollars) { EXPECT_EQ(CostText(12300, 3, 0), "$0.0123"); }

TEST(CostTextTest, NoCallsCostNothing) { EXPECT_EQ(CostText(0, 0, 0, 3), "$0.000"); }

TEST(CostTextTest, UnpricedCallsAreNeverShownAsZero) {
  EXPECT_EQ(CostText(0, 4, 4), "price unknown");
  EXPECT_EQ(CostText(12300, 7, 3), "$0.0123 + price unknown for 3 of 7 calls");
}

}  // namespace
}  // namespace odin
