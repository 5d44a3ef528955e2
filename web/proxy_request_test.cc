#include "web/proxy_request.h"

#include <gtest/gtest.h>

#include "base/base64.h"

namespace odin {
namespace {

TEST(ProxyRequestTest, ConnectNamesHostAndPort) {
  std::string head = "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\nProxy-Authorization: Basic " +
                     Base64Encode("w-12ab:x") + "\r\n\r\n";
  EXPECT_EQ(ProxyHeadEnd(head + "extra"), head.size());
  StatusOr<ProxyRequest> r = ParseProxyRequest(head);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->tunnel);
  EXPECT_EQ(r->host, "pypi.org");
  EXPECT_EQ(r->port, 443);
  EXPECT_EQ(r->client, "w-12ab");
  EXPECT_EQ(r->forward_head, "");
  StatusOr<ProxyRequest> v6 = ParseProxyRequest("CONNECT [::1]:22 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
}

TEST(ProxyRequestTest, PlainRequestsAreForwardedInOriginForm) {
  StatusOr<ProxyRequest> r = ParseProxyRequest(
      "GET http://Allowed.test:8080/a/b?q=1#frag HTTP/1.1\r\nHost: allowed.test:8080\r\nProxy-Connection: "
      "keep-alive\r\nProxy-Authorization: Basic Zm9v\r\nAccept: */*\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->tunnel);
  EXPECT_EQ(r->host, "Allowed.test");
  EXPECT_EQ(r->port, 8080);
  EXPECT_EQ(r->forward_head,
            "GET /a/b?q=1 HTTP/1.1\r\nAccept: */*\r\nHost: Allowed.test:8080\r\nConnection: close\r\n\r\n");
  // The Host header is the URL's, whatever the client said.
  StatusOr<ProxyRequest> other = ParseProxyRequest("GET http://allowed.test/ HTTP/1.1\r\nHost: other.example\r\n\r\n");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->forward_head, "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n");
  StatusOr<ProxyRequest> bare = ParseProxyRequest("GET http://x.com HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 80);
  EXPECT_EQ(bare->forward_head, "GET / HTTP/1.0\r\nHost: x.com\r\nConnection: close\r\n\r\n");
}

TEST(ProxyRequestTest, WhatIsNotAProxyRequestIsRefused) {
  for (const char* head :
       {"GET /path HTTP/1.1\r\n\r\n", "GET https://x.com/ HTTP/1.1\r\n\r\n", "CONNECT x.com HTTP/1.1\r\n\r\n",
        "CONNECT x.com:0 HTTP/1.1\r\n\r\n", "CONNECT x.com:70000 HTTP/1.1\r\n\r\n", "CONNECT ::1:22 HTTP/1.1\r\n\r\n",
        "GET http://user@x.com/ HTTP/1.1\r\n\r\n", "GET http://x.com/ HTTP/2\r\n\r\n",
        "GET http://x.com/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "GET http://x.com/\x01 HTTP/1.1\r\n\r\n",
        "get http://x.com/ HTTP/1.1\r\n\r\n", "GET http://x.com/ HTTP/1.1\r\n"}) {
    EXPECT_FALSE(ParseProxyRequest(head).ok()) << head;
  }
  EXPECT_FALSE(ParseProxyRequest(std::string(kMaxProxyHeadBytes, 'a') + "\r\n\r\n").ok());
}

TEST(ProxyRequestTest, CredentialsThatAreNoNameGiveNoClient) {
  StatusOr<ProxyRequest> r = ParseProxyRequest("CONNECT x.com:443 HTTP/1.1\r\nProxy-Authorization: Basic " +
                                               Base64Encode("a b\x01:x") + "\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->client, "");
}

}  // namespace
}  // namespace odin
