#include "planner/tool_calls.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

// What a model call used goes on the record as the provider said, with
// its cost at the configured prices; unknown without a price.
TEST(RecordModelCallTest, CountsCacheTokensAndPricesThem) {
  ChatResponse r;
  r.usage = {1000, 100, 600, 200};
  PriceTable prices = {{"m", {3.0, 15.0, 0.3, 3.75}}};
  LlmCallRecord rec = RecordModelCall({.model = "m"}, r, prices);
  EXPECT_EQ(rec.input_tokens, 1000);
  EXPECT_EQ(rec.cache_read_tokens, 600);
  EXPECT_EQ(rec.cache_write_tokens, 200);
  // 200 uncached x 3 + 600 read x 0.3 + 200 written x 3.75 + 100 out x 15.
  EXPECT_EQ(rec.cost_microusd, 600 + 180 + 750 + 1500);
  EXPECT_EQ(RecordModelCall({.model = "other"}, r, prices).cost_microusd, -1);
}

// A server's absurd counts (negative, past a trillion, more cached than
// sent) are bounded before they are recorded or priced: no overflow, no
// negative cost.
TEST(RecordModelCallTest, AbsurdCountsFromAServerAreBounded) {
  ChatResponse r;
  r.usage = {INT64_MAX, -5, INT64_MAX, INT64_MAX};
  PriceTable prices = {{"*", {1e6, 1e6, std::nullopt, std::nullopt}}};
  LlmCallRecord rec = RecordModelCall({.model = "m"}, r, prices);
  EXPECT_EQ(rec.input_tokens, 1'000'000'000'000);
  EXPECT_EQ(rec.output_tokens, 0);
  EXPECT_EQ(rec.cache_read_tokens, 1'000'000'000'000);
  EXPECT_EQ(rec.cache_write_tokens, 0);
  EXPECT_EQ(rec.cost_microusd, 1'000'000'000'000'000'000);
}

// A call that failed used nothing, at a known price; for a model without a
// price even that is unknown: never counted as a priced $0.
TEST(RecordModelCallTest, AFailedCallOfAnUnpricedModelHasNoKnownCost) {
  StatusOr<ChatResponse> failed = Status::Unavailable("model", "overloaded");
  PriceTable prices = {{"m", {3.0, 15.0, std::nullopt, std::nullopt}}};
  EXPECT_EQ(RecordModelCall({.model = "m"}, failed, prices).cost_microusd, 0);
  LlmCallRecord unpriced = RecordModelCall({.model = "other"}, failed, prices);
  EXPECT_EQ(unpriced.status, "error");
  EXPECT_EQ(unpriced.cost_microusd, -1);
}

}  // namespace
}  // namespace odin
