#pragma once
// HtmlToMarkdown: a fetched page as Markdown a model can read.
//
// The page is parsed by gumbo (the HTML5 parsing algorithm, so malformed
// markup is repaired as a browser would) and its tree written out: headings,
// paragraphs, emphasis, code, fenced code blocks, links, images, lists,
// blockquotes, GFM tables, line breaks and rules. What a reader never sees
// is dropped: <head> (its <title> is returned apart), scripts, styles,
// <noscript>, <template>, SVG, iframes, and the option lists of <select>.
// Text is not escaped (other than | in table cells and [] in image alt
// text): the reader is a model, not a renderer. Links are not resolved;
// javascript: links keep only their text.
//
// The work is bounded whatever the input (web/html_nesting_limit.h): the
// input's nesting is capped at 512 before gumbo sees it, formatting
// elements left open are closed where their parent closes (a browser would
// reopen them in every later block), the tree is rendered as structure at
// most kMaxMarkdownDepth levels deep (deeper content as its text, walked on
// the heap, never the stack), gumbo's tree is freed without recursion, and
// the output stops at max_output bytes.
//
// Pure function; thread-safe.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace odin {

// How many levels of the tree are rendered as structure.
constexpr int kMaxMarkdownDepth = 200;

// Returns the page's text as Markdown, at most max_output bytes of it (cut
// at a UTF-8 character boundary). If title is not null it receives the
// text of the page's first <title>, whitespace collapsed, or "".
std::string HtmlToMarkdown(std::string_view html, std::string* title,
                           size_t max_output = std::numeric_limits<size_t>::max());

}  // namespace odin
