// The address policy, range by range, at the edges of each range, through
// every form that embeds an IPv4 address, and the allow-list rule.

#include "web/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include <gtest/gtest.h>

namespace odin {
namespace {

// An address as libcurl hands it over: a sockaddr of the right family.
class Addr {
 public:
  Addr(const std::string& ip, int port = 80) {
    std::memset(&storage_, 0, sizeof storage_);
    auto* in = reinterpret_cast<sockaddr_in*>(&storage_);
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage_);
    if (inet_pton(AF_INET, ip.c_str(), &in->sin_addr) == 1) {
      in->sin_family = AF_INET;
      in->sin_port = htons(static_cast<uint16_t>(port));
    } else if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) == 1) {
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(static_cast<uint16_t>(port));
    } else {
      ADD_FAILURE() << "not an address: " << ip;
    }
  }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage_); }

 private:
  sockaddr_storage storage_;
};

bool Public(const std::string& ip) { return IsGloballyRoutable(Addr(ip).get()); }

TEST(AddressPolicyTest, PublicIpv4AddressesAreRoutable) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "93.184.216.34", "151.101.1.69", "223.255.255.255", "1.0.0.0"}) {
    EXPECT_TRUE(Public(ip)) << ip;
  }
}

TEST(AddressPolicyTest, EverySpecialIpv4RangeIsRefused) {
  for (const char* ip : {
           "0.0.0.0",    "0.255.255.255",   "10.0.0.1",        "10.255.255.255", "100.64.0.0",  "100.127.255.255",
           "127.0.0.1",  "127.255.255.254", "169.254.169.254", "169.254.0.1",    "172.16.0.0",  "172.31.255.255",
           "192.0.0.1",  "192.0.0.255",     "192.0.2.1",       "192.88.99.1",    "192.168.0.1", "192.168.255.255",
           "198.18.0.1", "198.19.255.255",  "198.51.100.7",    "203.0.113.9",    "224.0.0.1",   "239.255.255.255",
           "240.0.0.1",  "254.255.255.255", "255.255.255.255",
       }) {
    EXPECT_FALSE(Public(ip)) << ip;
  }
}

TEST(AddressPolicyTest, RangeEdgesAreExact) {
  // Just outside each range is public; its first address is not.
  EXPECT_TRUE(Public("9.255.255.255"));
  EXPECT_TRUE(Public("11.0.0.0"));
  EXPECT_TRUE(Public("100.63.255.255"));
  EXPECT_FALSE(Public("100.64.0.0"));
  EXPECT_FALSE(Public("100.127.255.255"));
  EXPECT_TRUE(Public("100.128.0.0"));
  EXPECT_TRUE(Public("126.255.255.255"));
  EXPECT_TRUE(Public("128.0.0.0"));
  EXPECT_TRUE(Public("169.253.255.255"));
  EXPECT_TRUE(Public("169.255.0.0"));
  EXPECT_TRUE(Public("172.15.255.255"));
  EXPECT_FALSE(Public("172.16.0.0"));
  EXPECT_TRUE(Public("172.32.0.0"));
  EXPECT_TRUE(Public("191.255.255.255"));
  EXPECT_TRUE(Public("192.0.1.0"));
  EXPECT_TRUE(Public("192.0.3.0"));
  EXPECT_TRUE(Public("192.88.98.255"));
  EXPECT_TRUE(Public("192.88.100.0"));
  EXPECT_TRUE(Public("192.167.255.255"));
  EXPECT_TRUE(Public("192.169.0.0"));
  EXPECT_TRUE(Public("198.17.255.255"));
  EXPECT_FALSE(Public("198.18.0.0"));
  EXPECT_TRUE(Public("198.20.0.0"));
  EXPECT_TRUE(Public("198.51.99.255"));
  EXPECT_TRUE(Public("198.51.101.0"));
  EXPECT_TRUE(Public("203.0.112.255"));
  EXPECT_TRUE(Public("203.0.114.0"));
  EXPECT_TRUE(Public("223.255.255.255"));
  EXPECT_FALSE(Public("224.0.0.0"));
}

TEST(AddressPolicyTest, PublicIpv6AddressesAreRoutable) {
  for (const char* ip : {"2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e", "2000::1",
                         "3ffe::1", "2001:200::1", "2001:4::1", "2001:30::1"}) {
    EXPECT_TRUE(Public(ip)) << ip;
  }
}

TEST(AddressPolicyTest, EverySpecialIpv6RangeIsRefused) {
  for (const char* ip : {
           "::",            // unspecified
           "::1",           // loopback
           "64:ff9b:1::1",  // NAT64 local use
           "100::1",        // discard only
           "100::ffff:ffff:ffff:ffff",
           "2001::1",  // Teredo
           "2001:0:ffff:ffff::1",
           "2001:db8::1",  // documentation
           "2001:db8:ffff::1",
           "3fff::1",     // documentation (RFC 9637)
           "2001:10::1",  // ORCHID
           "2001:1f:ffff::1",
           "2001:20::1",  // ORCHIDv2
           "2001:2f:ffff::1",
           "2001:2::1",  // benchmarking
           "fc00::1",    // unique local
           "fdff:ffff::1",
           "fe80::1",  // link local
           "febf:ffff::1",
           "fec0::1",  // site local
           "feff::1",
           "ff02::1",  // multicast
           "ff0e::1",
           "4000::1",  // outside 2000::/3
           "1fff:ffff::1",
           "c000::1",
       }) {
    EXPECT_FALSE(Public(ip)) << ip;
  }
}

