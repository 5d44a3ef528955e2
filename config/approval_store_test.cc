#include "config/approval_store.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class ApprovalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *RealPath(*MakeTempDir("odin-approval-store-test")); }
  void TearDown() override { RemoveTree(dir_); }
  std::string StorePath() const { return dir_ + "/config/odin/approvals.json"; }
  std::string dir_;
};

TEST_F(ApprovalStoreTest, SavedPerWorkspaceOrEverywhereAndListedInOrder) {
  ApprovalStore store(StorePath());
  EXPECT_TRUE(store.KeysFor("/ws/a")->empty());
  EXPECT_FALSE(PathExists(StorePath()));  // looking writes nothing
  ASSERT_TRUE(store.Save({"command:npm test"}, "/ws/a", 1).ok());
  ASSERT_TRUE(store.Save({"command:make"}, "", 2).ok());
  ASSERT_TRUE(store.Save({"command:npm test"}, "/ws/a", 3).ok());  // saved once
  EXPECT_EQ(*store.KeysFor("/ws/a"), (std::vector<std::string>{"command:npm test", "command:make"}));
  EXPECT_EQ(*store.KeysFor("/ws/b"), (std::vector<std::string>{"command:make"}));
  std::vector<SavedApproval> all = *store.List();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].workspace, "/ws/a");
  EXPECT_EQ(all[0].saved_at_ms, 1);
  EXPECT_EQ(all[1].workspace, "");
  struct stat st;
  ASSERT_EQ(stat(StorePath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ApprovalStoreTest, RemovedByNumberOrByKey) {
  ApprovalStore store(StorePath());
  ASSERT_TRUE(store.Save({"command:a", "command:b", "command:c"}, "", 1).ok());
  EXPECT_EQ(store.Remove("2")->size(), 1u);
  EXPECT_EQ(*store.KeysFor("/x"), (std::vector<std::string>{"command:a", "command:c"}));
  EXPECT_EQ(store.Remove("command:c")->size(), 1u);
  EXPECT_TRUE(store.Remove("command:zzz")->empty());
  EXPECT_TRUE(store.Remove("9")->empty());
  EXPECT_EQ(*store.KeysFor("/x"), (std::vector<std::string>{"command:a"}));
}

// Whoever can write the store decides what runs: one another user could
// write is refused, as is one that is not a store.
TEST_F(ApprovalStoreTest, AStoreOthersCanWriteOrThatIsMalformedIsRefused) {
  ApprovalStore store(StorePath());
  ASSERT_TRUE(store.Save({"command:a"}, "", 1).ok());
  ASSERT_EQ(chmod(StorePath().c_str(), 0666), 0);
  EXPECT_EQ(store.KeysFor("/x").status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(store.Save({"command:b"}, "", 2).ok());
  ASSERT_EQ(chmod(StorePath().c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomic(StorePath(), R"({"version": 1, "approvals": [{"key": 7}]})").ok());
  EXPECT_EQ(store.KeysFor("/x").status().code(), StatusCode::kCorruption);
  // Every field's type is checked before any is read (a string where the
  // time goes threw once).
  for (const char* bad : {R"({"version": 1, "approvals": [{"key": "command:a", "saved_at_ms": "soon"}]})",
                          R"({"version": 1, "approvals": [{"key": "command:a", "saved_at_ms": 1.5}]})",
                          R"({"version": 1, "approvals": [{"key": "command:a", "workspace": 3}]})"}) {
    ASSERT_TRUE(WriteFileAtomic(StorePath(), bad).ok());
    EXPECT_EQ(store.KeysFor("/x").status().code(), StatusCode::kCorruption) << bad;
    EXPECT_EQ(store.List().status().code(), StatusCode::kCorruption) << bad;
  }
  EXPECT_FALSE(store.Save({""}, "", 1).ok());
}

// Two processes saving at once lose nothing (the lock around read, change
// and write).
TEST_F(ApprovalStoreTest, ConcurrentSavesLoseNothing) {
  constexpr int kChildren = 4, kEach = 25;
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      ApprovalStore store(StorePath());
      for (int i = 0; i < kEach; ++i) {
        if (!store.Save({"command:c" + std::to_string(c) + "-" + std::to_string(i)}, "", i).ok()) _exit(1);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_EQ(status, 0);
  }
  EXPECT_EQ(ApprovalStore(StorePath()).List()->size(), static_cast<size_t>(kChildren * kEach));
}

TEST(ApprovalKeyTest, DescribedAsTheUserReadsIt) {
  EXPECT_EQ(DescribeApprovalKey("command:npm test"), "the command `npm test`");
  EXPECT_EQ(DescribeApprovalKey("network:pypi.org:443"), "commands' connections to pypi.org:443");
  EXPECT_EQ(DescribeApprovalKey("call:Read {\"file_path\":\"/etc/hosts\"}"),
            "the call Read {\"file_path\":\"/etc/hosts\"}, exactly");
}

}  // namespace
}  // namespace odin
