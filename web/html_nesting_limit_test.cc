// LimitHtmlNesting with small limits, so each case shows exactly which tags
// are left out and which the scan must not count.

#include "web/html_nesting_limit.h"

#include <string>

#include <gtest/gtest.h>

namespace odin {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The limited html, or "unchanged".
std::string Limit(const std::string& html, int max_depth) {
  std::string out;
  return LimitHtmlNesting(html, max_depth, &out) ? out : "unchanged";
}

TEST(HtmlNestingLimitTest, ShallowPagesAreLeftAlone) {
  EXPECT_EQ(Limit("<html><body><div><p>a</p><p>b</p></div></body></html>", 3), "unchanged");
  EXPECT_EQ(Limit("", 3), "unchanged");
  EXPECT_EQ(Limit("text only", 0), "unchanged");
}

TEST(HtmlNestingLimitTest, TagsDeeperThanTheLimitAreLeftOutWithTheirEndTags) {
  EXPECT_EQ(Limit(Repeat("<div>", 5) + "x" + Repeat("</div>", 5) + "<p>y</p>", 3),
            "<div><div><div>x</div></div></div><p>y</p>");
  EXPECT_EQ(Limit("<div><section><span class=a>x</span></section></div>", 2), "<div><section>x</section></div>");
}

TEST(HtmlNestingLimitTest, WhatIsNotATagIsNotCounted) {
  std::string deep = Repeat("<div>", 10);
  EXPECT_EQ(Limit("<!--" + deep + "-->", 3), "unchanged");
  EXPECT_EQ(Limit("<!-- --!>" + deep, 3), "<!-- --!><div><div><div>");
  EXPECT_EQ(Limit("<script>var s = '" + deep + "';</script>", 3), "unchanged");
  EXPECT_EQ(Limit("<SCRIPT>'" + deep + "'</script >", 3), "unchanged");
  EXPECT_EQ(Limit("<textarea>" + deep + "</textarea>", 3), "unchanged");
  EXPECT_EQ(Limit("<a title=\"" + deep + "\">x</a>", 3), "unchanged");
  EXPECT_EQ(Limit("<a title='" + deep + "'>x</a>", 3), "unchanged");
  EXPECT_EQ(Limit("<!DOCTYPE html><?php x ?>a < b", 0), "unchanged");
  // A quote that does not start a value quotes nothing: the tag ends at '>'.
  EXPECT_NE(Limit("<a b\"=x>" + deep + "\">", 3), "unchanged");
  // <noscript> is parsed as markup: its content counts.
  EXPECT_NE(Limit("<noscript>" + deep + "</noscript>", 3), "unchanged");
  // In SVG, <style> is not raw text.
  EXPECT_NE(Limit("<svg><style>" + deep + "</style></svg>", 3), "unchanged");
}

TEST(HtmlNestingLimitTest, VoidAndForeignSelfClosingElementsHaveNoDepth) {
  EXPECT_EQ(Limit(Repeat("<br><img src=x><input>", 100), 1), "unchanged");
  EXPECT_EQ(Limit("<svg>" + Repeat("<path d='M0'/>", 100) + "</svg><div>x</div>", 2), "unchanged");
  // Outside SVG the parser ignores the slash: <div/> opens a div.
  EXPECT_EQ(Limit(Repeat("<div/>", 4), 2), "<div/><div/>");
}

TEST(HtmlNestingLimitTest, SiblingsThatCloseEachOtherDoNotNest) {
  EXPECT_EQ(Limit("<ul>" + Repeat("<li>x", 100) + "</ul>", 3), "unchanged");
  EXPECT_EQ(Limit("<ul>" + Repeat("<li><p>x", 100) + "</ul>", 4), "unchanged");
  EXPECT_EQ(Limit(Repeat("<p>x", 100), 2), "unchanged");
  EXPECT_EQ(Limit("<dl>" + Repeat("<dt>a<dd>b", 100) + "</dl>", 3), "unchanged");
  EXPECT_EQ(Limit("<table>" + Repeat("<tr><td>a<th>b", 100) + "</table>", 4), "unchanged");
  EXPECT_EQ(Limit("<select>" + Repeat("<option>o", 100) + "</select>", 3), "unchanged");
}

TEST(HtmlNestingLimitTest, EndTagsCloseWhatTheParserWouldClose) {
  // </div> closes through an unclosed <span>, as the parser does.
  EXPECT_EQ(Limit(Repeat("<div><span>x</div>", 100), 3), "unchanged");
  // An unclosed <p> inside a <div>: </div> closes it too.
  EXPECT_EQ(Limit(Repeat("<div><p>x</div>", 100), 3), "unchanged");
  // </span> does not close through a <div> (the parser ignores it).
  EXPECT_NE(Limit(Repeat("<span><div>x</span>", 100), 10), "unchanged");
  // </form> takes only the form away; what is inside stays open.
  EXPECT_NE(Limit(Repeat("<form><span></form>", 100), 10), "unchanged");
}

TEST(HtmlNestingLimitTest, FormattingThatAnAncestorClosesIsClosedFirst) {
  // Left open, the parser would reopen each <b> in every later paragraph.
  EXPECT_EQ(Limit("<p><b id=1>x</p><p><b id=2>y</p>", 10), "<p><b id=1>x</b></p><p><b id=2>y</b></p>");
  EXPECT_EQ(Limit("<p><b><span><i>x</p>", 10), "<p><b><span><i>x</i></span></b></p>");
  EXPECT_EQ(Limit("<ul><li><a href=x>a<li>b</ul>", 10), "<ul><li><a href=x>a</a><li>b</ul>");
  EXPECT_EQ(Limit("<b><i>x</b>y", 10), "<b><i>x</i></b>y");
  // Closed properly, nothing changes.
  EXPECT_EQ(Limit(Repeat("<p><b>x</b></p>", 100), 3), "unchanged");
  // </p> does not close through a table cell: nothing to do there.
  EXPECT_EQ(Limit("<p><table><tr><td><b>x</p></table>", 10), "unchanged");
}

TEST(HtmlNestingLimitTest, WhereTheParserIgnoresTagsTheModelDoesToo) {
  // In a select, the parser ignores a <div>: nothing nests.
  EXPECT_EQ(Limit("<select>" + Repeat("<div>", 20) + "</select>", 3), "unchanged");
  // A second <select> ends the first, so the divs after it do nest.
  EXPECT_NE(Limit(Repeat("<select><div>", 100), 10), "unchanged");
  // Outside a table, <td> and </td> are ignored: </td> closes nothing.
  EXPECT_NE(Limit(Repeat("<td><div>x</td>", 100), 10), "unchanged");
  EXPECT_EQ(Limit("<table>" + Repeat("<td><div>x</td>", 100) + "</table>", 10), "unchanged");
}

TEST(HtmlNestingLimitTest, MathMLTitleIsNotAnIntegrationPoint) {
  // <title> in MathML (unlike SVG) is MathML: <plaintext> there is an
  // element, not the end of the markup.
  std::string deep = Repeat("<div>", 20);
  EXPECT_NE(Limit("<math><title><plaintext>" + deep, 10), "unchanged");
  EXPECT_EQ(Limit("<plaintext>" + deep, 10), "unchanged");
  // In SVG's <title>, it is HTML again.
  EXPECT_EQ(Limit("<svg><title><plaintext>" + deep, 10), "unchanged");
}

}  // namespace
}  // namespace odin