TEST(AddressPolicyTest, AddressesThatEmbedIpv4AreJudgedByIt) {
  // IPv4-mapped.
  EXPECT_FALSE(Public("::ffff:127.0.0.1"));
  EXPECT_FALSE(Public("::ffff:10.1.2.3"));
  EXPECT_FALSE(Public("::ffff:169.254.169.254"));
  EXPECT_FALSE(Public("::ffff:0.0.0.0"));
  EXPECT_TRUE(Public("::ffff:8.8.8.8"));
  // IPv4-compatible.
  EXPECT_FALSE(Public("::127.0.0.1"));
  EXPECT_FALSE(Public("::192.168.1.1"));
  EXPECT_FALSE(Public("::2"));  // 0.0.0.2
  EXPECT_TRUE(Public("::8.8.8.8"));
  // NAT64.
  EXPECT_FALSE(Public("64:ff9b::127.0.0.1"));
  EXPECT_FALSE(Public("64:ff9b::a9fe:a9fe"));  // 169.254.169.254
  EXPECT_TRUE(Public("64:ff9b::8.8.8.8"));
  // 6to4: the IPv4 address is in bits 16..47.
  EXPECT_TRUE(Public("2002:0808:0808::"));
  EXPECT_TRUE(Public("2002:0808:0808:1::1"));
  EXPECT_FALSE(Public("2002:7f00:0001::"));
  EXPECT_FALSE(Public("2002:c0a8:0101::1"));  // 192.168.1.1
  EXPECT_FALSE(Public("2002:a9fe:a9fe::"));   // 169.254.169.254
  EXPECT_FALSE(Public("2002::"));             // 0.0.0.0
}

TEST(AddressPolicyTest, OtherFamiliesAreNotRoutable) {
  sockaddr_storage unix_addr{};
  unix_addr.ss_family = AF_UNIX;
  EXPECT_FALSE(IsGloballyRoutable(reinterpret_cast<sockaddr*>(&unix_addr)));
  EXPECT_FALSE(IsGloballyRoutable(nullptr));
}

TEST(AddressPolicyTest, AddressTextHasThePortAndBracketsForIpv6) {
  EXPECT_EQ(AddressText(Addr("1.2.3.4", 80).get()), "1.2.3.4:80");
  EXPECT_EQ(AddressText(Addr("::1", 8080).get()), "[::1]:8080");
  EXPECT_EQ(AddressText(Addr("::ffff:127.0.0.1", 443).get()), "[::ffff:127.0.0.1]:443");
  EXPECT_EQ(AddressText(nullptr), "unknown address");
}

TEST(AddressPolicyTest, ParsesHostPortEntries) {
  StatusOr<PrivateAllow> a = ParsePrivateAllow("127.0.0.1:8080");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  StatusOr<PrivateAllow> b = ParsePrivateAllow("[::1]:443");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 443);
  StatusOr<PrivateAllow> c = ParsePrivateAllow("Docs.Internal:1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "docs.internal");
  EXPECT_EQ(c->port, 1);
  StatusOr<PrivateAllow> d = ParsePrivateAllow("localhost:65535");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->port, 65535);
}

