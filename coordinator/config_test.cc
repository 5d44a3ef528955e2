#include "coordinator/config.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(ConfigTest, DefaultsWhenEmpty) {
  auto c = ParseConfig("{}", "odinconfig.json");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->sandbox_require);
  EXPECT_EQ(c->artifact_cap_bytes, 8u << 20);
  EXPECT_EQ(c->output_head_bytes, 65536u);
}

TEST(ConfigTest, ReadsEverySection) {
  auto c = ParseConfig(R"({"sandbox":{"require":true,"bwrap":"/opt/bwrap"},
                           "workers":{"count":4,"heartbeat_ms":100},
                           "ledger":{"artifact_cap_bytes":1024},
                           "output":{"head_bytes":10,"tail_bytes":20}})", "x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->sandbox_require);
  EXPECT_EQ(c->bwrap_path, "/opt/bwrap");
  EXPECT_EQ(c->worker_count, 4);
  EXPECT_EQ(c->heartbeat_ms, 100);
  EXPECT_EQ(c->artifact_cap_bytes, 1024u);
  EXPECT_EQ(c->output_tail_bytes, 20u);
}

TEST(ConfigTest, FileCacheSettings) {
  auto c = ParseConfig(R"({"file_cache":{"max_entries":7,"eviction":"lfu"}})", "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->file_cache.max_entries, 7u);
  EXPECT_EQ(c->file_cache.policy, EvictionPolicy::kLfu);
  EXPECT_EQ(ParseConfig(R"({"file_cache":{"eviction":"fifo"}})", "f").status().message(),
            "f: file_cache.eviction must be lru, lfu or hybrid");
}

TEST(ConfigTest, UnknownKeyIsAnErrorNamingIt) {
  auto c = ParseConfig(R"({"sandbox":{"requir":true}})", "/ws/odinconfig.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "/ws/odinconfig.json: unknown key 'sandbox.requir'");
}

TEST(ConfigTest, WrongTypeIsAnError) {
  auto c = ParseConfig(R"({"sandbox":{"require":"yes"}})", "f");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "f: sandbox.require must be true or false");
  EXPECT_FALSE(ParseConfig(R"({"workers":{"count":-1}})", "f").ok());
}

TEST(ConfigTest, MalformedJsonIsAnError) {
  auto c = ParseConfig("{", "f");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "f: not valid JSON");
}

}  // namespace
}  // namespace odin
