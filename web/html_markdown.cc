#include "web/html_markdown.h"

#include <gumbo.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <unordered_set>
#include <utility>
#include <vector>

#include "web/html_nesting_limit.h"
#include "web/markdown_writer.h"

namespace odin {
namespace {

// Chrome's limit on the depth of the tree its parser builds.
constexpr int kMaxParseDepth = 512;

// gumbo's memory, every block of it tracked, so that the tree is freed here
// in one sweep: gumbo_destroy_output recurses once per level of the tree.
class GumboHeap {
 public:
  GumboHeap() = default;
  GumboHeap(const GumboHeap&) = delete;
  GumboHeap& operator=(const GumboHeap&) = delete;
  ~GumboHeap() {
    for (void* p : blocks_) std::free(p);
  }
  static void* Allocate(void* self, size_t size) {
    void* p = std::malloc(size);
    if (p != nullptr) static_cast<GumboHeap*>(self)->blocks_.insert(p);
    return p;
  }
  static void Free(void* self, void* p) {
    if (p == nullptr) return;
    static_cast<GumboHeap*>(self)->blocks_.erase(p);
    std::free(p);
  }

 private:
  std::unordered_set<void*> blocks_;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string_view Attribute(const GumboNode* node, const char* name) {
  const GumboAttribute* a = gumbo_get_attribute(&node->v.element.attributes, name);
  return a == nullptr ? std::string_view() : std::string_view(a->value);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Elements a reader of the page never sees (and the option lists of form
// controls: hundreds of entries a reader sees one of).
bool IsHidden(const GumboNode* node) {
  static constexpr GumboTag kHidden[] = {
      GUMBO_TAG_SCRIPT, GUMBO_TAG_STYLE, GUMBO_TAG_NOSCRIPT, GUMBO_TAG_TEMPLATE, GUMBO_TAG_SVG,
      GUMBO_TAG_IFRAME, GUMBO_TAG_HEAD,  GUMBO_TAG_TITLE,    GUMBO_TAG_SELECT,   GUMBO_TAG_DATALIST,
  };
  if (node->type == GUMBO_NODE_TEMPLATE) return true;
  if (node->type != GUMBO_NODE_ELEMENT) return false;
  if (node->v.element.tag_namespace == GUMBO_NAMESPACE_SVG) return true;
  return std::find(std::begin(kHidden), std::end(kHidden), node->v.element.tag) != std::end(kHidden);
}

// Elements that start a new line in a browser.
bool IsBlock(GumboTag tag) {
  static constexpr GumboTag kBlocks[] = {
      GUMBO_TAG_ADDRESS, GUMBO_TAG_ARTICLE, GUMBO_TAG_ASIDE,   GUMBO_TAG_BLOCKQUOTE, GUMBO_TAG_BODY,
      GUMBO_TAG_CAPTION, GUMBO_TAG_CENTER,  GUMBO_TAG_DD,      GUMBO_TAG_DETAILS,    GUMBO_TAG_DIR,
      GUMBO_TAG_DIV,     GUMBO_TAG_DL,      GUMBO_TAG_DT,      GUMBO_TAG_FIELDSET,   GUMBO_TAG_FIGCAPTION,
      GUMBO_TAG_FIGURE,  GUMBO_TAG_FOOTER,  GUMBO_TAG_FORM,    GUMBO_TAG_H1,         GUMBO_TAG_H2,
      GUMBO_TAG_H3,      GUMBO_TAG_H4,      GUMBO_TAG_H5,      GUMBO_TAG_H6,         GUMBO_TAG_HEADER,
      GUMBO_TAG_HGROUP,  GUMBO_TAG_HR,      GUMBO_TAG_HTML,    GUMBO_TAG_LEGEND,     GUMBO_TAG_LI,
      GUMBO_TAG_LISTING, GUMBO_TAG_MAIN,    GUMBO_TAG_MENU,    GUMBO_TAG_NAV,        GUMBO_TAG_OL,
      GUMBO_TAG_P,       GUMBO_TAG_PRE,     GUMBO_TAG_SECTION, GUMBO_TAG_SUMMARY,    GUMBO_TAG_TABLE,
      GUMBO_TAG_TBODY,   GUMBO_TAG_TD,      GUMBO_TAG_TFOOT,   GUMBO_TAG_TH,         GUMBO_TAG_THEAD,
      GUMBO_TAG_TR,      GUMBO_TAG_UL,      GUMBO_TAG_XMP,
  };
  return std::find(std::begin(kBlocks), std::end(kBlocks), tag) != std::end(kBlocks);
}

const GumboVector& Children(const GumboNode* node) {
  return node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
}

bool HasChildren(const GumboNode* node) {
  return node->type == GUMBO_NODE_DOCUMENT || node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE;
}

// Calls visit(node, entering) for every node under root, depth first, with
// a stack on the heap. visit returns false to skip a node's children.
template <typename Visit>
void Walk(const GumboNode* root, Visit visit) {
  struct Frame {
    const GumboNode* node;
    unsigned next;
  };
  if (!visit(root, true)) return;
  std::vector<Frame> stack;
  if (HasChildren(root)) stack.push_back({root, 0});
  while (!stack.empty()) {
    Frame& top = stack.back();
    const GumboVector& children = Children(top.node);
    if (top.next >= children.length) {
      const GumboNode* done = top.node;
      stack.pop_back();
      if (done != root) visit(done, false);
      continue;
    }
    const auto* child = static_cast<const GumboNode*>(children.data[top.next++]);
    if (!visit(child, true)) continue;
    if (HasChildren(child)) {
      stack.push_back({child, 0});
    } else {
      visit(child, false);
    }
  }
  visit(root, false);
}

// text with whitespace runs made one space and none at either end.
std::string Collapse(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (IsSpace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool IsText(const GumboNode* node) {
  return node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE || node->type == GUMBO_NODE_CDATA;
}

// The text under node, hidden elements left out, at most `limit` bytes.
// Verbatim keeps whitespace and turns <br> into a newline; otherwise
// whitespace runs become one space and block boundaries a space.
std::string TextOf(const GumboNode* node, bool verbatim, size_t limit) {
  std::string text;
  Walk(node, [&](const GumboNode* n, bool entering) {
    if (text.size() >= limit) return false;
    if (IsText(n)) {
      if (entering) text += n->v.text.text;
      return true;
    }
    if (n->type != GUMBO_NODE_ELEMENT) return n->type == GUMBO_NODE_DOCUMENT;
    if (IsHidden(n)) return false;
    if (n->v.element.tag == GUMBO_TAG_BR && entering) text += verbatim ? "\n" : " ";
    if (!verbatim && IsBlock(n->v.element.tag)) text += ' ';
    return true;
  });
  if (text.size() > limit) text.resize(limit);
  if (verbatim) return text;
  std::string collapsed = Collapse(text);
  // The edges keep one space each, for callers that place the text inline.
  if (collapsed.empty()) return collapsed;
  if (IsSpace(text.front())) collapsed.insert(collapsed.begin(), ' ');
  if (IsSpace(text.back())) collapsed += ' ';
  return collapsed;
}

// A URL as a Markdown link target: one line, no spaces or parentheses.
std::string LinkTarget(std::string_view url) {
  std::string out;
  for (char c : Trim(url)) {
    switch (c) {
      case ' ': out += "%20"; break;
      case '(': out += "%28"; break;
      case ')': out += "%29"; break;
      case '<': out += "%3C"; break;
      case '>': out += "%3E"; break;
      case '\n':
      case '\r':
      case '\t': break;
      default: out += c;
    }
  }
  return out;
}

// Whether a link runs script when followed ("javascript:", "vbscript:");
// browsers ignore leading spaces and control characters and tabs or
// newlines anywhere in the scheme, and so does this.
bool IsScriptUrl(std::string_view url) {
  std::string scheme;
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ') continue;
    if (c == ':') break;
    scheme += static_cast<char>(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
    if (scheme.size() > 16) return false;
  }
  return scheme == "javascript" || scheme == "vbscript";
}

// The longest run of backticks in text.
size_t LongestBacktickRun(std::string_view text) {
  size_t longest = 0;
  size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Writes a gumbo tree as Markdown.
class Renderer {
 public:
  explicit Renderer(MarkdownWriter* w) : w_(w) {}

  void Node(const GumboNode* node, int depth) {
    if (w_->full()) return;
    if (IsText(node)) {
      w_->Text(node->v.text.text);
      return;
    }
    if (node->type == GUMBO_NODE_DOCUMENT) {
      ChildrenOf(node, depth);
      return;
    }
    if (node->type != GUMBO_NODE_ELEMENT || IsHidden(node)) return;
    if (depth > kMaxMarkdownDepth) {
      // Too deep to render as structure: its text, without recursion.
      w_->Text(" " + TextOf(node, false, w_->room()) + " ");
      return;
    }
    Element(node, depth);
  }

  // Renders cells and other inline-only content: blocks become spaces.
  void InlineOnly(bool on) { inline_only_ += on ? 1 : -1; }
  void ChildrenOf(const GumboNode* node, int depth) {
    const GumboVector& children = Children(node);
    for (unsigned i = 0; i < children.length && !w_->full(); ++i) {
      Node(static_cast<const GumboNode*>(children.data[i]), depth + 1);
    }
  }

 private:
  void Block(int lines) { inline_only_ > 0 ? w_->Space() : w_->Break(lines); }

  // A list or item where only inline content may go: its text, spaced.
  void Spaced(const GumboNode* node, int depth) {
    w_->Space();
    ChildrenOf(node, depth);
    w_->Space();
  }

  // Children with blocks inside written as spaces, between an opening and
  // closing marker.
  void Wrapped(const GumboNode* node, int depth, std::string_view marker, std::string_view closing) {
    w_->Open(marker);
    ++inline_only_;
    ChildrenOf(node, depth);
    --inline_only_;
    w_->Close(marker, closing);
  }

  void Element(const GumboNode* node, int depth) {
    GumboTag tag = node->v.element.tag;
    switch (tag) {
      case GUMBO_TAG_H1:
      case GUMBO_TAG_H2:
      case GUMBO_TAG_H3:
      case GUMBO_TAG_H4:
      case GUMBO_TAG_H5:
      case GUMBO_TAG_H6: {
        if (inline_only_ > 0) break;
        w_->Break(2);
        std::string marker(static_cast<size_t>(tag - GUMBO_TAG_H1 + 1), '#');
        marker += ' ';
        Wrapped(node, depth, marker, "");
        w_->Break(2);
        return;
      }
      case GUMBO_TAG_P:
        Block(2);
        ChildrenOf(node, depth);
        Block(2);
        return;
      case GUMBO_TAG_STRONG:
      case GUMBO_TAG_B: Emphasis(node, depth, "**", &strong_); return;
      case GUMBO_TAG_EM:
      case GUMBO_TAG_I: Emphasis(node, depth, "*", &em_); return;
      case GUMBO_TAG_S:
      case GUMBO_TAG_STRIKE:
      case GUMBO_TAG_DEL: Emphasis(node, depth, "~~", &strike_); return;
      case GUMBO_TAG_CODE: {
        std::string text = TextOf(node, false, w_->room());
        std::string_view code = Trim(text);
        if (code.empty()) return;
        if (IsSpace(text.front())) w_->Space();
        std::string fence(LongestBacktickRun(code) + 1, '`');
        bool pad = code.front() == '`' || code.back() == '`';
        w_->Put(fence + (pad ? " " : "") + std::string(code) + (pad ? " " : "") + fence);
        if (IsSpace(text.back())) w_->Space();
        return;
      }
      case GUMBO_TAG_PRE: Pre(node); return;
      case GUMBO_TAG_A: {
        std::string_view href = Attribute(node, "href");
        if (Trim(href).empty() || IsScriptUrl(href)) break;  // its text only
        Wrapped(node, depth, "[", "](" + LinkTarget(href) + ")");
        return;
      }
      case GUMBO_TAG_IMG: {
        std::string alt = TextOfAttribute(Attribute(node, "alt"));
        std::string_view src = Trim(Attribute(node, "src"));
        // A data: URL is the image itself, often kilobytes of base64.
        if (src.empty() || strncasecmp(src.data(), "data:", std::min<size_t>(src.size(), 5)) == 0) {
          w_->Text(alt);
          return;
        }
        w_->Put("![" + alt + "](" + LinkTarget(src) + ")");
        return;
      }
      case GUMBO_TAG_BR: inline_only_ > 0 ? w_->Space() : w_->LineBreak(); return;
      case GUMBO_TAG_HR:
        if (inline_only_ > 0) {
          w_->Space();
          return;
        }
        w_->Break(2);
        w_->Put("---");
        w_->Break(2);
        return;
      case GUMBO_TAG_UL:
      case GUMBO_TAG_OL:
      case GUMBO_TAG_MENU: List(node, depth, tag == GUMBO_TAG_OL); return;
      case GUMBO_TAG_LI: Item(node, depth); return;
      case GUMBO_TAG_BLOCKQUOTE:
        if (inline_only_ > 0) break;
        w_->Break(2);
        w_->PushPrefix("> ", "> ");
        ChildrenOf(node, depth);
        w_->PopPrefix();
        w_->Break(2);
        return;
      case GUMBO_TAG_TABLE:
        if (inline_only_ > 0) break;
        Table(node, depth);
        return;
      default: break;
    }
    bool block = IsBlock(tag);
    if (block) Block(1);
    ChildrenOf(node, depth);
    if (block) Block(1);
  }

  // An attribute as image alt text: whitespace collapsed, brackets escaped.
  static std::string TextOfAttribute(std::string_view value) {
    std::string out;
    for (char c : Collapse(value)) {
      if (c == '[' || c == ']') out += '\\';
      out += c;
    }
    return out;
  }

  void Emphasis(const GumboNode* node, int depth, std::string_view marker, int* inside) {
    if (*inside > 0) {  // **a **b** c** is not Markdown
      ChildrenOf(node, depth);
      return;
    }
    ++*inside;
    Wrapped(node, depth, marker, marker);
    --*inside;
  }

  void Pre(const GumboNode* node) {
    std::string text = TextOf(node, true, w_->room());
    if (inline_only_ > 0) {
      w_->Text(text);
      return;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
    // The language, from class="language-x" on the <pre> or its <code>.
    std::string language = Language(Attribute(node, "class"));
    const GumboVector& children = node->v.element.children;
    for (unsigned i = 0; i < children.length && language.empty(); ++i) {
      const auto* child = static_cast<const GumboNode*>(children.data[i]);
      if (child->type == GUMBO_NODE_ELEMENT && child->v.element.tag == GUMBO_TAG_CODE) {
        language = Language(Attribute(child, "class"));
      }
    }
    std::string fence(std::max<size_t>(3, LongestBacktickRun(text) + 1), '`');
    w_->Break(2);
    w_->Lines(fence + language + "\n" + text + (text.empty() ? "" : "\n") + fence);
    w_->Break(2);
  }

  static std::string Language(std::string_view classes) {
    size_t start = 0;
    while (start < classes.size()) {
      size_t end = start;
      while (end < classes.size() && !IsSpace(classes[end])) ++end;
      std::string_view cls = classes.substr(start, end - start);
      for (std::string_view prefix : {"language-", "lang-"}) {
        if (cls.size() > prefix.size() && cls.substr(0, prefix.size()) == prefix) {
          std::string language;
          for (char c : cls.substr(prefix.size())) {
            if (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("+-#._", c) != nullptr) language += c;
          }
          return language;
        }
      }
      start = end + 1;
    }
    return "";
  }

  void List(const GumboNode* node, int depth, bool ordered) {
    if (inline_only_ > 0) return Spaced(node, depth);
    w_->Break(lists_.empty() ? 2 : 1);
    int start = 1;
    if (ordered) {
      std::string_view value = Attribute(node, "start");
      if (!value.empty()) start = std::atoi(std::string(value).c_str());
    }
    lists_.push_back({ordered, start});
    ChildrenOf(node, depth);
    lists_.pop_back();
    w_->Break(lists_.empty() ? 2 : 1);
  }

  void Item(const GumboNode* node, int depth) {
    if (inline_only_ > 0) return Spaced(node, depth);
    std::string marker = "- ";
    if (!lists_.empty() && lists_.back().ordered) marker = std::to_string(lists_.back().next++) + ". ";
    w_->Break(1);
    w_->PushPrefix(marker, "  ");
    ChildrenOf(node, depth);
    w_->PopPrefix();
    w_->Break(1);
  }

  // A GFM table: the first row is the header (GFM has no table without
  // one), | escaped in cells, colspan filled with empty cells.
  void Table(const GumboNode* table, int depth) {
    std::vector<std::vector<std::string>> rows;
    std::string caption;
    size_t columns = 0;
    size_t budget = w_->room();
    // Rows are children of the table's sections, or of the table itself.
    std::vector<const GumboNode*> row_nodes;
    const GumboVector& parts = table->v.element.children;
    for (unsigned i = 0; i < parts.length; ++i) {
      const auto* part = static_cast<const GumboNode*>(parts.data[i]);
      if (part->type != GUMBO_NODE_ELEMENT) continue;
      GumboTag tag = part->v.element.tag;
      if (tag == GUMBO_TAG_CAPTION) caption = TextOf(part, false, budget);
      if (tag == GUMBO_TAG_TR) row_nodes.push_back(part);
      if (tag == GUMBO_TAG_THEAD || tag == GUMBO_TAG_TBODY || tag == GUMBO_TAG_TFOOT) {
        const GumboVector& trs = part->v.element.children;
        for (unsigned j = 0; j < trs.length; ++j) {
          const auto* tr = static_cast<const GumboNode*>(trs.data[j]);
          if (tr->type == GUMBO_NODE_ELEMENT && tr->v.element.tag == GUMBO_TAG_TR) row_nodes.push_back(tr);
        }
      }
    }
    size_t used = 0;
    for (const GumboNode* tr : row_nodes) {
      std::vector<std::string> row;
      const GumboVector& cells = tr->v.element.children;
      for (unsigned k = 0; k < cells.length && used < budget; ++k) {
        const auto* cell = static_cast<const GumboNode*>(cells.data[k]);
        if (cell->type != GUMBO_NODE_ELEMENT) continue;
        if (cell->v.element.tag != GUMBO_TAG_TD && cell->v.element.tag != GUMBO_TAG_TH) continue;
        row.push_back(Cell(cell, depth + 3, budget - used));
        used += row.back().size() + 3;
        int span = std::atoi(std::string(Attribute(cell, "colspan")).c_str());
        for (int s = 1; s < std::min(span, 64); ++s) row.emplace_back();
      }
      if (row.empty()) continue;
      columns = std::max(columns, row.size());
      rows.push_back(std::move(row));
      if (used >= budget) break;
    }
    w_->Break(2);
    if (!Trim(caption).empty()) {
      w_->Text(caption);
      w_->Break(2);
    }
    if (rows.empty()) return;
    std::string text;
    for (size_t r = 0; r < rows.size(); ++r) {
      rows[r].resize(columns);
      text += "|";
      for (const std::string& cell : rows[r]) text += " " + cell + " |";
      text += "\n";
      if (r == 0) {
        text += "|";
        for (size_t c = 0; c < columns; ++c) text += " --- |";
        text += "\n";
      }
    }
    text.pop_back();
    w_->Lines(text);
    w_->Break(2);
  }

  // One cell's content on one line, | escaped.
  std::string Cell(const GumboNode* cell, int depth, size_t budget) {
    MarkdownWriter writer(budget);
    Renderer inner(&writer);
    inner.InlineOnly(true);
    inner.ChildrenOf(cell, depth);
    std::string text = writer.Finish();
    std::string out;
    for (char c : Trim(text)) {
      if (c == '\n') {
        out += ' ';
      } else if (c == '|') {
        out += "\\|";
      } else {
        out += c;
      }
    }
    return out;
  }

  struct ListState {
    bool ordered;
    int next;
  };

  MarkdownWriter* w_;
  int inline_only_ = 0;
  int strong_ = 0;
  int em_ = 0;
  int strike_ = 0;
  std::vector<ListState> lists_;
};

// The text of the document's first <title>, whitespace collapsed.
std::string TitleOf(const GumboNode* root) {
  std::string title;
  bool found = false;
  Walk(root, [&](const GumboNode* n, bool entering) {
    if (found) return false;
    if (n->type == GUMBO_NODE_ELEMENT && n->v.element.tag == GUMBO_TAG_TITLE && entering) {
      std::string text;
      const GumboVector& children = n->v.element.children;
      for (unsigned i = 0; i < children.length && text.size() < 4096; ++i) {
        const auto* child = static_cast<const GumboNode*>(children.data[i]);
        if (IsText(child)) text += child->v.text.text;
      }
      title = Collapse(text);
      found = true;
      return false;
    }
    return n->type == GUMBO_NODE_DOCUMENT || n->type == GUMBO_NODE_ELEMENT;
  });
  return title;
}

}  // namespace

std::string HtmlToMarkdown(std::string_view html, std::string* title, size_t max_output) {
  std::string bounded;
  if (LimitHtmlNesting(html, kMaxParseDepth, &bounded)) html = bounded;
  GumboHeap heap;
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = &GumboHeap::Allocate;
  options.deallocator = &GumboHeap::Free;
  options.userdata = &heap;
  options.max_errors = 0;  // errors are of no use here; recording them costs memory
  // Freed by heap, not gumbo_destroy_output (see GumboHeap).
  GumboOutput* output = gumbo_parse_with_options(&options, html.data(), html.size());
  if (title != nullptr) *title = TitleOf(output->document);
  MarkdownWriter writer(max_output);
  Renderer renderer(&writer);
  renderer.Node(output->document, 0);
  return writer.Finish();
}

}  // namespace odin
