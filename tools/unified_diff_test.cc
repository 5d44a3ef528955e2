#include "tools/unified_diff.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(UnifiedDiffTest, OneChangedLineWithContext) {
  std::string a, b;
  for (int i = 1; i <= 20; ++i) {
    a += "l" + std::to_string(i) + "\n";
    b += (i == 10 ? std::string("CHANGED") : "l" + std::to_string(i)) + "\n";
  }
  DiffResult d = UnifiedDiff(a, b, "f.txt");
  EXPECT_EQ(d.added, 1);
  EXPECT_EQ(d.removed, 1);
  EXPECT_EQ(d.text, "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+CHANGED\n l11\n l12\n l13\n");
}

TEST(UnifiedDiffTest, NewFileAndEqualFiles) {
  DiffResult d = UnifiedDiff("", "x\ny\n", "new.txt");
  EXPECT_EQ(d.text, "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(d.added, 2);
  EXPECT_TRUE(UnifiedDiff("same\n", "same\n", "f").text.empty());
}

TEST(UnifiedDiffTest, AWholesaleRewriteOfALargeFileIsSummarized) {
  std::string a, b;
  for (int i = 0; i < 20000; ++i) {
    a += "old " + std::to_string(i) + "\n";
    b += "new " + std::to_string(i) + "\n";
  }
  DiffResult d = UnifiedDiff(a, b, "gen.txt");
  EXPECT_EQ(d.removed, 20000);
  EXPECT_EQ(d.added, 20000);
  EXPECT_EQ(d.text,
            "--- a/gen.txt\n+++ b/gen.txt\n@@ -1,20000 +1,20000 @@ (20000 lines replaced by 20000; too large to diff "
            "line by line)\n");
}

TEST(UnifiedDiffTest, MissingFinalNewlineIsMarked) {
  DiffResult d = UnifiedDiff("a\nb", "a\nc", "f");
  EXPECT_NE(d.text.find("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"), std::string::npos)
      << d.text;
}

// MapLines: where each line of `before` went in `after`.

// "l1\n" .. "lN\n".
std::string NumberedLines(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) text += "l" + std::to_string(i) + "\n";
  return text;
}

void ExpectKept(const MovedLine& m, uint32_t line) {
  EXPECT_TRUE(m.kept);
  EXPECT_EQ(m.first, line);
  EXPECT_EQ(m.last, line);
}

void ExpectReplacedBy(const MovedLine& m, uint32_t first, uint32_t last) {
  EXPECT_FALSE(m.kept);
  EXPECT_EQ(m.first, first);
  EXPECT_EQ(m.last, last);
}

TEST(MapLinesTest, EqualTextsKeepEveryLineInPlace) {
  std::vector<MovedLine> map = MapLines("a\nb\nc\n", "a\nb\nc\n");
  ASSERT_EQ(map.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) ExpectKept(map[i], i + 1);
}

TEST(MapLinesTest, EmptyBeforeMapsNothing) {
  EXPECT_TRUE(MapLines("", "x\ny\n").empty());
  EXPECT_TRUE(MapLines("", "").empty());
}

TEST(MapLinesTest, OneEntryPerLineOfBeforeIncludingALastLineWithoutNewline) {
  EXPECT_EQ(MapLines("a\nb", "a\nb").size(), 2u);
  EXPECT_EQ(MapLines("a\nb\n", "z\n").size(), 2u);
}

TEST(MapLinesTest, LinesInsertedAboveShiftTheLinesBelow) {
  std::vector<MovedLine> map = MapLines("a\nb\nc\n", "new1\nnew2\na\nb\nc\n");
  ASSERT_EQ(map.size(), 3u);
  ExpectKept(map[0], 3);
  ExpectKept(map[1], 4);
  ExpectKept(map[2], 5);
}

TEST(MapLinesTest, LinesDeletedAboveShiftTheLinesBelowUp) {
  std::vector<MovedLine> map = MapLines("a\nb\nc\nd\n", "c\nd\n");
  ASSERT_EQ(map.size(), 4u);
  EXPECT_FALSE(map[0].kept);
  EXPECT_FALSE(map[1].kept);
  ExpectKept(map[2], 1);
  ExpectKept(map[3], 2);
}

TEST(MapLinesTest, ADeletedLineHasNoReplacement) {
  std::vector<MovedLine> map = MapLines("a\nb\nc\n", "a\nc\n");
  ASSERT_EQ(map.size(), 3u);
  ExpectKept(map[0], 1);
  EXPECT_FALSE(map[1].kept);
  EXPECT_LT(map[1].last, map[1].first) << "a deleted line has no replacing lines";
  ExpectKept(map[2], 2);
}

TEST(MapLinesTest, ARewrittenLinePointsAtTheLinesThatReplacedIt) {
  std::vector<MovedLine> map = MapLines("a\nb\nc\n", "a\nX\nY\nc\n");
  ASSERT_EQ(map.size(), 3u);
  ExpectKept(map[0], 1);
  ExpectReplacedBy(map[1], 2, 3);
  ExpectKept(map[2], 4);
}

