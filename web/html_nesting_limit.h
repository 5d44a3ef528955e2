#pragma once
// LimitHtmlNesting: keeps gumbo's work linear on hostile pages.
//
// gumbo 0.10 has no limit on the depth of the tree it builds, and its tree
// builder scans the stack of open elements for most tokens: 100000 nested
// <div>s take 11 s to parse. Browsers cap the depth of the tree (Chrome at
// 512); this does the same to the input before gumbo sees it, by leaving
// out the start and end tags of elements that would open deeper than the
// cap. Their content stays, as text of the nearest kept ancestor.
//
// The tree builder also reopens, in every later block, each formatting
// element (<b>, <a>, ...) that an ancestor closed before its own end tag:
// 8000 rounds of "<p id=N><b id=N>x</p>" take 36 s and make 32 million
// elements. So where an end tag or an implied close (<li> after <li>, <p>
// after <p>) would close a formatting element, its end tag is written in
// first: "<p><b>x</p><p>y" becomes "<p><b>x</b></p><p>y" (y is not bold).
//
// It scans for tags as the HTML tokenizer does (comments, raw text such as
// <script>, quoted attribute values and self-closing tags in SVG/MathML are
// told apart), and models the tree builder's stack of open elements with
// the rules that pop it: end tags (stopped where the tree builder's scopes
// stop them) and the siblings that close each other. Where the model is
// wrong it mostly overestimates the depth, which costs structure past the
// cap, never content. It is a bound for real pages and the known quadratic
// patterns, not a proof: the sandboxed worker's time limit stays the
// backstop.
//
// Pure function; thread-safe.

#include <string>
#include <string_view>

namespace odin {

// Returns true and sets *out to html with the tags of elements nested
// deeper than max_depth left out and formatting elements closed as above;
// returns false, leaving *out alone, when nothing had to change.
bool LimitHtmlNesting(std::string_view html, int max_depth, std::string* out);

}  // namespace odin
