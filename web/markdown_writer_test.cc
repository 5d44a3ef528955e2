// MarkdownWriter on its own: whitespace, held markers, prefixes and the
// blank lines between blocks, the byte limit.

#include "web/markdown_writer.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

constexpr size_t kNoLimit = 1 << 20;

TEST(MarkdownWriterTest, WhitespaceCollapsesAndNeverStartsALine) {
  MarkdownWriter w(kNoLimit);
  w.Text("  one \n\t two  ");
  w.Text(" three");
  w.Break(2);
  w.Space();
  w.Text("four");
  EXPECT_EQ(w.Finish(), "one two three\n\nfour\n");
}

TEST(MarkdownWriterTest, MarkersWaitForContent) {
  MarkdownWriter w(kNoLimit);
  w.Text("a");
  w.Open("**");
  w.Text(" b ");
  w.Close("**", "**");
  w.Open("*");
  w.Close("*", "*");  // nothing inside: nothing written
  w.Text("c");
  EXPECT_EQ(w.Finish(), "a **b** c\n");
}

TEST(MarkdownWriterTest, PrefixesMarkFirstLinesAndBlankLines) {
  MarkdownWriter w(kNoLimit);
  w.PushPrefix("> ", "> ");
  w.Text("quoted");
  w.Break(2);
  w.PushPrefix("- ", "  ");
  w.Text("item");
  w.LineBreak();
  w.Text("more");
  w.Break(2);
  w.Text("para");
  w.PopPrefix();
  w.PopPrefix();
  w.Break(2);
  w.Text("after");
  EXPECT_EQ(w.Finish(), "> quoted\n>\n> - item\n>   more\n>\n>   para\n\nafter\n");
}

TEST(MarkdownWriterTest, LinesAreWrittenAsTheyAre) {
  MarkdownWriter w(kNoLimit);
  w.PushPrefix("> ", "> ");
  w.Lines("```\n  x  \n\n```");
  w.PopPrefix();
  EXPECT_EQ(w.Finish(), "> ```\n>   x  \n> \n> ```\n");
}

TEST(MarkdownWriterTest, OutputStopsAtTheLimitOnACharacterBoundary) {
  MarkdownWriter w(5);
  w.Text("abcd\xC3\xA9");  // the é would end at byte 6
  EXPECT_TRUE(w.full());
  EXPECT_EQ(w.room(), 0u);
  EXPECT_EQ(w.Finish(), "abcd");
  MarkdownWriter exact(5);
  exact.Text("abcde");
  EXPECT_EQ(exact.Finish(), "abcde");  // no room for the final newline
}

}  // namespace
}  // namespace odin
