// HtmlToMarkdown, construct by construct, then what hostile or broken
// pages do to it: malformed markup, 100000 nested elements, huge input,
// the output limit.

#include "web/html_markdown.h"

#include <string>

#include <gtest/gtest.h>

namespace odin {
namespace {

std::string Md(std::string_view html) { return HtmlToMarkdown(html, nullptr); }

TEST(HtmlMarkdownTest, HeadingsAndParagraphs) {
  EXPECT_EQ(Md("<h1>Title</h1><p>One.</p><p>Two.</p><h2>Sub</h2><h6>Six</h6>"),
            "# Title\n\nOne.\n\nTwo.\n\n## Sub\n\n###### Six\n");
}

TEST(HtmlMarkdownTest, TheTitleComesFromHeadAndHeadIsNotText) {
  std::string title = "unset";
  std::string md = HtmlToMarkdown(
      "<html><head><title>  The\n  page </title><meta charset=utf-8><style>p{}</style></head>"
      "<body><p>Body</p></body></html>",
      &title);
  EXPECT_EQ(title, "The page");
  EXPECT_EQ(md, "Body\n");
  HtmlToMarkdown("<p>no title</p>", &title);
  EXPECT_EQ(title, "");
}

TEST(HtmlMarkdownTest, WhitespaceCollapsesAsInABrowser) {
  EXPECT_EQ(Md("<p>  a \n\t b   c  </p>"), "a b c\n");
  EXPECT_EQ(Md("<p>a<span> b </span>c</p>"), "a b c\n");
  EXPECT_EQ(Md("<div>\n  <p>x</p>\n  <p>y</p>\n</div>"), "x\n\ny\n");
}

TEST(HtmlMarkdownTest, EntitiesAreDecoded) {
  EXPECT_EQ(Md("<p>&lt;b&gt; &amp; &quot;q&quot; &eacute; &#x263A; &copy</p>"),
            "<b> & \"q\" \xC3\xA9 \xE2\x98\xBA \xC2\xA9\n");
}

TEST(HtmlMarkdownTest, StrongEmphasisAndStrikethrough) {
  EXPECT_EQ(Md("<p>a <strong>bold</strong> and <em>it</em> <b>b</b><i>i</i> <del>gone</del></p>"),
            "a **bold** and *it* **b***i* ~~gone~~\n");
  // Spaces at the edges go outside the markers; empty ones write nothing.
  EXPECT_EQ(Md("<p>a<b> b </b>c<em> </em>d<strong></strong>e</p>"), "a **b** c de\n");
  // Nested the same way: one pair of markers.
  EXPECT_EQ(Md("<p><b>x <strong>y</strong> z</b></p>"), "**x y z**\n");
}

TEST(HtmlMarkdownTest, InlineCode) {
  EXPECT_EQ(Md("<p>Run <code>make  all</code> now</p>"), "Run `make all` now\n");
  EXPECT_EQ(Md("<p><code>a`b</code></p>"), "``a`b``\n");
  EXPECT_EQ(Md("<p><code>`x</code></p>"), "`` `x ``\n");
  EXPECT_EQ(Md("<p><code><span>x</span>.<b>y</b></code></p>"), "`x.y`\n");
}

TEST(HtmlMarkdownTest, PreIsAFencedBlockKeptVerbatim) {
  EXPECT_EQ(
      Md("<p>Before</p><pre><code class=\"language-cpp\">int main() {\n  return 0;\n}\n</code></pre><p>After</p>"),
      "Before\n\n```cpp\nint main() {\n  return 0;\n}\n```\n\nAfter\n");
  EXPECT_EQ(Md("<pre class='lang-py highlight'>x  =  1\n\n\ny = 2</pre>"), "```py\nx  =  1\n\n\ny = 2\n```\n");
  EXPECT_EQ(Md("<pre>a &lt; b<br>c <b>d</b></pre>"), "```\na < b\nc d\n```\n");
  // A fence longer than any run of backticks inside.
  EXPECT_EQ(Md("<pre>```\nx\n```</pre>"), "````\n```\nx\n```\n````\n");
}

TEST(HtmlMarkdownTest, Links) {
  EXPECT_EQ(Md("<p>See <a href=\"https://example.com/a?b=1\">the docs</a>.</p>"),
            "See [the docs](https://example.com/a?b=1).\n");
  // Relative links stay as written: nothing is resolved.
  EXPECT_EQ(Md("<a href=\"/x y(1)\">rel</a>"), "[rel](/x%20y%281%29)\n");
  // Script links keep their text only; empty links vanish.
  EXPECT_EQ(Md("<p><a href=\"javascript:alert(1)\">click</a> <a href=\" JaVa\tScript:x\">b</a></p>"), "click b\n");
  EXPECT_EQ(Md("<p>a<a href=\"/x\"> </a>b</p>"), "a b\n");
  EXPECT_EQ(Md("<p><a>no href</a></p>"), "no href\n");
  // A link around blocks stays on one line.
  EXPECT_EQ(Md("<a href=\"/card\"><div><h3>Card</h3><p>Text</p></div></a>"), "[Card Text](/card)\n");
}

TEST(HtmlMarkdownTest, Images) {
  EXPECT_EQ(Md("<p><img src=\"/a.png\" alt=\"An [old] photo\"></p>"), "![An \\[old\\] photo](/a.png)\n");
  EXPECT_EQ(Md("<p><img src=\"b.png\"></p>"), "![](b.png)\n");
  EXPECT_EQ(Md("<p>x <img src=\"data:image/png;base64,AAAA\" alt=\"dot\"> y</p>"), "x dot y\n");
  EXPECT_EQ(Md("<a href=\"/home\"><img src=\"logo.svg\" alt=\"Home\"></a>"), "[![Home](logo.svg)](/home)\n");
}

TEST(HtmlMarkdownTest, Lists) {
  EXPECT_EQ(Md("<ul><li>one</li><li>two</li></ul>"), "- one\n- two\n");
  EXPECT_EQ(Md("<ol><li>one</li><li>two</li></ol>"), "1. one\n2. two\n");
  EXPECT_EQ(Md("<ol start=\"7\"><li>seven</li><li>eight</li></ol>"), "7. seven\n8. eight\n");
  EXPECT_EQ(Md("<p>Intro</p><ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li><li>d</li></ul><p>End</p>"),
            "Intro\n\n- a\n  - b\n    1. c\n- d\n\nEnd\n");
  // Unclosed items are closed by the parser, as a browser does.
  EXPECT_EQ(Md("<ul><li>x<li>y</ul>"), "- x\n- y\n");
  // Paragraphs in items: a loose list, continuation lines indented.
  EXPECT_EQ(Md("<ul><li><p>a</p><p>b</p></li><li><p>c</p></li></ul>"), "- a\n\n  b\n\n- c\n");
}

TEST(HtmlMarkdownTest, Blockquotes) {
  EXPECT_EQ(Md("<p>He said:</p><blockquote><p>one</p><p>two</p></blockquote><p>done</p>"),
            "He said:\n\n> one\n>\n> two\n\ndone\n");
  EXPECT_EQ(Md("<blockquote>outer<blockquote>inner</blockquote></blockquote>"), "> outer\n>\n> > inner\n");
}

TEST(HtmlMarkdownTest, TablesArePipeTables) {
  EXPECT_EQ(Md("<table><thead><tr><th>Name</th><th>Value</th></tr></thead>"
               "<tbody><tr><td>a|b</td><td><b>1</b></td></tr><tr><td>c</td></tr></tbody></table>"),
            "| Name | Value |\n| --- | --- |\n| a\\|b | **1** |\n| c |  |\n");
  // Without a header row the first row is the header; cells stay on one line.
  EXPECT_EQ(Md("<table><tr><td>x</td><td><p>multi</p><p>line</p></td></tr><tr><td colspan=2>wide</td></tr></table>"),
            "| x | multi line |\n| --- | --- |\n| wide |  |\n");
  EXPECT_EQ(Md("<p>a</p><table><caption>Cap</caption><tr><td>1</td></tr></table><p>b</p>"),
            "a\n\nCap\n\n| 1 |\n| --- |\n\nb\n");
}

TEST(HtmlMarkdownTest, LineBreaksAndRules) {
  EXPECT_EQ(Md("<p>one<br>two<br/>  three</p><hr><p>after</p>"), "one\ntwo\nthree\n\n---\n\nafter\n");
  EXPECT_EQ(Md("<blockquote>a<br>b</blockquote>"), "> a\n> b\n");
}

TEST(HtmlMarkdownTest, WhatAReaderNeverSeesIsDropped) {
  EXPECT_EQ(Md("<p>a</p><script>var x = '<p>no</p>';</script><style>p { color: red }</style>"
               "<noscript>enable js</noscript><template><p>t</p></template>"
               "<svg><text>vector</text></svg><iframe src=x>frame</iframe><p>b</p>"),
            "a\n\nb\n");
  // Navigation and footers stay: they are text on the page.
  EXPECT_EQ(Md("<nav><a href=\"/\">Home</a></nav><footer>(c) 2024</footer>"), "[Home](/)\n(c) 2024\n");
  EXPECT_EQ(Md("<p>a<!-- hidden -->b</p>"), "ab\n");
}

TEST(HtmlMarkdownTest, MalformedMarkupIsRepairedAsABrowserWould) {
  EXPECT_EQ(Md("<p>one<p>two"), "one\n\ntwo\n");
  // A browser would reopen the <i> after </b>; it is closed there instead
  // (html_nesting_limit.h says why).
  EXPECT_EQ(Md("<b>bold <i>both</b> italic</i>"), "**bold *both*** italic\n");
  EXPECT_EQ(Md("<div><span>unclosed"), "unclosed\n");
  EXPECT_EQ(Md("</p></div>stray ends<</"), "stray ends<</\n");
  EXPECT_EQ(Md("<table><td>cell<tr><td>next"), "| cell |\n| --- |\n| next |\n");
  EXPECT_EQ(Md("<a href='x'>a <a href='y'>b</a>"), "[a](x) [b](y)\n");
  EXPECT_EQ(Md(""), "");
  EXPECT_EQ(Md("just text"), "just text\n");
  EXPECT_EQ(Md(std::string("a\0b", 3)), "ab\n");  // NUL is dropped from text
}

TEST(HtmlMarkdownTest, DeepNestingIsFlattenedNotAStackOverflow) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<div>";
  html += "deep text";
  for (int i = 0; i < 100000; ++i) html += "</div>";
  html += "<p>after</p>";
  EXPECT_EQ(Md(html), "deep text\n\nafter\n");
}

TEST(HtmlMarkdownTest, DeepNestingOfEveryKindIsBounded) {
  // Each would make the parser's work grow with the square of its length.
  for (const std::string& unit : {std::string("<span>"), std::string("<div/>"), std::string("<b id=x>"),
                                  std::string("<blockquote>"), std::string("<ul><li>"), std::string("<table><tr><td>"),
                                  std::string("<math><mrow>"), std::string("<x-custom>")}) {
    std::string html;
    for (int i = 0; i < 50000; ++i) html += unit;
    html += "bottom";
    std::string md = Md(html);
    EXPECT_NE(md.find("bottom"), std::string::npos) << unit;
  }
}

TEST(HtmlMarkdownTest, FormattingLeftOpenIsNotReopenedInEveryParagraph) {
  // A browser would reopen every earlier <b> in each later paragraph: the
  // tree would grow with the square of the rounds.
  std::string html;
  for (int i = 0; i < 20000; ++i) html += "<p id=" + std::to_string(i) + "><b id=" + std::to_string(i) + ">x</p>";
  std::string md = Md(html);
  EXPECT_EQ(md.substr(0, 13), "**x**\n\n**x**\n");
  EXPECT_EQ(md.size(), 20000u * 7 - 1);
}

TEST(HtmlMarkdownTest, StructureDeeperThanTheLimitBecomesText) {
  std::string html;
  for (int i = 0; i < kMaxMarkdownDepth + 50; ++i) html += "<blockquote>";
  html += "<p>one</p><p>two</p>";
  std::string md = Md(html);
  EXPECT_NE(md.find("one two"), std::string::npos);
  EXPECT_EQ(md.find("one\n"), std::string::npos);
}

TEST(HtmlMarkdownTest, LongPagesOfManyShallowElementsKeepTheirStructure) {
  // Unclosed <p>, <li> and <td> are closed by their next sibling: the
  // nesting limit does not mistake a long page for a deep one.
  std::string html = "<ul>";
  for (int i = 0; i < 2000; ++i) html += "<li>item";
  html += "</ul><table>";
  for (int i = 0; i < 2000; ++i) html += "<tr><td>a<td>b";
  html += "</table>";
  for (int i = 0; i < 2000; ++i) html += "<p>para <font size=2>small";
  html += "<h2>End</h2>";
  std::string md = Md(html);
  EXPECT_NE(md.find("- item\n- item\n"), std::string::npos);
  EXPECT_NE(md.find("| a | b |\n| a | b |\n"), std::string::npos);
  EXPECT_NE(md.find("para small\n\npara small\n"), std::string::npos);
  EXPECT_NE(md.find("\n## End\n"), std::string::npos);
}

TEST(HtmlMarkdownTest, HugeInputIsConvertedWhole) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<p>Paragraph " + std::to_string(i) + " with <b>bold</b> text.</p>\n";
  std::string md = Md(html);
  EXPECT_EQ(md.substr(0, 33), "Paragraph 0 with **bold** text.\n\n");
  EXPECT_NE(md.find("Paragraph 99999 with **bold** text.\n"), std::string::npos);
}

TEST(HtmlMarkdownTest, OutputStopsAtTheLimit) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<p>Paragraph " + std::to_string(i) + "</p>";
  std::string md = HtmlToMarkdown(html, nullptr, 1000);
  EXPECT_LE(md.size(), 1000u);
  EXPECT_GE(md.size(), 990u);
  EXPECT_EQ(md.substr(0, 13), "Paragraph 0\n\n");
  // One long paragraph is cut too.
  EXPECT_EQ(HtmlToMarkdown("<p>" + std::string(100000, 'x') + "</p>", nullptr, 100), std::string(100, 'x'));
  EXPECT_EQ(HtmlToMarkdown("<p>abc</p>", nullptr, 0), "");
}

TEST(HtmlMarkdownTest, TheLimitCutsBetweenCharacters) {
  // "é" is two bytes: a limit inside one cuts before it.
  std::string html = "<p>" + std::string(9, 'a') + "\xC3\xA9\xC3\xA9</p>";
  EXPECT_EQ(HtmlToMarkdown(html, nullptr, 10), std::string(9, 'a'));
  EXPECT_EQ(HtmlToMarkdown(html, nullptr, 11), std::string(9, 'a') + "\xC3\xA9");
}

}  // namespace
}  // namespace odin
