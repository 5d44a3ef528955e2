#include "workspace/change_digest.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

constexpr const char* kAbsent = ChangeDigest::kAbsent;

TEST(ChangeDigestTest, NothingRecordedIsTheStartingValue) {
  ChangeDigest d;
  EXPECT_EQ(d.Value(), "");
}

TEST(ChangeDigestTest, ARewriteOfTheSameBytesChangesNothing) {
  ChangeDigest d;
  d.Note("a.txt", "aaa", "aaa");
  EXPECT_EQ(d.Value(), "");
  d.Note("b.txt", "bbb", "ccc");
  std::string changed = d.Value();
  EXPECT_NE(changed, "");
  d.Note("b.txt", "ccc", "ccc");
  EXPECT_EQ(d.Value(), changed);
}

TEST(ChangeDigestTest, EveryRealChangeGivesANewValue) {
  ChangeDigest d;
  d.Note("a.txt", "v0", "v1");
  std::string one = d.Value();
  d.Note("a.txt", "v1", "v2");
  std::string two = d.Value();
  d.Note("b.txt", kAbsent, "v2");
  std::string three = d.Value();
  EXPECT_NE(one, two);
  EXPECT_NE(two, three);
  EXPECT_NE(one, three);
}

TEST(ChangeDigestTest, PuttingAFileBackAsItWasIsTheValueBefore) {
  ChangeDigest d;
  d.Note("keep.txt", "k0", "k1");
  std::string before = d.Value();
  d.Note("a.txt", "v0", "v1");
  d.Note("new.txt", kAbsent, "n");
  EXPECT_NE(d.Value(), before);
  d.Note("a.txt", "v1", "v0");
  d.Note("new.txt", "n", kAbsent);
  EXPECT_EQ(d.Value(), before);
}

TEST(ChangeDigestTest, ThePathCountsNotOnlyTheBytes) {
  ChangeDigest d;
  d.Note("a.txt", kAbsent, "same");
  ChangeDigest e;
  e.Note("b.txt", kAbsent, "same");
  EXPECT_NE(d.Value(), e.Value());
}

TEST(ChangeDigestTest, ContentNotKnownCountsAsAChangeEachTime) {
  ChangeDigest d;
  d.Note("a.txt", "", "v1");  // before not known
  std::string one = d.Value();
  EXPECT_NE(one, "");
  d.Note("a.txt", "v1", "");  // after not known
  std::string two = d.Value();
  EXPECT_NE(two, one);
  d.Note("a.txt", "", "");
  EXPECT_NE(d.Value(), two);
  // Known again: from here the bytes decide.
  d.Note("a.txt", "", "v2");
  std::string three = d.Value();
  d.Note("a.txt", "v2", "v2");
  EXPECT_EQ(d.Value(), three);
}

TEST(ChangeDigestTest, AChangeNoPathNamesIsAChange) {
  ChangeDigest d;
  d.NoteUnknown();
  std::string one = d.Value();
  EXPECT_NE(one, "");
  d.NoteUnknown();
  EXPECT_NE(d.Value(), one);
}

}  // namespace
}  // namespace odin
