#include "coordinator/first_look_thread.h"

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "workspace/change_tracker.h"
#include "workspace/git_ignore.h"
#include "workspace/protected_paths.h"

namespace odin {
namespace {

class FirstLookThreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = *RealPath(*MakeTempDir("odin-first-look"));
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(WriteFileAtomic(ws_ + "/f" + std::to_string(i) + ".txt", "x").ok());
    ASSERT_TRUE(MakeDirs(ws_ + "/sub/.git").ok());  // a nested git directory, for the index
  }
  void TearDown() override { RemoveTree(ws_); }
  std::unique_ptr<ChangeTracker> Tracker() {
    return std::make_unique<ChangeTracker>(ws_, GitIgnore::Open(ws_), ChangeTrackerOptions());
  }
  std::string ws_;
};

TEST_F(FirstLookThreadTest, TheLookHandsOverTheTrackersReferenceAndTheIndex) {
  FirstLookThread look;
  EXPECT_FALSE(look.running());
  ASSERT_TRUE(look.Start(Tracker(), std::make_unique<ProtectedIndex>(ws_)));
  EXPECT_TRUE(look.running());
  auto [tracker, index] = look.Take();
  EXPECT_FALSE(look.running());
  ASSERT_NE(tracker, nullptr);
  EXPECT_GE(tracker->entries(), 50u);  // the reference: the tree as it was
  ASSERT_NE(index, nullptr);
  EXPECT_TRUE(index->complete());
  // A change after the look is the tracker's to find.
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/f0.txt", "changed").ok());
  ChangeSet changes = tracker->Rescan();
  ASSERT_EQ(changes.changes.size(), 1u);
  EXPECT_EQ(changes.changes[0].path, "f0.txt");
}

TEST_F(FirstLookThreadTest, ALookStoppedDropsWhatItMadeAndOneWithoutAnIndexMakesNone) {
  FirstLookThread look;
  ASSERT_TRUE(look.Start(Tracker(), nullptr));
  look.Stop();
  EXPECT_FALSE(look.running());
  auto [tracker, index] = look.Take();
  EXPECT_EQ(tracker, nullptr);
  EXPECT_EQ(index, nullptr);

  ASSERT_TRUE(look.Start(Tracker(), nullptr));  // the index was made already
  auto [again, none] = look.Take();
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(none, nullptr);
}

// A later look on a tracker that has its reference (a tree without
// watches): what it found changed is handed over with the tracker.
TEST_F(FirstLookThreadTest, ALaterLookHandsOverWhatItFound) {
  std::unique_ptr<ChangeTracker> tracker = Tracker();
  tracker->Rescan();
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/f1.txt", "changed outside").ok());
  FirstLookThread look;
  ASSERT_TRUE(look.Start(std::move(tracker), nullptr));
  ChangeSet found;
  auto [back, index] = look.Take(nullptr, &found);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(index, nullptr);
  ASSERT_EQ(found.changes.size(), 1u);
  EXPECT_EQ(found.changes[0].path, "f1.txt");
  EXPECT_TRUE(back->Rescan().empty());  // the look was the reference's update
}

}  // namespace
}  // namespace odin