TEST(MapLinesTest, SeparateHunksEachPointAtTheirOwnReplacement) {
  // l3 -> X (line 3); l6 -> Y, Z (lines 6-7); everything after shifts by one.
  std::string after = "l1\nl2\nX\nl4\nl5\nY\nZ\nl7\nl8\n";
  std::vector<MovedLine> map = MapLines(NumberedLines(8), after);
  ASSERT_EQ(map.size(), 8u);
  ExpectKept(map[0], 1);
  ExpectKept(map[1], 2);
  ExpectReplacedBy(map[2], 3, 3);
  ExpectKept(map[3], 4);
  ExpectKept(map[4], 5);
  ExpectReplacedBy(map[5], 6, 7);
  ExpectKept(map[6], 8);
  ExpectKept(map[7], 9);
}

TEST(MapLinesTest, CommonLinesInsideTheChangedRegionKeepTheirIdentity) {
  // The prefix/suffix trim leaves b..d; c survives between two rewrites.
  std::vector<MovedLine> map = MapLines("a\nb\nc\nd\ne\n", "a\nB1\nB2\nc\nD\ne\n");
  ASSERT_EQ(map.size(), 5u);
  ExpectKept(map[0], 1);
  ExpectReplacedBy(map[1], 2, 3);
  ExpectKept(map[2], 4);
  ExpectReplacedBy(map[3], 5, 5);
  ExpectKept(map[4], 6);
}

TEST(MapLinesTest, MoreLinesRemovedThanAddedStillMapsInBeforeOrder) {
  // The changed region of `before` is longer than that of `after`.
  std::vector<MovedLine> map = MapLines("a\nb1\nb2\nb3\nc\nd1\nd2\ne\n", "a\nB\nc\ne\n");
  ASSERT_EQ(map.size(), 8u);
  ExpectKept(map[0], 1);
  for (int i : {1, 2, 3}) ExpectReplacedBy(map[i], 2, 2);
  ExpectKept(map[4], 3);
  for (int i : {5, 6}) {
    EXPECT_FALSE(map[i].kept);
    EXPECT_LT(map[i].last, map[i].first);
  }
  ExpectKept(map[7], 4);
}

TEST(MapLinesTest, ChangedLastLineWithoutNewlineIsReplaced) {
  std::vector<MovedLine> map = MapLines("a\nb", "a\nc");
  ASSERT_EQ(map.size(), 2u);
  ExpectKept(map[0], 1);
  ExpectReplacedBy(map[1], 2, 2);
}

TEST(MapLinesTest, AddingTheFinalNewlineRewritesTheLastLine) {
  // "b" and "b\n" differ, as they do in UnifiedDiff.
  std::vector<MovedLine> map = MapLines("a\nb", "a\nb\n");
  ASSERT_EQ(map.size(), 2u);
  ExpectKept(map[0], 1);
  ExpectReplacedBy(map[1], 2, 2);
}

TEST(MapLinesTest, EverythingDeletedLeavesNoReplacement) {
  std::vector<MovedLine> map = MapLines("a\nb\n", "");
  ASSERT_EQ(map.size(), 2u);
  for (const MovedLine& m : map) {
    EXPECT_FALSE(m.kept);
    EXPECT_LT(m.last, m.first);
  }
}

TEST(MapLinesTest, ATooLargeRewriteMapsEveryChangedLineToTheWholeReplacement) {
  // 5001 x 5001 changed lines is past the limit of the line-by-line diff.
  std::string a = "head\n", b = "head\n";
  for (int i = 0; i < 5001; ++i) {
    a += "old " + std::to_string(i) + "\n";
    b += "new " + std::to_string(i) + "\n";
  }
  a += "tail\n";
  b += "extra\ntail\n";
  std::vector<MovedLine> map = MapLines(a, b);
  ASSERT_EQ(map.size(), 5003u);
  ExpectKept(map[0], 1);
  ExpectReplacedBy(map[1], 2, 5003);
  ExpectReplacedBy(map[2500], 2, 5003);
  ExpectReplacedBy(map[5001], 2, 5003);
  ExpectKept(map[5002], 5004);
}

TEST(MapLinesTest, AgreesWithUnifiedDiffOnWhatChanged) {
  std::string before = NumberedLines(30);
  std::string after = before;
  after.replace(after.find("l10\n"), 4, "ten\n");
  after.replace(after.find("l20\n"), 4, "");
  std::vector<MovedLine> map = MapLines(before, after);
  DiffResult d = UnifiedDiff(before, after, "f");
  int not_kept = 0;
  for (const MovedLine& m : map) not_kept += m.kept ? 0 : 1;
  EXPECT_EQ(not_kept, d.removed);
  ExpectReplacedBy(map[9], 10, 10);
  ExpectKept(map[20], 20);  // l21 moved up one line
}

}  // namespace
}  // namespace odin
