#include "cli/diff_view.h"

#include <string>

#include <gtest/gtest.h>

namespace odin {
namespace {

const char kDiff[] =
    "--- a/f.txt\n"
    "+++ b/f.txt\n"
    "@@ -1,2 +1,2 @@\n"
    " keep\n"
    "-old\n"
    "+new\n"
    "\\ No newline at end of file\n";

TEST(DiffViewTest, PlainOutputIsTheDiffByteForByte) {
  DiffView v = RenderDiff(kDiff, false, 0);
  EXPECT_EQ(v.text, kDiff);
  EXPECT_EQ(v.lines_total, 7);
  EXPECT_EQ(v.lines_shown, 7);
  // A last line without newline gets one.
  EXPECT_EQ(RenderDiff("@@ -1 +1 @@\n-a\n+b", false, 0).text, "@@ -1 +1 @@\n-a\n+b\n");
  EXPECT_EQ(RenderDiff("", false, 0).text, "");
}

TEST(DiffViewTest, HeadersBoldHunksCyanAddedGreenRemovedRed) {
  DiffView v = RenderDiff(kDiff, true, 0);
  EXPECT_EQ(v.text,
            "\033[1m--- a/f.txt\033[0m\n"
            "\033[1m+++ b/f.txt\033[0m\n"
            "\033[36m@@ -1,2 +1,2 @@\033[0m\n"
            " keep\n"
            "\033[31m-old\033[0m\n"
            "\033[32m+new\033[0m\n"
            "\033[2m\\ No newline at end of file\033[0m\n");
}

TEST(DiffViewTest, LinesThatLookLikeHeadersInsideAHunkKeepTheirColour) {
  // A removed "-- x" reads "--- x"; an added "++ y" reads "+++ y".
  DiffView v = RenderDiff("--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n--- x\n-y\n+++ y\n", true, 0);
  EXPECT_EQ(v.text,
            "\033[1m--- a/f\033[0m\n\033[1m+++ b/f\033[0m\n\033[36m@@ -1,2 +1,1 @@\033[0m\n"
            "\033[31m--- x\033[0m\n\033[31m-y\033[0m\n\033[32m+++ y\033[0m\n");
  // A second file after a hunk summarized without its lines.
  v = RenderDiff(
      "--- a/big\n+++ b/big\n@@ -1,900 +1,900 @@ (too large to diff line by line)\n"
      "--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n",
      true, 0);
  EXPECT_NE(v.text.find("\033[1m--- a/g\033[0m\n\033[1m+++ b/g\033[0m\n"), std::string::npos) << v.text;
}

TEST(DiffViewTest, FoldsPastMaxLines) {
  std::string diff = "--- a/f\n+++ b/f\n@@ -1,95 +1,95 @@\n";
  for (int i = 0; i < 94; ++i) diff += (i % 2 ? "+" : "-") + std::to_string(i) + "\n";
  DiffView v = RenderDiff(diff, false, 40);
  EXPECT_EQ(v.lines_total, 97);
  EXPECT_EQ(v.lines_shown, 40);
  size_t pos = 0;
  for (int i = 0; i < 40; ++i) pos = diff.find('\n', pos) + 1;
  EXPECT_EQ(v.text, diff.substr(0, pos) + "… 57 more lines (/diff shows the whole change)\n");

  v = RenderDiff(diff, true, 40);
  EXPECT_EQ(v.lines_shown, 40);
  EXPECT_NE(v.text.find("\033[2m… 57 more lines (/diff shows the whole change)\033[0m\n"), std::string::npos);

  // Exactly max_lines, or no limit: nothing folded.
  EXPECT_EQ(RenderDiff(diff, false, 97).text, diff);
  EXPECT_EQ(RenderDiff(diff, false, 0).text, diff);
  EXPECT_EQ(RenderDiff(diff, false, 96).text.substr(RenderDiff(diff, false, 96).text.rfind("…")),
            "… 1 more line (/diff shows the whole change)\n");
}

TEST(DiffViewTest, ControlCharactersAreShownNotSent) {
  std::string diff = "--- a/f\x1b[2J\n+++ b/f\n@@ -1 +1 @@\n-\x1b]0;owned\x07\n+ok\xc2\x9b\r\n";
  for (bool color : {false, true}) {
    DiffView v = RenderDiff(diff, color, 0);
    EXPECT_NE(v.text.find("--- a/f\\x1b[2J"), std::string::npos);
    EXPECT_NE(v.text.find("-\\x1b]0;owned\\x07"), std::string::npos);
    EXPECT_NE(v.text.find("+ok\\u009b\\r"), std::string::npos);
    EXPECT_EQ(v.text.find('\r'), std::string::npos);
    EXPECT_EQ(v.text.find('\x07'), std::string::npos);
    if (!color) {
      EXPECT_EQ(v.text.find('\x1b'), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace odin
