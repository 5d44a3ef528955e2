#include "config/trust_store.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"

namespace odin {
namespace {

class TrustStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *RealPath(*MakeTempDir("odin-trust-store-test")); }
  void TearDown() override { RemoveTree(dir_); }
  std::string StorePath() const { return dir_ + "/config/odin/trusted.json"; }
  // The names in the store's directory.
  std::vector<std::string> Listing() const {
    std::vector<std::string> names;
    DIR* d = opendir((dir_ + "/config/odin").c_str());
    while (dirent* e = d ? readdir(d) : nullptr) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    }
    if (d) closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

TEST_F(TrustStoreTest, AMissingStoreTrustsNothing) {
  TrustStore store(StorePath());
  auto found = store.Find("/ws");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_FALSE(found->has_value());
  EXPECT_FALSE(PathExists(StorePath()));  // looking writes nothing
}

TEST_F(TrustStoreTest, TrustPinsAHashPerWorkspace) {
  TrustStore store(StorePath());
  ASSERT_TRUE(store.Trust("/ws/a", "aaaa", 1).ok());
  ASSERT_TRUE(store.Trust("/ws/b", "bbbb", 2).ok());
  ASSERT_TRUE(store.Trust("/ws/a", "cccc", 3).ok());  // trusted again, at new settings
  EXPECT_EQ(store.Find("/ws/a")->value_or(""), "cccc");
  EXPECT_EQ(store.Find("/ws/b")->value_or(""), "bbbb");
  EXPECT_FALSE(store.Find("/ws")->has_value());
  EXPECT_FALSE(store.Find("/ws/a/sub")->has_value());
}

TEST_F(TrustStoreTest, WrittenAtomicallyAndPrivately) {
  TrustStore store(StorePath());
  ASSERT_TRUE(store.Trust("/ws", "abcd", 7).ok());
  struct stat st;
  ASSERT_EQ(stat(StorePath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_ + "/config/odin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // No temporary file is left beside it: it was renamed into place.
  EXPECT_EQ(Listing(), (std::vector<std::string>{"trusted.json", "trusted.json.lock"}));
  nlohmann::json j = nlohmann::json::parse(*ReadFileToString(StorePath()));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["workspaces"]["/ws"]["sha256"], "abcd");
  EXPECT_EQ(j["workspaces"]["/ws"]["trusted_at_ms"], 7);
}

TEST_F(TrustStoreTest, RevokeForgetsOnlyThatWorkspace) {
  TrustStore store(StorePath());
  ASSERT_TRUE(store.Trust("/ws/a", "aaaa", 1).ok());
  ASSERT_TRUE(store.Trust("/ws/b", "bbbb", 1).ok());
  EXPECT_TRUE(*store.Revoke("/ws/a"));
  EXPECT_FALSE(*store.Revoke("/ws/a"));  // already gone
  EXPECT_FALSE(store.Find("/ws/a")->has_value());
  EXPECT_EQ(store.Find("/ws/b")->value_or(""), "bbbb");
}

TEST_F(TrustStoreTest, AMalformedStoreIsAnErrorNamingIt) {
  ASSERT_TRUE(MakeDirs(dir_ + "/config/odin").ok());
  ASSERT_TRUE(WriteFileAtomic(StorePath(), "{\"version\": 1, \"workspaces\": [").ok());
  TrustStore store(StorePath());
  auto found = store.Find("/ws");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find(StorePath()), std::string::npos);
  // Nor is it overwritten by a trust: the user's entries are not dropped.
  EXPECT_FALSE(store.Trust("/ws", "aaaa", 1).ok());
  EXPECT_EQ(*ReadFileToString(StorePath()), "{\"version\": 1, \"workspaces\": [");
}

TEST_F(TrustStoreTest, AStoreOthersCanWriteIsRefused) {
  TrustStore store(StorePath());
  ASSERT_TRUE(store.Trust("/ws", "aaaa", 1).ok());
  ASSERT_EQ(chmod(StorePath().c_str(), 0666), 0);
  auto found = store.Find("/ws");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace odin
