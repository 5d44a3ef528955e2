#include "web/network_rules.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

NetworkRules Rules(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
  StatusOr<NetworkRules> r = ParseNetworkRules(allow, deny);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : NetworkRules{};
}

TEST(NetworkRulesTest, NamesAreNormalised) {
  EXPECT_EQ(*NormalizeHostName("Registry.NPMJS.org."), "registry.npmjs.org");
  EXPECT_EQ(*NormalizeHostName("xn--bcher-kva.example"), "xn--bcher-kva.example");
  EXPECT_NE(NormalizeHostName("bücher.example").status().message().find("punycode"), std::string::npos);
  EXPECT_FALSE(NormalizeHostName("").ok());
  EXPECT_FALSE(NormalizeHostName("a..b").ok());
  EXPECT_FALSE(NormalizeHostName("a.b..").ok());
  EXPECT_FALSE(NormalizeHostName(std::string(64, 'a') + ".com").ok());
  EXPECT_FALSE(NormalizeHostName("evil.com/x").ok());
  EXPECT_FALSE(NormalizeHostName("a b.com").ok());
}

TEST(NetworkRulesTest, AddressesInEveryFormAreNoNames) {
  for (const char* ip : {"127.0.0.1", "127.1", "2130706433", "0x7f.1", "0177.0.0.1", "::1", "[::1]", "1.2.3.4."}) {
    EXPECT_TRUE(IsIpLiteral(ip)) << ip;
    EXPECT_FALSE(NormalizeHostName(ip).ok()) << ip;
  }
  EXPECT_FALSE(IsIpLiteral("example.com"));
  EXPECT_FALSE(IsIpLiteral("1password.com"));
}

TEST(NetworkRulesTest, RulesParseOrSayWhy) {
  EXPECT_FALSE(ParseNetworkRule("*").ok());
  EXPECT_FALSE(ParseNetworkRule("a.*.com").ok());
  EXPECT_FALSE(ParseNetworkRule("10.0.0.1").ok());
  EXPECT_FALSE(ParseNetworkRule("x.com:0").ok());
  EXPECT_FALSE(ParseNetworkRule("x.com:99999").ok());
  EXPECT_FALSE(ParseNetworkRule("x.com:").ok());
  StatusOr<NetworkRule> r = ParseNetworkRule("*.GitHub.com:22");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->wildcard);
  EXPECT_EQ(r->host, "github.com");
  EXPECT_EQ(r->port, 22);
  EXPECT_NE(ParseNetworkRule("10.0.0.1").status().message().find("10.0.0.1"), std::string::npos);
}

TEST(NetworkRulesTest, WildcardsCoverSubdomainsOnly) {
  NetworkRules rules = Rules({"*.x.com"});
  EXPECT_EQ(JudgeHost(rules, "a.x.com", 443).kind, NetworkVerdict::kAllowed);
  EXPECT_EQ(JudgeHost(rules, "a.b.x.com", 80).kind, NetworkVerdict::kAllowed);
  EXPECT_EQ(JudgeHost(rules, "x.com", 443).kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(JudgeHost(rules, "ax.com", 443).kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(JudgeHost(rules, "x.com.evil", 443).kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(JudgeHost(rules, "a.x.com.evil", 443).kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(JudgeHost(rules, "A.X.COM.", 443).kind, NetworkVerdict::kAllowed);
}

TEST(NetworkRulesTest, PortsDefaultTo80And443) {
  NetworkRules rules = Rules({"pypi.org", "git.example:2222"});
  EXPECT_EQ(JudgeHost(rules, "pypi.org", 443).kind, NetworkVerdict::kAllowed);
  EXPECT_EQ(JudgeHost(rules, "pypi.org", 80).kind, NetworkVerdict::kAllowed);
  EXPECT_EQ(JudgeHost(rules, "pypi.org", 8443).kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(JudgeHost(rules, "git.example", 2222).kind, NetworkVerdict::kAllowed);
  EXPECT_EQ(JudgeHost(rules, "git.example", 443).kind, NetworkVerdict::kUnknown);
}

TEST(NetworkRulesTest, DenyOutranksAllowAndAddressesNeverPass) {
  NetworkRules rules = Rules({"*.example.com"}, {"secret.example.com"});
  NetworkVerdict v = JudgeHost(rules, "secret.example.com", 443);
  EXPECT_EQ(v.kind, NetworkVerdict::kDenied);
  EXPECT_EQ(v.rule, "secret.example.com");
  EXPECT_NE(v.why.find("secret.example.com:443"), std::string::npos);
  EXPECT_EQ(JudgeHost(rules, "127.0.0.1", 80).kind, NetworkVerdict::kDenied);
  EXPECT_EQ(JudgeHost(rules, "::ffff:127.0.0.1", 443).kind, NetworkVerdict::kDenied);
  // A deny rule without a port covers every port, even one an allow rule names.
  NetworkRules ported = Rules({"*.example.com:2222"}, {"secret.example.com"});
  EXPECT_EQ(JudgeHost(ported, "secret.example.com", 2222).kind, NetworkVerdict::kDenied);
  EXPECT_EQ(JudgeHost(ported, "open.example.com", 2222).kind, NetworkVerdict::kAllowed);
  NetworkVerdict unknown = JudgeHost(rules, "evil.test", 80);
  EXPECT_EQ(unknown.kind, NetworkVerdict::kUnknown);
  EXPECT_EQ(unknown.why, "evil.test:80 is not in sandbox.network's allow list");
}

}  // namespace
}  // namespace odin
