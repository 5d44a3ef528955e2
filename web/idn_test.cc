#include "web/idn.h"

#include <gtest/gtest.h>

#include "web/network_rules.h"

namespace odin {
namespace {

TEST(IdnTest, UnicodeNamesBecomePunycodeTheRulesMatch) {
  StatusOr<std::string> a = IdnToAscii("Bücher.example");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*NormalizeHostName(*a), "xn--bcher-kva.example");
  EXPECT_EQ(*IdnToAscii("plain.example"), "plain.example");
  EXPECT_FALSE(IdnToAscii("\xff\xfe.example").ok());
}

}  // namespace
}  // namespace odin