TEST(AddressPolicyTest, RefusesMalformedEntriesInOneLine) {
  for (const char* bad : {"",
                          "127.0.0.1",
                          "127.0.0.1:",
                          ":80",
                          "host:0",
                          "host:65536",
                          "host:99999999",
                          "host:8o",
                          "host:-1",
                          "::1:80",
                          "[::1]",
                          "[::1]80",
                          "[::1:80",
                          "[127.0.0.1]:80",
                          "[fe80::1%eth0]:80",
                          "ho st:80",
                          "a/b:80",
                          "0.0.0.0:80",
                          "[::]:80",
                          "http://x:80"}) {
    StatusOr<PrivateAllow> a = ParsePrivateAllow(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(a.status().message().find('\n'), std::string::npos) << a.status().message();
    EXPECT_NE(a.status().message().find(std::string("\"") + bad + "\""), std::string::npos) << a.status().message();
  }
  EXPECT_NE(ParsePrivateAllow("::1:80").status().message().find("needs brackets"), std::string::npos);
}

std::vector<PrivateAllow> Allow(std::initializer_list<const char*> entries) {
  std::vector<PrivateAllow> out;
  for (const char* e : entries) out.push_back(*ParsePrivateAllow(e));
  return out;
}

TEST(AddressPolicyTest, PublicAddressesNeedNoEntry) {
  EXPECT_EQ(JudgeConnect(Addr("93.184.216.34", 443).get(), "example.com", {}), "");
  EXPECT_EQ(JudgeConnect(Addr("2606:4700::1", 443).get(), "example.com", {}), "");
}

TEST(AddressPolicyTest, ARefusalNamesTheAddressAndWhy) {
  EXPECT_EQ(JudgeConnect(Addr("127.0.0.1", 8080).get(), "127.0.0.1", {}),
            "127.0.0.1:8080 is loopback, not a public address");
  std::string metadata = JudgeConnect(Addr("169.254.169.254", 80).get(), "metadata.google.internal", {});
  EXPECT_NE(metadata.find("169.254.169.254:80 is link-local"), std::string::npos) << metadata;
  std::string mapped = JudgeConnect(Addr("::ffff:10.0.0.1", 80).get(), "x", {});
  EXPECT_EQ(mapped,
            "[::ffff:10.0.0.1]:80 is IPv4-mapped 10.0.0.1, which is private (10.0.0.0/8), not a public address");
  EXPECT_NE(JudgeConnect(Addr("100::1", 80).get(), "x", {}).find("discard-only"), std::string::npos);
  std::string six = JudgeConnect(Addr("2002:7f00:1::", 80).get(), "x", {});
  EXPECT_NE(six.find("6to4 for 127.0.0.1, which is loopback"), std::string::npos) << six;
  EXPECT_NE(JudgeConnect(Addr("fd00::1", 80).get(), "x", {}).find("unique-local"), std::string::npos);
}

TEST(AddressPolicyTest, AnIpEntryLetsInThatAddressAndPortOnly) {
  std::vector<PrivateAllow> allow = Allow({"127.0.0.1:8080"});
  EXPECT_EQ(JudgeConnect(Addr("127.0.0.1", 8080).get(), "127.0.0.1", allow), "");
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 8081).get(), "127.0.0.1", allow), "");  // another port
  EXPECT_NE(JudgeConnect(Addr("127.0.0.2", 8080).get(), "127.0.0.2", allow), "");  // another address
  // The same address by another spelling of the URL's host is refused.
  EXPECT_NE(JudgeConnect(Addr("::ffff:127.0.0.1", 8080).get(), "::ffff:127.0.0.1", allow), "");
  EXPECT_NE(JudgeConnect(Addr("::ffff:127.0.0.1", 8080).get(), "[::ffff:127.0.0.1]", allow), "");
  EXPECT_NE(JudgeConnect(Addr("0.0.0.0", 8080).get(), "0.0.0.0", allow), "");
  EXPECT_NE(JudgeConnect(Addr("::", 8080).get(), "::", allow), "");
  // A name that resolves to the listed address is not the listed host.
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 8080).get(), "localhost", allow), "");
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 8080).get(), "evil.example", allow), "");
  // The URL's host is the listed literal, but the connection goes elsewhere.
  EXPECT_NE(JudgeConnect(Addr("10.0.0.1", 8080).get(), "127.0.0.1", allow), "");
}

TEST(AddressPolicyTest, AConnectionToAMappedAddressMatchesItsIpv4Entry) {
  // libcurl may connect to 127.0.0.1 over an IPv6 socket: the address is
  // unmapped before it is compared with the entry.
  std::vector<PrivateAllow> allow = Allow({"127.0.0.1:8080"});
  EXPECT_EQ(JudgeConnect(Addr("::ffff:127.0.0.1", 8080).get(), "127.0.0.1", allow), "");
}

TEST(AddressPolicyTest, AnIpv6EntryMatchesWithOrWithoutBrackets) {
  std::vector<PrivateAllow> allow = Allow({"[::1]:9000"});
  EXPECT_EQ(JudgeConnect(Addr("::1", 9000).get(), "[::1]", allow), "");
  EXPECT_EQ(JudgeConnect(Addr("::1", 9000).get(), "::1", allow), "");
  EXPECT_EQ(JudgeConnect(Addr("::1", 9000).get(), "0:0::1", allow), "");  // the same address, written otherwise
  EXPECT_NE(JudgeConnect(Addr("::1", 9001).get(), "::1", allow), "");
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 9000).get(), "127.0.0.1", allow), "");
}

TEST(AddressPolicyTest, ANameEntryLetsInWhatThatNameResolvesTo) {
  std::vector<PrivateAllow> allow = Allow({"localhost:3000", "docs.internal:80"});
  EXPECT_EQ(JudgeConnect(Addr("127.0.0.1", 3000).get(), "localhost", allow), "");
  EXPECT_EQ(JudgeConnect(Addr("::1", 3000).get(), "LOCALHOST", allow), "");
  EXPECT_EQ(JudgeConnect(Addr("10.1.2.3", 80).get(), "Docs.Internal", allow), "");
  EXPECT_NE(JudgeConnect(Addr("10.1.2.3", 81).get(), "docs.internal", allow), "");
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 3000).get(), "127.0.0.1", allow), "");
  EXPECT_NE(JudgeConnect(Addr("127.0.0.1", 3000).get(), "other.localhost", allow), "");
}

}  // namespace
}  // namespace odin
