#include "config/mcp_token_store.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class McpTokenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *RealPath(*MakeTempDir("odin-mcp-token-store-test")); }
  void TearDown() override { RemoveTree(dir_); }
  std::string dir_;
};

McpTokenEntry Entry(const std::string& resource, const std::string& issuer, const std::string& token) {
  McpTokenEntry e;
  e.resource = resource;
  e.issuer = issuer;
  e.server_name = "remote";
  e.client = {"client-1", ""};
  e.token_endpoint = issuer + "token";
  e.access_token = token;
  e.refresh_token = "refresh-" + token;
  e.expires_at_ms = 1000;
  return e;
}

TEST_F(McpTokenStoreTest, TokensAreKeyedByTheServersUrlAndIssuerNeverItsName) {
  McpTokenStore store(dir_ + "/state/odin/mcp-auth.json");
  ASSERT_TRUE(store.Put(Entry("https://a.example/mcp", "https://auth.example/", "tok-a")).ok());
  ASSERT_TRUE(store.Put(Entry("https://b.example/mcp", "https://auth.example/", "tok-b")).ok());
  // The same server and issuer again: replaced, not added.
  ASSERT_TRUE(store.Put(Entry("https://a.example/mcp", "https://auth.example/", "tok-a2")).ok());
  StatusOr<std::vector<McpTokenEntry>> a = store.Find("https://a.example/mcp");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].access_token, "tok-a2");
  EXPECT_EQ((*a)[0].refresh_token, "refresh-tok-a2");
  // Both entries are named "remote": the name finds nothing.
  EXPECT_TRUE(store.Find("remote")->empty());
  EXPECT_TRUE(store.Find("https://c.example/mcp")->empty());

  struct stat st;
  ASSERT_EQ(stat(store.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_ + "/state/odin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(McpTokenStoreTest, UpdateSeesWhatIsStoredAndRemoveTakesEveryIssuer) {
  McpTokenStore store(dir_ + "/mcp-auth.json");
  ASSERT_TRUE(store.Put(Entry("https://a.example/mcp", "https://one.example/", "t1")).ok());
  ASSERT_TRUE(store.Put(Entry("https://a.example/mcp", "https://two.example/", "t2")).ok());
  Status s = store.Update("https://a.example/mcp", "https://one.example/", [](McpTokenEntry* e) -> StatusOr<bool> {
    EXPECT_EQ(e->access_token, "t1");
    e->access_token = "t1-new";
    return true;
  });
  ASSERT_TRUE(s.ok()) << s.message();
  // A change that says not to write leaves the store as it was.
  ASSERT_TRUE(store
                  .Update("https://a.example/mcp", "https://two.example/",
                          [](McpTokenEntry* e) -> StatusOr<bool> {
                            e->access_token = "lost";
                            return false;
                          })
                  .ok());
  EXPECT_EQ(store.Update("https://x.example/mcp", "https://one.example/", [](McpTokenEntry*) { return true; }).code(),
            StatusCode::kNotFound);
  std::vector<McpTokenEntry> both = *store.Find("https://a.example/mcp");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].access_token, "t1-new");
  EXPECT_EQ(both[1].access_token, "t2");
  StatusOr<std::vector<McpTokenEntry>> removed = store.Remove("https://a.example/mcp");
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->size(), 2u);
  EXPECT_TRUE(store.Find("https://a.example/mcp")->empty());
}

TEST_F(McpTokenStoreTest, RegisteredClientsAreKeptPerIssuerAndRedirect) {
  McpTokenStore store(dir_ + "/mcp-auth.json");
  EXPECT_FALSE(store.FindClient("https://auth.example/", "http://127.0.0.1:5000/callback")->has_value());
  ASSERT_TRUE(store.PutClient("https://auth.example/", "http://127.0.0.1:5000/callback", {"c1", "s1"}).ok());
  std::optional<OAuthClient> c = *store.FindClient("https://auth.example/", "http://127.0.0.1:5000/callback");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->client_id, "c1");
  EXPECT_EQ(c->client_secret, "s1");
  EXPECT_FALSE(store.FindClient("https://auth.example/", "http://127.0.0.1:5001/callback")->has_value());
}

TEST_F(McpTokenStoreTest, AStoreThatIsNotOneIsAnErrorNotAnEmptyStore) {
  McpTokenStore store(dir_ + "/mcp-auth.json");
  ASSERT_TRUE(WriteFileAtomic(store.path(), R"({"version": 1, "tokens": []})").ok());
  ASSERT_EQ(chmod(store.path().c_str(), 0600), 0);
  Status s = store.List().status();
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("not a store of MCP tokens"), std::string::npos) << s.message();
  // And it is not overwritten by a Put.
  EXPECT_FALSE(store.Put(Entry("https://a.example/mcp", "https://auth.example/", "t")).ok());
  ASSERT_TRUE(chmod(store.path().c_str(), 0622) == 0);
  EXPECT_EQ(store.List().status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace odin
