#include "cli/markdown_render.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace odin {
namespace {

const RenderStyle kPlain{false, 80};
const RenderStyle kColor{true, 80};

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MarkdownRenderTest, EmptyInputRendersNothing) {
  EXPECT_EQ(RenderMarkdown("", kPlain), "");
  EXPECT_EQ(RenderMarkdown("", kColor), "");
  EXPECT_EQ(RenderMarkdown("\n\n  \n", kPlain), "");
}

TEST(MarkdownRenderTest, HeadingsKeepTheirMarksWithoutColor) {
  EXPECT_EQ(RenderMarkdown("# Title\n\n## Part *two*\n\nSetext\n===\n", kPlain),
            "# Title\n\n## Part *two*\n\n# Setext\n");
}

TEST(MarkdownRenderTest, HeadingsAreBoldAndTheFirstLevelUnderlinedWithColor) {
  EXPECT_EQ(RenderMarkdown("# Title\n\n## Part\n", kColor), "\033[1;4mTitle\033[0m\n\n\033[1mPart\033[0m\n");
}

TEST(MarkdownRenderTest, InlineMarkupKeepsItsMarkersWithoutColor) {
  EXPECT_EQ(RenderMarkdown("Some **strong**, *emphasis*, `code` and ~~gone~~ text.", kPlain),
            "Some **strong**, *emphasis*, `code` and ~~gone~~ text.\n");
  EXPECT_EQ(RenderMarkdown("Run ``a ` b`` now", kPlain), "Run `` a ` b `` now\n");
}

TEST(MarkdownRenderTest, InlineMarkupIsStyledWithColor) {
  std::string out = RenderMarkdown("Some **strong**, *emphasis*, `code` and ~~gone~~ text.", kColor);
  EXPECT_EQ(out,
            "Some \033[1mstrong\033[0m, \033[3memphasis\033[0m, \033[36mcode\033[0m and \033[9mgone\033[0m "
            "text.\n");
  // Nested: leaving the inner style keeps the outer one.
  EXPECT_EQ(RenderMarkdown("**bold *both* bold**", kColor), "\033[1mbold \033[3mboth\033[0;1m bold\033[0m\n");
}

TEST(MarkdownRenderTest, LinksShowTheirUrlWhenItDiffersFromTheText) {
  EXPECT_EQ(RenderMarkdown("See [the docs](https://example.com/docs) or https://example.com or www.example.org.",
                           RenderStyle{false, 100}),
            "See the docs (https://example.com/docs) or https://example.com or www.example.org.\n");
  EXPECT_EQ(RenderMarkdown("[docs](https://e.com)", kColor), "docs \033[2m(https://e.com)\033[0m\n");
  EXPECT_EQ(RenderMarkdown("![a chart](chart.png) <me@example.com>", kPlain), "a chart (chart.png) me@example.com\n");
}

TEST(MarkdownRenderTest, ParagraphsWrapAtTheWidthWithoutSplittingWords) {
  RenderStyle narrow{false, 20};
  EXPECT_EQ(RenderMarkdown("one two three four five six seven\neight", narrow),
            "one two three four\nfive six seven eight\n");
  EXPECT_EQ(RenderMarkdown("a https://example.com/a/very/long/path b", narrow),
            "a\nhttps://example.com/a/very/long/path\nb\n");
  // A hard break ends the line.
  EXPECT_EQ(RenderMarkdown("one\\\ntwo", narrow), "one\ntwo\n");
  // Wide characters take two columns.
  EXPECT_EQ(RenderMarkdown("日本語の 文章です テキスト", RenderStyle{false, 12}), "日本語の\n文章です\nテキスト\n");
}

TEST(MarkdownRenderTest, WrappedStyledTextResetsAtEachLineEnd) {
  EXPECT_EQ(RenderMarkdown("**one two three four**", RenderStyle{true, 20}), "\033[1mone two three four\033[0m\n");
  EXPECT_EQ(RenderMarkdown("*aaaa bbbb cccc dddd eeee*", RenderStyle{true, 20}),
            "\033[3maaaa bbbb cccc dddd\033[0m\n\033[3meeee\033[0m\n");
}

