#include "web/url_host.h"

#include <gtest/gtest.h>

#include "web/web_fetch.h"

namespace odin {
namespace {

TEST(StrictUrlHostTest, ReadsTheHostOfPlainHttpUrls) {
  EXPECT_EQ(*StrictUrlHost("https://Docs.Example.COM/a/b?c#d"), "docs.example.com");
  EXPECT_EQ(*StrictUrlHost("http://127.0.0.1:8080"), "127.0.0.1");
  EXPECT_EQ(*StrictUrlHost("HTTP://[::FFFF:127.0.0.1]:80/x"), "::ffff:127.0.0.1");
  EXPECT_EQ(*StrictUrlHost("http://under_score.example?q"), "under_score.example");
}

TEST(StrictUrlHostTest, RefusesWhatParsersReadDifferently) {
  for (const char* url :
       {"ftp://example.com/", "file:///etc/passwd", "example.com", "http://", "http://user:pw@example.com/",
        "http://good.example\\@evil.example/", "http://exa mple.com/", "http://example.com/\x01",
        "http://ex\xc3\xa4mple.com/", "http://[::1/", "http://[nothex]/", "http://example.com:/",
        "http://example.com:99999/", "http://example.com:8x/", "http://exa%6dple.com/", "http://[::1]x/"}) {
    EXPECT_FALSE(StrictUrlHost(url).ok()) << url;
  }
}

// Every URL the strict reader accepts, libcurl reads the same host from:
// the worker compares them, so a disagreement is a refusal, never a bypass.
TEST(StrictUrlHostTest, AgreesWithLibcurlWhereItAccepts) {
  for (const char* url : {"https://docs.example.com/a", "http://127.0.0.1:8080/", "http://[::1]:80/",
                          "HTTP://EXAMPLE.com", "http://a.b-c_d.example:1/?x=@y", "http://example.com#frag@x"}) {
    StatusOr<std::string> strict = StrictUrlHost(url);
    StatusOr<std::string> curl = UrlHost(url);
    ASSERT_TRUE(strict.ok()) << url << ": " << strict.status().message();
    ASSERT_TRUE(curl.ok()) << url << ": " << curl.status().message();
    EXPECT_EQ(*strict, *curl) << url;
  }
  // Where libcurl reads another address, the strict reader refuses.
  for (const char* url : {"http://0x7f.1/", "http://127.1/", "http://2130706433/", "http://0177.0.0.1/",
                          "http://010.0.0.1/", "http://1.2.3.0x4/"}) {
    EXPECT_FALSE(StrictUrlHost(url).ok()) << url;
  }
}

}  // namespace
}  // namespace odin
