#include "web/html_nesting_limit.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <unordered_map>
#include <vector>

namespace odin {
namespace {

using std::string_view;
constexpr size_t kNpos = string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAsciiAlpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
char LowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c; }

bool OneOf(string_view name, std::initializer_list<string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The tree builder never gives these children.
bool IsVoid(string_view n) {
  return OneOf(
      n, {"area",  "base",    "basefont", "bgsound", "br",       "col",  "embed", "frame",  "hr",    "image", "img",
          "input", "isindex", "keygen",   "link",    "menuitem", "meta", "param", "source", "track", "wbr"});
}

// The tokenizer reads their content as text up to "</name" (in HTML content).
bool IsRawText(string_view n) {
  return OneOf(n, {"iframe", "noembed", "noframes", "script", "style", "textarea", "title", "xmp"});
}

// Formatting elements: the tree builder reopens those an ancestor's end
// tag closed, in every block that follows, until their own end tag.
bool IsFormatting(string_view n) {
  return OneOf(n, {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"});
}

// The tree builder's "special" elements: the end tag of an ordinary
// element does not close through them.
bool IsSpecial(string_view n) {
  return OneOf(n, {"address",
                   "applet",
                   "area",
                   "article",
                   "aside",
                   "base",
                   "basefont",
                   "bgsound",
                   "blockquote",
                   "body",
                   "br",
                   "button",
                   "caption",
                   "center",
                   "col",
                   "colgroup",
                   "dd",
                   "details",
                   "dir",
                   "div",
                   "dl",
                   "dt",
                   "embed",
                   "fieldset",
                   "figcaption",
                   "figure",
                   "footer",
                   "form",
                   "frame",
                   "frameset",
                   "h1",
                   "h2",
                   "h3",
                   "h4",
                   "h5",
                   "h6",
                   "head",
                   "header",
                   "hgroup",
                   "hr",
                   "html",
                   "iframe",
                   "img",
                   "input",
                   "keygen",
                   "li",
                   "link",
                   "listing",
                   "main",
                   "marquee",
                   "menu",
                   "meta",
                   "nav",
                   "noembed",
                   "noframes",
                   "noscript",
                   "object",
                   "ol",
                   "p",
                   "param",
                   "plaintext",
                   "pre",
                   "script",
                   "section",
                   "select",
                   "source",
                   "style",
                   "summary",
                   "table",
                   "tbody",
                   "td",
                   "template",
                   "textarea",
                   "tfoot",
                   "th",
                   "thead",
                   "title",
                   "tr",
                   "track",
                   "ul",
                   "wbr",
                   "xmp",
                   "mi",
                   "mo",
                   "mn",
                   "ms",
                   "mtext",
                   "annotation-xml",
                   "foreignobject",
                   "desc"});
}

// Elements that bound the scopes the tree builder searches for end tags
// such as </div> (the union of its scopes, so the model errs on keeping),
// and the two whose insertion modes ignore such end tags.
bool IsScopeBoundary(string_view n) {
  return OneOf(n,
               {"applet",        "caption", "html",  "table",  "td",      "th", "marquee", "object", "template",
                "button",        "ol",      "ul",    "mi",     "mo",      "mn", "ms",      "mtext",  "annotation-xml",
                "foreignobject", "desc",    "title", "select", "frameset"});
}

// End tags the tree builder honours through any element but a scope
// boundary; other end tags stop at any special element.
bool ClosesInScope(string_view n) {
  return OneOf(n, {"address", "article", "aside",    "blockquote", "button", "center",  "details", "dialog", "dir",
                   "div",     "dl",      "fieldset", "figcaption", "figure", "footer",  "header",  "hgroup", "listing",
                   "main",    "menu",    "nav",      "ol",         "pre",    "section", "summary", "ul",     "p",
                   "li",      "dd",      "dt",       "h1",         "h2",     "h3",      "h4",      "h5",     "h6",
                   "applet",  "marquee", "object",   "table",      "tbody",  "thead",   "tfoot",   "tr",     "td",
                   "th",      "caption", "colgroup", "select"});
}

// Start tags that leave SVG/MathML content ("font" only with some
// attributes, so it is left out: the model errs on keeping).
bool BreaksOutOfForeign(string_view n) {
  return OneOf(n, {"b",     "big",   "blockquote", "body",   "br",   "center", "code",  "dd", "div",  "dl",   "dt",
                   "em",    "embed", "h1",         "h2",     "h3",   "h4",     "h5",    "h6", "head", "hr",   "i",
                   "img",   "li",    "listing",    "menu",   "meta", "nobr",   "ol",    "p",  "pre",  "ruby", "s",
                   "small", "span",  "strong",     "strike", "sub",  "sup",    "table", "tt", "u",    "ul",   "var"});
}

// Where a tag ends, read as the tokenizer's attribute states read it: a
// quote quotes only where an attribute value starts.
struct TagEnd {
  size_t next = kNpos;  // one past its '>'; kNpos: the input ends inside it
  bool self_closing = false;
};

TagEnd ScanToTagEnd(string_view html, size_t p) {
  enum State { kBeforeName, kName, kAfterName, kBeforeValue, kQuoted, kUnquoted, kAfterQuoted };
  State state = kBeforeName;
  bool solidus = false;  // the last character was a '/' that may self-close
  char quote = 0;
  for (; p < html.size(); ++p) {
    char c = html[p];
    if (state == kQuoted) {
      size_t q = html.find(quote, p);
      if (q == kNpos) return {};
      p = q;
      state = kAfterQuoted;
      continue;
    }
    if (c == '>') return {p + 1, solidus};
    solidus = false;
    switch (state) {
      case kBeforeName:
        if (c == '/') {
          solidus = true;
        } else if (!IsSpace(c)) {
          state = kName;  // '=' included: it starts a name here
        }
        break;
      case kName:
        if (c == '/') {
          solidus = true;
          state = kBeforeName;
        } else if (IsSpace(c)) {
          state = kAfterName;
        } else if (c == '=') {
          state = kBeforeValue;
        }
        break;
      case kAfterName:
        if (c == '/') {
          solidus = true;
          state = kBeforeName;
        } else if (c == '=') {
          state = kBeforeValue;
        } else if (!IsSpace(c)) {
          state = kName;
        }
        break;
      case kBeforeValue:
        if (c == '"' || c == '\'') {
          quote = c;
          state = kQuoted;
        } else if (!IsSpace(c)) {
          state = kUnquoted;
        }
        break;
      case kUnquoted:
        if (IsSpace(c)) state = kBeforeName;
        break;
      case kAfterQuoted:
        if (c == '/') {
          solidus = true;
          state = kBeforeName;
        } else if (IsSpace(c)) {
          state = kBeforeName;
        } else {
          state = kBeforeName;
          --p;  // the next attribute's name: read it again there
        }
        break;
      case kQuoted: break;
    }
  }
  return {};
}

// Where a comment that starts at p ("<!--") ends: after "-->" or "--!>",
// or at once for "<!-->" and "<!--->"; kNpos if it runs to the end.
size_t CommentEnd(string_view html, size_t p) {
  size_t body = p + 4;
  if (html.compare(body, 1, ">") == 0) return body + 1;
  if (html.compare(body, 2, "->") == 0) return body + 2;
  for (size_t dash = html.find("--", body); dash != kNpos; dash = html.find("--", dash + 1)) {
    if (html.compare(dash + 2, 1, ">") == 0) return dash + 3;
    if (html.compare(dash + 2, 2, "!>") == 0) return dash + 4;
  }
  return kNpos;
}

// Where the raw text of element `name` (lower case) that starts at p ends:
// at its "</name" followed by whitespace, '/' or '>'; kNpos if it runs to
// the end.
size_t RawTextEnd(string_view html, size_t p, string_view name) {
  for (size_t lt = html.find("</", p); lt != kNpos; lt = html.find("</", lt + 2)) {
    size_t q = lt + 2;
    size_t i = 0;
    while (i < name.size() && q + i < html.size() && LowerChar(html[q + i]) == name[i]) ++i;
    if (i < name.size() || q + i >= html.size()) continue;
    char after = html[q + i];
    if (IsSpace(after) || after == '/' || after == '>') return lt;
  }
  return kNpos;
}

// The model of the tree builder's stack of open elements.
class NestingModel {
 public:
  NestingModel(string_view html, int max_depth) : html_(html), max_depth_(static_cast<size_t>(max_depth)) {}

  bool Run(std::string* out);

 private:
  // Kinds of element counted at and below each entry, so that "is there one
  // above entry j" costs O(1).
  enum Kind { kSpecial, kBoundary, kTableScope, kStopsLi, kForeign, kFormatting, kKinds };
  enum class Ns : uint8_t { kHtml, kSvg, kMath };
  // How the tree builder reads the start tags inside an element: as HTML,
  // as SVG/MathML, or either (<annotation-xml>, which depends on an
  // attribute): then the model takes whichever makes the depth larger.
  enum class Content : uint8_t { kHtml, kForeign, kEither };
  struct Open {
    uint32_t name;                    // an id from Intern
    std::array<uint32_t, kKinds> at;  // elements of each kind at or below this entry
    bool dropped = false;             // its tags were left out
    bool formatting = false;          // a formatting element
    Ns ns = Ns::kHtml;
    Content content = Content::kHtml;  // of its children
  };

  uint32_t Intern(const std::string& name);
  const std::string& NameOf(uint32_t id) const { return names_[id]; }
  Content CurrentContent() const { return stack_.empty() ? Content::kHtml : stack_.back().content; }
  // The innermost open <select> when the tree builder is in it (only
  // options above it), or -1.
  long InSelect() const;
  // Whether the tokenizer reads the content of this start tag as text: not
  // in SVG/MathML, and not where the tree builder ignores the tag (in a
  // select, after a frameset), which leaves its content to be parsed.
  bool StartsRawText(const std::string& name) const;
  // How many elements of a kind are above stack_[j].
  uint32_t Above(size_t j, Kind kind) const { return stack_.back().at[kind] - stack_[j].at[kind]; }
  // The innermost open element with one of these names, or -1.
  long Innermost(std::initializer_list<string_view> names) const;
  void Push(const std::string& name, bool dropped, bool html);
  // Pops entries down to (and with) stack_[j].
  void PopTo(size_t j);
  // Before the entries above stack_[j] are popped: if a formatting element
  // is among them, writes at `at` the end tags of it and of everything above
  // it, and pops those, so the tree builder does not keep it to reopen.
  void CloseFormattingAbove(size_t j, size_t at);
  // Leaves [from, to) out of the output; inserts text at `at`.
  void Drop(size_t from, size_t to);
  void Insert(size_t at, const std::string& text);
  void StartTag(const std::string& name, size_t lt, const TagEnd& end);
  void EndTag(const std::string& name, size_t lt, size_t next);

  string_view html_;
  size_t max_depth_;
  std::vector<Open> stack_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<std::vector<uint32_t>> open_by_name_;  // id -> indexes into stack_, innermost last
  std::string out_;
  size_t kept_from_ = 0;  // html_[kept_from_, ...) is not yet copied to out_
  bool changed_ = false;
  bool frameset_ = false;  // a <frameset> was seen: its modes ignore most tags
};

uint32_t NestingModel::Intern(const std::string& name) {
  auto [it, added] = ids_.emplace(name, static_cast<uint32_t>(names_.size()));
  if (added) {
    names_.push_back(name);
    open_by_name_.emplace_back();
  }
  return it->second;
}

long NestingModel::Innermost(std::initializer_list<string_view> names) const {
  long best = -1;
  for (string_view name : names) {
    auto it = ids_.find(std::string(name));
    if (it != ids_.end() && !open_by_name_[it->second].empty()) {
      best = std::max(best, static_cast<long>(open_by_name_[it->second].back()));
    }
  }
  return best;
}

long NestingModel::InSelect() const {
  long k = static_cast<long>(stack_.size()) - 1;
  auto is = [&](long i, std::initializer_list<string_view> names) {
    return !stack_[i].dropped && stack_[i].ns == Ns::kHtml && OneOf(NameOf(stack_[i].name), names);
  };
  while (k >= 0 && is(k, {"option", "optgroup"})) --k;
  return k >= 0 && is(k, {"select"}) ? k : -1;
}

bool NestingModel::StartsRawText(const std::string& name) const {
  if (CurrentContent() != Content::kHtml) return false;
  if (frameset_) return name == "noframes";
  if (InSelect() >= 0) return name == "script" || name == "textarea";
  return IsRawText(name) || name == "plaintext";
}

void NestingModel::Push(const std::string& name, bool dropped, bool html) {
  Open e;
  e.name = Intern(name);
  e.dropped = dropped;
  e.formatting = IsFormatting(name);
  if (html) {
    e.ns = name == "svg" ? Ns::kSvg : name == "math" ? Ns::kMath : Ns::kHtml;
    e.content = e.ns == Ns::kHtml ? Content::kHtml : Content::kForeign;
  } else {
    // A foreign element takes its parent's namespace (and <svg> in
    // <annotation-xml> is SVG); at integration points the children are HTML.
    const Open& parent = stack_.back();
    e.ns = parent.ns == Ns::kMath && name == "svg" ? Ns::kSvg : parent.ns;
    if (e.ns == Ns::kHtml) e.ns = Ns::kMath;  // only under <annotation-xml>
    bool integration = e.ns == Ns::kSvg ? OneOf(name, {"foreignobject", "desc", "title"})
                                        : OneOf(name, {"mi", "mo", "mn", "ms", "mtext"});
    e.content = integration                                     ? Content::kHtml
                : e.ns == Ns::kMath && name == "annotation-xml" ? Content::kEither
                                                                : parent.content;
  }
  if (dropped) e.content = CurrentContent();  // the tree builder never saw it
  bool counts[kKinds] = {};
  counts[kSpecial] = IsSpecial(name);
  counts[kBoundary] = IsScopeBoundary(name);
  counts[kTableScope] = OneOf(name, {"html", "table", "template", "select", "frameset"});
  counts[kStopsLi] = counts[kSpecial] && !OneOf(name, {"address", "div", "p"});
  counts[kForeign] = e.ns != Ns::kHtml;
  counts[kFormatting] = e.formatting && !dropped;
  for (int k = 0; k < kKinds; ++k) e.at[k] = (stack_.empty() ? 0 : stack_.back().at[k]) + (counts[k] ? 1 : 0);
  open_by_name_[e.name].push_back(static_cast<uint32_t>(stack_.size()));
  stack_.push_back(e);
}

void NestingModel::PopTo(size_t j) {
  while (stack_.size() > j) {
    open_by_name_[stack_.back().name].pop_back();
    stack_.pop_back();
  }
}

void NestingModel::CloseFormattingAbove(size_t j, size_t at) {
  if (Above(j, kFormatting) == 0) return;
  size_t lowest = stack_.size() - 1;
  for (size_t k = stack_.size() - 1; k > j; --k) {
    if (stack_[k].formatting && !stack_[k].dropped) lowest = k;
  }
  std::string tags;
  for (size_t k = stack_.size(); k-- > lowest;) {
    if (!stack_[k].dropped) tags += "</" + NameOf(stack_[k].name) + ">";
  }
  PopTo(lowest);
  Insert(at, tags);
}

void NestingModel::Drop(size_t from, size_t to) {
  out_.append(html_.substr(kept_from_, from - kept_from_));
  kept_from_ = to;
  changed_ = true;
}

void NestingModel::Insert(size_t at, const std::string& text) {
  out_.append(html_.substr(kept_from_, at - kept_from_));
  out_ += text;
  kept_from_ = at;
  changed_ = true;
}

void NestingModel::StartTag(const std::string& name, size_t lt, const TagEnd& end) {
  // The tree builder makes these itself and merges repeats into them.
  if (name == "html" || name == "head" || name == "body") return;
  Content content = CurrentContent();
  // Whether the tree builder surely reads it as HTML, or surely as SVG/MathML.
  bool html = content == Content::kHtml || BreaksOutOfForeign(name);
  bool foreign = content == Content::kForeign && !BreaksOutOfForeign(name);
  if (name == "frameset" && html) frameset_ = true;
  // In a select the tree builder takes options; another select or a form
  // control or table part ends the select; it ignores anything else.
  if (long select = InSelect(); select >= 0 && html) {
    if (name == "select") {
      PopTo(static_cast<size_t>(select));
      return;
    }
    if (OneOf(name, {"input", "keygen", "textarea", "caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th"})) {
      PopTo(static_cast<size_t>(select));
    } else if (name != "option" && name != "optgroup" && name != "template") {
      return;
    }
  }
  if (IsVoid(name) && html) return;
  if (end.self_closing && foreign) return;
  // Outside a table the tree builder ignores the parts of one: they must not
  // be taken as open, or their end tags would close what is above them.
  if (html && OneOf(name, {"caption", "colgroup", "tbody", "thead", "tfoot", "tr", "td", "th"}) &&
      Innermost({"table", "template"}) < 0) {
    return;
  }
  // A sibling that implicitly closes an open element, where the tree
  // builder would close it: the innermost one, with nothing above it that
  // stops the tree builder's search.
  long j = -1;
  if (name == "li") {
    j = Innermost({"li"});
    if (j >= 0 && Above(j, kStopsLi) > 0) j = -1;
  } else if (name == "dd" || name == "dt") {
    j = Innermost({"dd", "dt"});
    if (j >= 0 && Above(j, kStopsLi) > 0) j = -1;
  } else if (name == "p") {
    j = Innermost({"p"});
    if (j >= 0 && Above(j, kBoundary) > 0) j = -1;
  } else if (name == "td" || name == "th") {
    j = Innermost({"td", "th"});
    if (j >= 0 && Above(j, kTableScope) > 0) j = -1;
  } else if (name == "tr") {
    j = Innermost({"tr"});
    if (j >= 0 && Above(j, kTableScope) > 0) j = -1;
  } else if (name == "tbody" || name == "thead" || name == "tfoot") {
    j = Innermost({"tbody", "thead", "tfoot"});
    if (j >= 0 && Above(j, kTableScope) > 0) j = -1;
  } else if (name == "option" || name == "optgroup") {
    if (!stack_.empty() && NameOf(stack_.back().name) == "option") j = static_cast<long>(stack_.size()) - 1;
  }
  if (j >= 0 && Above(static_cast<size_t>(j), kForeign) == 0) {
    CloseFormattingAbove(static_cast<size_t>(j), lt);
    PopTo(static_cast<size_t>(j));
  }
  bool drop = stack_.size() >= max_depth_;
  if (drop) Drop(lt, end.next);
  Push(name, drop, html);
}

void NestingModel::EndTag(const std::string& name, size_t lt, size_t next) {
  if (name == "html" || name == "head" || name == "body" || name == "br") return;
  auto found = ids_.find(name);
  if (found == ids_.end() || open_by_name_[found->second].empty()) return;  // the tree builder ignores it
  size_t j = open_by_name_[found->second].back();
  const Open& match = stack_[j];
  bool closes;
  if (name == "form" || name == "frameset") {
    // The tree builder takes the form out of the stack and leaves what is
    // above it open; it pops a frameset only when it is the current node.
    closes = j + 1 == stack_.size();
  } else if (match.ns != Ns::kHtml) {
    closes = Above(j, kSpecial) == 0;  // foreign end tags match by name, up to HTML
  } else if (ClosesInScope(name)) {
    closes = Above(j, kBoundary) == 0;
  } else {
    closes = Above(j, kSpecial) == 0;
  }
  if (match.dropped) Drop(lt, next);
  if (!closes) return;
  CloseFormattingAbove(j, lt);
  PopTo(j);
}

bool NestingModel::Run(std::string* out) {
  size_t i = 0;
  while (i < html_.size()) {
    size_t lt = html_.find('<', i);
    if (lt == kNpos || lt + 1 >= html_.size()) break;
    char c = html_[lt + 1];
    if (html_.compare(lt, 4, "<!--") == 0) {
      i = CommentEnd(html_, lt);
      if (i == kNpos) break;
      continue;
    }
    if (c == '!' || c == '?') {
      // A doctype, CDATA section or bogus comment, up to the next '>'.
      size_t gt = html_.find('>', lt + 2);
      if (gt == kNpos) break;
      i = gt + 1;
      continue;
    }
    bool is_end = c == '/';
    size_t name_start = lt + (is_end ? 2 : 1);
    if (name_start >= html_.size() || !IsAsciiAlpha(html_[name_start])) {
      i = lt + 1;  // text (or a bogus comment, which only hides tags from this scan)
      continue;
    }
    size_t p = name_start;
    std::string name;
    while (p < html_.size() && !IsSpace(html_[p]) && html_[p] != '/' && html_[p] != '>') {
      name.push_back(LowerChar(html_[p]));
      ++p;
    }
    TagEnd end = ScanToTagEnd(html_, p);
    if (end.next == kNpos) break;  // the tokenizer drops a tag cut by the end of input
    i = end.next;
    if (is_end) {
      EndTag(name, lt, end.next);
      continue;
    }
    if (StartsRawText(name)) {
      if (name == "plaintext") break;  // the rest is text
      i = RawTextEnd(html_, end.next, name);
      if (i == kNpos) break;
      continue;
    }
    StartTag(name, lt, end);
  }
  if (!changed_) return false;
  out_.append(html_.substr(kept_from_));
  *out = std::move(out_);
  return true;
}

}  // namespace

bool LimitHtmlNesting(std::string_view html, int max_depth, std::string* out) {
  NestingModel model(html, max_depth);
  return model.Run(out);
}

}  // namespace odin