TEST(MarkdownRenderTest, CodeBlocksAreIndentedAndNotInterpreted) {
  std::string md = "Before:\n\n```bash\n# not a heading\n**not bold**\n\n  indented\n```\n\nAfter.";
  EXPECT_EQ(RenderMarkdown(md, kPlain), "Before:\n\n  # not a heading\n  **not bold**\n\n    indented\n\nAfter.\n");
  EXPECT_EQ(RenderMarkdown("```\nx = 1\n```", kColor), "  \033[36mx = 1\033[0m\n");
  // An empty block leaves one blank line, not two.
  EXPECT_EQ(RenderMarkdown("a\n\n```\n```\n\nb", kPlain), "a\n\nb\n");
  // Never wrapped.
  std::string long_line(100, 'x');
  EXPECT_EQ(RenderMarkdown("    " + long_line + " y", RenderStyle{false, 20}), "  " + long_line + " y\n");
}

TEST(MarkdownRenderTest, BulletListsNestWithIndentation) {
  EXPECT_EQ(RenderMarkdown("- one\n- two\n  - nested\n    - deeper\n- three", kPlain),
            "• one\n• two\n  • nested\n    • deeper\n• three\n");
  EXPECT_EQ(RenderMarkdown("- a\n- b", kColor), "• a\n• b\n");
}

TEST(MarkdownRenderTest, OrderedListsAreNumberedAndAligned) {
  std::string md;
  for (int i = 1; i <= 10; ++i) md += std::to_string(i) + ". item\n";
  std::string want;
  for (int i = 1; i <= 10; ++i) want += (i < 10 ? " " : "") + std::to_string(i) + ". item\n";
  EXPECT_EQ(RenderMarkdown(md, kPlain), want);
  EXPECT_EQ(RenderMarkdown("3) c\n4) d", kPlain), "3) c\n4) d\n");
  EXPECT_EQ(RenderMarkdown("1. a\n2. **b**", kColor), "1. a\n2. \033[1mb\033[0m\n");
}

TEST(MarkdownRenderTest, LooseListsAndItemsWithSeveralBlocks) {
  EXPECT_EQ(RenderMarkdown("1. Install:\n\n   ```\n   apt install x\n   ```\n\n2. Run it,\n   with care.\n", kPlain),
            "1. Install:\n\n     apt install x\n\n2. Run it, with care.\n");
  // List item text wraps under its own indentation.
  EXPECT_EQ(RenderMarkdown("- one two three four five", RenderStyle{false, 20}), "• one two three four\n  five\n");
}

TEST(MarkdownRenderTest, BlockQuotesHaveABar) {
  EXPECT_EQ(RenderMarkdown("> quoted\n> text\n>\n> more\n>> inner", kPlain),
            "│ quoted text\n│\n│ more\n│\n│ │ inner\n");
  EXPECT_EQ(RenderMarkdown("> q", kColor), "\033[2m│ \033[0mq\n");
  // The blank line before a quote is outside it.
  EXPECT_EQ(RenderMarkdown("para\n\n> q\n\npara", kPlain), "para\n\n│ q\n\npara\n");
}

TEST(MarkdownRenderTest, ThematicBreakIsALine) {
  EXPECT_EQ(RenderMarkdown("a\n\n---\n\nb", RenderStyle{false, 10}), "a\n\n──────────\n\nb\n");
  EXPECT_EQ(RenderMarkdown("***", RenderStyle{true, 3}), "\033[2m───\033[0m\n");
}

