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

namespace odin {
namespace {

TEST(CostTextTest, CacheUseIsSaidOnlyWhenThereIsSome) {
  EXPECT_EQ(CacheUseText(0, 0), "");
  EXPECT_EQ(CacheUseText(9800, 1100), " (9800 read from the prompt cache, 1100 written to it)");
  EXPECT_FALSE(CostUnknown(0, 0));
  EXPECT_FALSE(CostUnknown(7, 3));
  EXPECT_TRUE(CostUnknown(4, 4));
}

}  // namespace
}  // namespace odin
