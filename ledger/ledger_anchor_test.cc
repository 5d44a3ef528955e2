#include "ledger/ledger_anchor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class LedgerAnchorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *MakeTempDir("odin-anchor-test"); }
  void TearDown() override { RemoveTree(dir_); }
  std::string Anchors() { return dir_ + "/state/odin/ledgers"; }
  int64_t SeqNow(LedgerAnchor& a) {
    auto s = a.Read();
    return s.ok() && s->has_value() ? (*s)->seq : -1;
  }
  std::string dir_;
};

TEST_F(LedgerAnchorTest, NothingIsWrittenUntilTheFirstAdvance) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  auto s = a.Read();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->has_value());
  EXPECT_FALSE(PathExists(Anchors()));
}

TEST_F(LedgerAnchorTest, AdvanceKeepsTheHeadAndTheLedgerPathPrivately) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  ASSERT_TRUE(a.Advance(0, 3, "h3").ok());
  auto s = a.Read();
  ASSERT_TRUE(s.ok() && s->has_value());
  EXPECT_EQ((*s)->seq, 3);
  EXPECT_EQ((*s)->hash, "h3");
  EXPECT_EQ((*s)->ledger, "/ws/.odin/odin.db");
  EXPECT_EQ(DirName(a.path()), Anchors());
  struct stat st;
  ASSERT_EQ(stat(Anchors().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(a.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Another workspace's ledger has an anchor of its own.
  LedgerAnchor b(Anchors(), "/other/.odin/odin.db");
  EXPECT_NE(a.path(), b.path());
  EXPECT_FALSE(b.Read()->has_value());
}

TEST_F(LedgerAnchorTest, NeverMovesBackwards) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  LedgerAnchor late(Anchors(), "/ws/.odin/odin.db");  // a second writer, behind
  ASSERT_TRUE(a.Advance(0, 5, "h5").ok());
  ASSERT_TRUE(late.Advance(0, 3, "h3").ok());
  EXPECT_EQ(SeqNow(a), 5);
  EXPECT_EQ((*a.Read())->hash, "h5");
}

TEST_F(LedgerAnchorTest, ASecondHashForTheSameRecordIsCorruption) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  ASSERT_TRUE(a.Advance(0, 5, "h5").ok());
  Status s = a.Advance(0, 5, "other");
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("record 5"), std::string::npos) << s.message();
}

TEST_F(LedgerAnchorTest, AWriterOfAnOlderGenerationCannotMoveIt) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  ASSERT_TRUE(a.Advance(0, 5, "h5").ok());
  ASSERT_TRUE(a.Update([](const std::optional<AnchorState>& now) -> StatusOr<std::optional<AnchorState>> {
                 AnchorState next = *now;
                 next.resets.push_back({1, next.seq, next.hash, next.seq, "/ws/.odin/odin.db.reset-1"});
                 next.generation = 1;
                 next.seq = 0;
                 next.hash.clear();
                 return std::optional<AnchorState>(next);
               }).ok());
  Status s = a.Advance(0, 6, "h6");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("/ws/.odin/odin.db.reset-1"), std::string::npos) << s.message();
  ASSERT_TRUE(a.Advance(1, 1, "n1").ok());
  auto now = a.Read();
  EXPECT_EQ((*now)->generation, 1);
  EXPECT_EQ((*now)->seq, 1);
  ASSERT_EQ((*now)->resets.size(), 1u);
  EXPECT_EQ((*now)->resets[0].anchored_seq, 5);
}

TEST_F(LedgerAnchorTest, AGarbledAnchorIsCorruptionNamingIt) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  ASSERT_TRUE(a.Advance(0, 1, "h1").ok());
  ASSERT_TRUE(WriteFileAtomic(a.path(), "{\"version\":1,\"seq\":").ok());
  auto s = a.Read();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_NE(s.status().message().find(a.path()), std::string::npos);
  EXPECT_EQ(a.Advance(0, 2, "h2").code(), StatusCode::kCorruption);
}

// A write torn by a crash (here: garbage over the newest slot) leaves the
// other slot, one write older, as the anchor; the next write repairs it.
TEST_F(LedgerAnchorTest, ATornWriteLeavesTheOlderSlot) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  ASSERT_TRUE(a.Advance(0, 1, "h1").ok());  // slot 0
  ASSERT_TRUE(a.Advance(0, 2, "h2").ok());  // slot 1
  int fd = open(a.path().c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "0123456789", 10, 16384 + 70), 10);
  close(fd);
  EXPECT_EQ(SeqNow(a), 1);
  ASSERT_TRUE(a.Advance(0, 3, "h3").ok());
  EXPECT_EQ(SeqNow(a), 3);
  EXPECT_EQ((*a.Read())->hash, "h3");
}

TEST_F(LedgerAnchorTest, AnAnchorOfAnotherLedgerIsRefused) {
  LedgerAnchor a(Anchors(), "/ws/.odin/odin.db");
  LedgerAnchor b(Anchors(), "/other/.odin/odin.db");
  ASSERT_TRUE(b.Advance(0, 4, "h4").ok());
  ASSERT_TRUE(MakeDirs(Anchors()).ok());
  ASSERT_EQ(rename(b.path().c_str(), a.path().c_str()), 0);
  auto s = a.Read();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("belongs to /other/.odin/odin.db"), std::string::npos);
}

// Processes racing: each advances every 4th record; a reader watching the
// anchor never sees it go back, and it ends at the newest.
TEST_F(LedgerAnchorTest, RacingWritersOnlyMoveItForward) {
  constexpr int kWriters = 4, kRecords = 400;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      LedgerAnchor mine(Anchors(), "/ws/.odin/odin.db");
      for (int seq = w + 1; seq <= kRecords; seq += kWriters) {
        if (!mine.Advance(0, seq, "h" + std::to_string(seq)).ok()) _exit(1);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  LedgerAnchor watcher(Anchors(), "/ws/.odin/odin.db");
  int64_t last = 0;
  bool backwards = false;
  for (int running = kWriters; running > 0;) {
    int64_t now = SeqNow(watcher);
    if (now >= 0) {
      backwards = backwards || now < last;
      last = std::max(last, now);
    }
    int status;
    pid_t done = waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      --running;
    }
  }
  EXPECT_FALSE(backwards);
  EXPECT_EQ(SeqNow(watcher), kRecords);
  EXPECT_EQ((*watcher.Read())->hash, "h" + std::to_string(kRecords));
}

TEST(LedgerAnchorDirTest, FollowsXdgStateHomeThenHome) {
  std::string saved_state = getenv("XDG_STATE_HOME") ? getenv("XDG_STATE_HOME") : "";
  std::string saved_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("XDG_STATE_HOME", "/x/state", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*LedgerAnchor::DefaultDir(), "/x/state/odin/ledgers");
  setenv("XDG_STATE_HOME", "relative/state", 1);  // invalid by the spec: ignored
  EXPECT_EQ(*LedgerAnchor::DefaultDir(), "/home/u/.local/state/odin/ledgers");
  unsetenv("XDG_STATE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(LedgerAnchor::DefaultDir().status().code(), StatusCode::kNotFound);
  if (!saved_state.empty()) setenv("XDG_STATE_HOME", saved_state.c_str(), 1);
  if (!saved_home.empty()) setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace odin