TEST(MarkdownRenderTest, TablesAreAlignedWithoutColor) {
  std::string md =
      "| Name | Qty | Note |\n"
      "|:-----|----:|:----:|\n"
      "| apple | 3 | red |\n"
      "| kiwi | 12 | **ripe** fruit |\n"
      "| 日本 | 1 | x |\n";
  EXPECT_EQ(RenderMarkdown(md, kPlain),
            "Name  │ Qty │      Note\n"
            "──────┼─────┼───────────────\n"
            "apple │   3 │      red\n"
            "kiwi  │  12 │ **ripe** fruit\n"
            "日本  │   1 │       x\n");
  // Tables never wrap.
  EXPECT_EQ(RenderMarkdown("| a | b |\n|---|---|\n| one two three | four five six |", RenderStyle{false, 10}),
            "a             │ b\n"
            "──────────────┼──────────────\n"
            "one two three │ four five six\n");
}

TEST(MarkdownRenderTest, TablesHaveABoldHeaderWithColor) {
  EXPECT_EQ(RenderMarkdown("| a | bb |\n|---|---|\n| ccc | d |", kColor),
            "\033[1ma\033[0m  \033[2m │ \033[0;1mbb\033[0m\n"
            "\033[2m────┼───\033[0m\n"
            "ccc\033[2m │ \033[0md\n");
}

TEST(MarkdownRenderTest, ControlCharactersAreShownNotSent) {
  std::string md =
      "Hi \x1b[2Jthere\x07 \xc2\x9b"
      "31m \x7f\x01\n\n```\n\x1b]0;title\x07\n```\n\n- \x1b[31mred\n\n[x](http://a\x1b"
      "b)";
  for (const RenderStyle& style : {kPlain, kColor}) {
    std::string out = RenderMarkdown(md, style);
    for (char c : out) {
      auto b = static_cast<unsigned char>(c);
      if (b == 0x1b) continue;  // checked below: only our own sequences
      EXPECT_TRUE(b >= 0x20 || b == '\n') << "raw control " << int(b) << " in " << out;
      EXPECT_NE(b, 0x7f);
    }
    EXPECT_TRUE(Contains(out, "\\x1b[2Jthere\\x07"));
    EXPECT_TRUE(Contains(out, "\\u009b31m"));
    EXPECT_TRUE(Contains(out, "\\x7f\\x01"));
    EXPECT_TRUE(Contains(out, "\\x1b]0;title\\x07"));
    EXPECT_TRUE(Contains(out, "\\x1b[31mred"));
  }
  EXPECT_EQ(RenderMarkdown(md, kPlain).find('\x1b'), std::string::npos);
  // With color, every ESC starts one of the renderer's own SGR sequences.
  std::string out = RenderMarkdown(md, kColor);
  for (size_t i = out.find('\x1b'); i != std::string::npos; i = out.find('\x1b', i + 1)) {
    size_t end = out.find('m', i);
    ASSERT_NE(end, std::string::npos);
    EXPECT_EQ(out.substr(i + 1, end - i).find_first_not_of("[0123456789;m"), std::string::npos) << out.substr(i);
  }
  // A carriage return cannot rewrite a line.
  EXPECT_EQ(RenderMarkdown("safe\rEVIL", kPlain), "safe EVIL\n");
}

