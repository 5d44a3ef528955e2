#include "tools/unified_diff.h"

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
  EXPECT_EQ(d.text,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+CHANGED\n l11\n l12\n l13\n");
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
  EXPECT_EQ(d.text, "--- a/gen.txt\n+++ b/gen.txt\n@@ -1,20000 +1,20000 @@ (20000 lines replaced by 20000; too large to diff "
                    "line by line)\n");
}

TEST(UnifiedDiffTest, MissingFinalNewlineIsMarked) {
  DiffResult d = UnifiedDiff("a\nb", "a\nc", "f");
  EXPECT_NE(d.text.find("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"), std::string::npos)
      << d.text;
}

}  // namespace
}  // namespace odin
