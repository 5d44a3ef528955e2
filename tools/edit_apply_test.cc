#include "tools/edit_apply.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

ReadCoverage Full() { return {true, {}}; }
ReadCoverage Lines(uint32_t a, uint32_t b) { return {false, {{a, b}}}; }

TEST(EditApplyTest, ReplacesAUniqueMatch) {
  EditOutcome o = ApplyEdits("a\nb\nc\n", {{"b", "B", false}}, Full(), "f");
  ASSERT_EQ(o.failure, EditFailure::kNone) << o.message;
  EXPECT_EQ(o.content, "a\nB\nc\n");
  EXPECT_EQ(o.replacements, 1);
  EXPECT_EQ(o.first_changed_line, 2u);
  EXPECT_EQ(o.last_changed_line, 2u);
}

TEST(EditApplyTest, DistinctErrors) {
  EXPECT_EQ(ApplyEdits("a\n", {{"", "x", false}}, Full(), "f").failure, EditFailure::kEmptyOldString);
  EXPECT_EQ(ApplyEdits("a\n", {{"a", "a", false}}, Full(), "f").failure, EditFailure::kIdentical);
  EXPECT_EQ(ApplyEdits("a\n", {{"zz", "x", false}}, Full(), "f").failure, EditFailure::kNotFound);
  EditOutcome amb = ApplyEdits("x\ny\nx\nx\n", {{"x", "z", false}}, Full(), "f");
  EXPECT_EQ(amb.failure, EditFailure::kAmbiguous);
  EXPECT_NE(amb.message.find("matches 3 times in f (lines 1, 3, 4)"), std::string::npos) << amb.message;
}

TEST(EditApplyTest, ReplaceAllReplacesEveryMatch) {
  EditOutcome o = ApplyEdits("x y x\nx\n", {{"x", "z", true}}, Full(), "f");
  EXPECT_EQ(o.content, "z y z\nz\n");
  EXPECT_EQ(o.replacements, 3);
}

TEST(EditApplyTest, MatchOutsideTheReadLinesIsRefusedNamingTheRange) {
  std::string text;
  for (int i = 1; i <= 100; ++i) text += "line " + std::to_string(i) + "\n";
  EditOutcome o = ApplyEdits(text, {{"line 80\n", "LINE 80\n", false}}, Lines(10, 20), "big.txt");
  EXPECT_EQ(o.failure, EditFailure::kOutsideRead);
  EXPECT_NE(o.message.find("line 80 of big.txt"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("you read lines 10-20"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("Read lines 77-83"), std::string::npos) << o.message;
  // Inside the read lines it goes through.
  EXPECT_EQ(ApplyEdits(text, {{"line 15\n", "LINE 15\n", false}}, Lines(10, 20), "f").failure, EditFailure::kNone);
}

TEST(EditApplyTest, AmbiguityCountsMatchesOutsideTheReadLinesToo) {
  EditOutcome o = ApplyEdits("dup\nother\ndup\n", {{"dup", "x", false}}, Lines(1, 1), "f");
  EXPECT_EQ(o.failure, EditFailure::kAmbiguous);
}

TEST(EditApplyTest, MultiEditAppliesInOrderAndFailsAsAWhole) {
  EditOutcome o = ApplyEdits("alpha beta\n", {{"alpha", "gamma", false}, {"gamma beta", "done", false}}, Full(), "f");
  ASSERT_EQ(o.failure, EditFailure::kNone) << o.message;
  EXPECT_EQ(o.content, "done\n");
  EditOutcome bad = ApplyEdits("alpha beta\n", {{"alpha", "gamma", false}, {"missing", "x", false}}, Full(), "f");
  EXPECT_EQ(bad.failure, EditFailure::kNotFound);
  EXPECT_NE(bad.message.find("edit 2:"), std::string::npos);
  EXPECT_TRUE(bad.content.empty());
}

TEST(EditApplyTest, MultiEditTracksTheReadLinesAsTextMoves) {
  // Line 1 grows to three lines; line 3 (read) moves to line 5 and stays editable,
  // while line 2 (not read) stays off limits.
  std::string text = "a\nsecret\nc\n";
  ReadCoverage read{false, {{1, 1}, {3, 3}}};
  EditOutcome ok = ApplyEdits(text, {{"a\n", "a1\na2\na3\n", false}, {"c\n", "C\n", false}}, read, "f");
  ASSERT_EQ(ok.failure, EditFailure::kNone) << ok.message;
  EXPECT_EQ(ok.content, "a1\na2\na3\nsecret\nC\n");
  EditOutcome no = ApplyEdits(text, {{"a\n", "a1\na2\n", false}, {"secret", "x", false}}, read, "f");
  EXPECT_EQ(no.failure, EditFailure::kOutsideRead);
}

TEST(EditApplyTest, OverlappingMatchesAreAmbiguous) {
  EditOutcome o = ApplyEdits("}\n}\n}\n", {{"}\n}", "x", false}}, Full(), "f");
  EXPECT_EQ(o.failure, EditFailure::kAmbiguous);
  EXPECT_NE(o.message.find("matches 2 times"), std::string::npos) << o.message;
}

TEST(EditApplyTest, MultiEditNamesUnreadLinesAsNumberedOnDisk) {
  // The first edit adds 50 lines near the top; the second targets line 100
  // of the file on disk, which was not read. The message must say 100.
  std::string text;
  for (int i = 1; i <= 120; ++i) text += "l" + std::to_string(i) + "\n";
  std::string many;
  for (int i = 0; i < 50; ++i) many += "new\n";
  EditOutcome o = ApplyEdits(text, {{"l5\n", "l5\n" + many, false}, {"l100\n", "x\n", false}}, Lines(1, 20), "f");
  EXPECT_EQ(o.failure, EditFailure::kOutsideRead);
  EXPECT_NE(o.message.find("line 100 of f"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("Read lines 97-103"), std::string::npos) << o.message;
}

TEST(EditApplyTest, CrlfFilesStayCrlf) {
  std::string text = "one\r\ntwo\r\nthree\r\n";
  EditOutcome o = ApplyEdits(text, {{"one\ntwo", "uno\ndos", false}}, Full(), "f");
  ASSERT_EQ(o.failure, EditFailure::kNone) << o.message;
  EXPECT_EQ(o.content, "uno\r\ndos\r\nthree\r\n");
}

TEST(EditApplyTest, NonUtf8BytesOutsideTheEditSurvive) {
  std::string text = "caf\xe9\nkeep \xff\xfe bytes\nchange me\n";
  EditOutcome o = ApplyEdits(text, {{"change me", "changed", false}}, Full(), "f");
  ASSERT_EQ(o.failure, EditFailure::kNone);
  EXPECT_EQ(o.content, "caf\xe9\nkeep \xff\xfe bytes\nchanged\n");
}

TEST(EditApplyTest, DescribesRanges) { EXPECT_EQ(DescribeRanges({{1, 5}, {9, 9}}), "lines 1-5, 9"); }

}  // namespace
}  // namespace odin