TEST(MarkdownRenderTest, DeepNestingIsBoundedAndFast) {
  auto start = std::chrono::steady_clock::now();
  for (const char* marker : {"> ", "- ", "1. ", "* > "}) {
    std::string md;
    for (int i = 0; i < 10000; ++i) md += marker;
    md += "deep\n";
    for (const RenderStyle& style : {kPlain, kColor}) {
      std::string out = RenderMarkdown(md, style);
      EXPECT_TRUE(Contains(out, "deep")) << marker;
      // Indentation stops growing: no line is longer than the width allows.
      EXPECT_LT(out.find('\n'), 400u) << marker;
    }
  }
  std::string emphasis = std::string(10000, '*') + "x" + std::string(10000, '*') + std::string(10000, '[');
  EXPECT_TRUE(Contains(RenderMarkdown(emphasis, kColor), "x"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(MarkdownRenderTest, CrlfInputRendersLikeLf) {
  EXPECT_EQ(RenderMarkdown("# T\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n```\r\n", kPlain),
            "# T\n\n• a\n• b\n\n  code\n");
}

TEST(CompleteBlocksPrefixTest, NothingIsCompleteBeforeTheNextBlockStarts) {
  EXPECT_EQ(CompleteBlocksPrefix(""), 0u);
  EXPECT_EQ(CompleteBlocksPrefix("A paragraph still"), 0u);
  EXPECT_EQ(CompleteBlocksPrefix("A paragraph\nstill arriving\n"), 0u);
  // The blank line may sit inside a list item: wait for the next line.
  EXPECT_EQ(CompleteBlocksPrefix("para\n\n"), 0u);
  EXPECT_EQ(CompleteBlocksPrefix("para\n\n  "), 0u);
}

TEST(CompleteBlocksPrefixTest, EndsAtABlankLineBeforeANewBlock) {
  std::string text = "# Title\n\nFirst para.\n\nSecond";
  EXPECT_EQ(CompleteBlocksPrefix(text), text.find("Second"));
  EXPECT_EQ(CompleteBlocksPrefix("one\n\n\n\ntwo"), 7u);
}

TEST(CompleteBlocksPrefixTest, AnOpenFenceHoldsEverythingAfterIt) {
  std::string text = "Intro.\n\n```python\ndef f():\n\n    return 1\n\nx";
  EXPECT_EQ(CompleteBlocksPrefix(text), text.find("```"));
  std::string closed = text + "\n```\n\nAfter";
  EXPECT_EQ(CompleteBlocksPrefix(closed), closed.find("After"));
  // A shorter or different fence does not close it.
  std::string tilde = "~~~~\na\n~~~\n```\n\nb\n";
  EXPECT_EQ(CompleteBlocksPrefix(tilde), 0u);
  EXPECT_EQ(CompleteBlocksPrefix(tilde + "~~~~\n\nc"), (tilde + "~~~~\n\n").size());
}

TEST(CompleteBlocksPrefixTest, AListItemsIndentedBlocksStayWithIt) {
  std::string text = "1. Install:\n\n   ```\n   apt install x\n\n   ```\n\n2. Run";
  EXPECT_EQ(CompleteBlocksPrefix(text), text.find("2. Run"));
  EXPECT_EQ(CompleteBlocksPrefix("- item\n\n  more of it\n"), 0u);
}

TEST(CompleteBlocksPrefixTest, AHalfArrivedTableWaits) {
  EXPECT_EQ(CompleteBlocksPrefix("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 "), 0u);
  std::string text = "Text.\n\n| a | b |\n|---|---|\n| 1 |";
  EXPECT_EQ(CompleteBlocksPrefix(text), text.find('|'));
}

TEST(CompleteBlocksPrefixTest, CrlfLineEnds) {
  std::string text = "one\r\n\r\ntwo\r\n\r\n```\r\na\r\n\r\n";
  EXPECT_EQ(CompleteBlocksPrefix(text), text.find("```"));
  EXPECT_EQ(CompleteBlocksPrefix("one\r\n\r"), 0u);
  EXPECT_EQ(CompleteBlocksPrefix("one\r\n\r\nt"), 7u);
}

TEST(CompleteBlocksPrefixTest, RenderingThePartsMatchesRenderingTheWhole) {
  std::string text = "# T\n\nPara one\nwraps.\n\n```\nx\n\ny\n```\n\n> q\n\n- a\n- b\n\nEnd.\n";
  std::string parts;
  // Stream one character at a time; render each complete prefix.
  std::string streamed;
  size_t done = 0;
  for (char c : text) {
    streamed += c;
    size_t n = CompleteBlocksPrefix(std::string_view(streamed).substr(done));
    if (n == 0) continue;
    std::string out = RenderMarkdown(std::string_view(streamed).substr(done, n), kPlain);
    if (!out.empty()) parts += (parts.empty() ? "" : "\n") + out;
    done += n;
  }
  std::string out = RenderMarkdown(std::string_view(streamed).substr(done), kPlain);
  if (!out.empty()) parts += (parts.empty() ? "" : "\n") + out;
  EXPECT_EQ(parts, RenderMarkdown(text, kPlain));
}

}  // namespace
}  // namespace odin
