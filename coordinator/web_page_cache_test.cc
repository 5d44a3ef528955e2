#include "coordinator/web_page_cache.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

v1::ToolResult Page(const std::string& id, const std::string& text, v1::ToolStatus status = v1::TOOL_STATUS_OK) {
  v1::ToolResult r;
  r.set_execution_id(id);
  r.set_status(status);
  r.set_output_json(nlohmann::json({{"content", text}}).dump());
  return r;
}

TEST(WebPageCacheTest, APageAnswersWithinItsTimeAsACallOfItsOwnNamingTheFetch) {
  FakeClock clock;
  WebPageCache cache(seconds(15 * 60), &clock);
  EXPECT_FALSE(cache.Answer("https://example.com/", "ex_2").has_value());
  cache.Keep("https://example.com/", Page("ex_1", "hello"));
  std::optional<v1::ToolResult> hit = cache.Answer("https://example.com/", "ex_2");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->execution_id(), "ex_2");
  nlohmann::json out = ParseJson(hit->output_json());
  EXPECT_EQ(out["cached_from"], "ex_1");
  EXPECT_EQ(out["content"], "hello");
  // An answer from the cache is never kept in the fetch's place.
  cache.Keep("https://example.com/", *hit);
  EXPECT_EQ(ParseJson(cache.Answer("https://example.com/", "ex_3")->output_json())["cached_from"], "ex_1");

  clock.Advance(seconds(15 * 60));
  EXPECT_FALSE(cache.Answer("https://example.com/", "ex_4").has_value());  // expired
}

TEST(WebPageCacheTest, FailedFetchesAreNotKeptAndTheOldestPagesGoFirst) {
  FakeClock clock;
  WebPageCache cache(seconds(15 * 60), &clock);
  cache.Keep("https://a/", Page("ex_a", "x", v1::TOOL_STATUS_ERROR));
  EXPECT_FALSE(cache.Answer("https://a/", "ex").has_value());
  for (size_t i = 0; i <= WebPageCache::kMaxPages; ++i) {
    cache.Keep("https://p/" + std::to_string(i), Page("ex_" + std::to_string(i), "x"));
    clock.Advance(seconds(1));
  }
  EXPECT_FALSE(cache.Answer("https://p/0", "ex").has_value());  // the oldest went
  EXPECT_TRUE(cache.Answer("https://p/1", "ex").has_value());
  EXPECT_TRUE(cache.Answer("https://p/64", "ex").has_value());

  WebPageCache off(Duration::zero(), &clock);  // web.cache_minutes 0
  off.Keep("https://a/", Page("ex_a", "x"));
  EXPECT_FALSE(off.Answer("https://a/", "ex").has_value());
}

}  // namespace
}  // namespace odin
