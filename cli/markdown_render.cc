#include "cli/markdown_render.h"

#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/terminal_text.h"

namespace odin {
namespace {

// Nesting levels (block quotes, list items) that indent; deeper ones render
// at the deepest indentation. Keeps every line's prefix short however deep
// the input nests.
constexpr size_t kMaxIndentDepth = 16;
// A paragraph inside deep indentation still gets this many columns (or half
// the width, if that is less).
constexpr int kMinTextWidth = 20;

// Inline styles, combined as bits.
constexpr uint8_t kBold = 1, kDim = 2, kItalic = 4, kUnderline = 8, kStrike = 16, kCode = 32;

// Text in one style; hard_break pieces end the line instead.
struct Piece {
  std::string text;
  uint8_t style = 0;
  bool hard_break = false;
};
using Line = std::vector<Piece>;

// The SGR sequence that switches from one style to another.
std::string Sgr(uint8_t from, uint8_t to) {
  if (to == 0) return "\033[0m";
  static constexpr struct {
    uint8_t bit;
    const char* code;
  } kCodes[] = {{kBold, "1"}, {kDim, "2"}, {kItalic, "3"}, {kUnderline, "4"}, {kStrike, "9"}, {kCode, "36"}};
  // Adding attributes needs only theirs; removing one needs a reset first.
  bool additive = (from & ~to) == 0;
  uint8_t add = additive ? static_cast<uint8_t>(to & ~from) : to;
  std::string out = additive ? "\033[" : "\033[0";
  bool first = additive;
  for (const auto& c : kCodes) {
    if (!(add & c.bit)) continue;
    if (!first) out += ';';
    out += c.code;
    first = false;
  }
  return out + "m";
}

// Columns a code point takes: 2 for East Asian wide and fullwidth ones and
// emoji, 0 for combining marks and zero-width ones, else 1.
int CharWidth(uint32_t c) {
  if ((c >= 0x0300 && c <= 0x036f) || (c >= 0x200b && c <= 0x200f) || (c >= 0xfe00 && c <= 0xfe0f)) return 0;
  if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf && c != 0x303f) || (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) || (c >= 0x1f900 && c <= 0x1f9ff) ||
      (c >= 0x20000 && c <= 0x3fffd)) {
    return 2;
  }
  return 1;
}

// REQUIRES: text is UTF-8 (VisibleControls' output is).
int DisplayWidth(std::string_view text) {
  int width = 0;
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    size_t len = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : 4;
    uint32_t c = len == 1 ? b : b & (0xff >> (len + 1));
    for (size_t k = 1; k < len && i + k < text.size(); ++k) c = (c << 6) | (text[i + k] & 0x3f);
    width += CharWidth(c);
    i += len;
  }
  return width;
}

int DisplayWidth(const Line& line) {
  int width = 0;
  for (const Piece& p : line) width += DisplayWidth(p.text);
  return width;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Text from the model, safe to print; a tab or newline in running text (raw
// inline HTML may span lines) is a space.
std::string Visible(const char* text) {
  std::string out = VisibleControls(text ? text : "");
  for (char& c : out) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return out;
}

// What a node is, extension nodes included (cmark-gfm names those only by
// their type string).
// clang-format off
enum class Kind {
  kDocument, kQuote, kList, kItem, kCodeBlock, kHtmlBlock, kParagraph, kHeading, kThematicBreak, kTable,
  kText, kSoftBreak, kLineBreak, kCode, kHtmlInline, kEmph, kStrong, kStrike, kLink, kImage, kOther,
};
// clang-format on

Kind KindOf(cmark_node* node) {
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_DOCUMENT: return Kind::kDocument;
    case CMARK_NODE_BLOCK_QUOTE: return Kind::kQuote;
    case CMARK_NODE_LIST: return Kind::kList;
    case CMARK_NODE_ITEM: return Kind::kItem;
    case CMARK_NODE_CODE_BLOCK: return Kind::kCodeBlock;
    case CMARK_NODE_HTML_BLOCK: return Kind::kHtmlBlock;
    case CMARK_NODE_PARAGRAPH: return Kind::kParagraph;
    case CMARK_NODE_HEADING: return Kind::kHeading;
    case CMARK_NODE_THEMATIC_BREAK: return Kind::kThematicBreak;
    case CMARK_NODE_TEXT: return Kind::kText;
    case CMARK_NODE_SOFTBREAK: return Kind::kSoftBreak;
    case CMARK_NODE_LINEBREAK: return Kind::kLineBreak;
    case CMARK_NODE_CODE: return Kind::kCode;
    case CMARK_NODE_HTML_INLINE: return Kind::kHtmlInline;
    case CMARK_NODE_EMPH: return Kind::kEmph;
    case CMARK_NODE_STRONG: return Kind::kStrong;
    case CMARK_NODE_LINK: return Kind::kLink;
    case CMARK_NODE_IMAGE: return Kind::kImage;
    default: break;
  }
  const char* name = cmark_node_get_type_string(node);
  if (name == nullptr) return Kind::kOther;
  if (strcmp(name, "table") == 0) return Kind::kTable;
  if (strcmp(name, "strikethrough") == 0) return Kind::kStrike;
  return Kind::kOther;
}

using IterPtr = std::unique_ptr<cmark_iter, decltype(&cmark_iter_free)>;
using NodePtr = std::unique_ptr<cmark_node, decltype(&cmark_node_free)>;

// Parses markdown with the GFM extensions the renderer draws.
NodePtr Parse(std::string_view markdown) {
  [[maybe_unused]] static const bool registered = (cmark_gfm_core_extensions_ensure_registered(), true);
  std::unique_ptr<cmark_parser, decltype(&cmark_parser_free)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                     cmark_parser_free);
  for (const char* name : {"table", "strikethrough", "autolink"}) {
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser.get(), ext);
    }
  }
  // A bare CR ends a line for cmark too; as "\n" none reaches the terminal.
  std::string text;
  text.reserve(markdown.size());
  for (size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] != '\r') {
      text += markdown[i];
    } else if (i + 1 >= markdown.size() || markdown[i + 1] != '\n') {
      text += '\n';
    }
  }
  cmark_parser_feed(parser.get(), text.data(), text.size());
  return NodePtr(cmark_parser_finish(parser.get()), cmark_node_free);
}

// Splits runs of inline text into lines of at most width columns, at spaces
// and hard breaks. A word wider than width gets a line of its own.
std::vector<Line> Wrap(const Line& runs, int width) {
  struct Token {
    Line word;  // empty: a space (of space_style) or, if hard_break, a break
    uint8_t space_style = 0;
    bool hard_break = false;
  };
  std::vector<Token> tokens;
  Line word;
  auto flush = [&] {
    if (!word.empty()) tokens.push_back({std::move(word)});
    word.clear();
  };
  for (const Piece& run : runs) {
    if (run.hard_break) {
      flush();
      tokens.push_back({{}, 0, true});
      continue;
    }
    for (char ch : run.text) {
      if (ch == ' ') {
        flush();
        if (tokens.empty() || !tokens.back().word.empty() || tokens.back().hard_break) {
          tokens.push_back({{}, run.style});
        }
      } else {
        if (word.empty() || word.back().style != run.style) word.push_back({"", run.style});
        word.back().text += ch;
      }
    }
  }
  flush();

  std::vector<Line> lines;
  Line line;
  int line_width = 0;
  const Token* space = nullptr;
  for (const Token& t : tokens) {
    if (t.hard_break) {
      lines.push_back(std::move(line));
      line.clear();
      line_width = 0;
      space = nullptr;
    } else if (t.word.empty()) {
      if (line_width > 0) space = &t;
    } else {
      int w = DisplayWidth(t.word);
      if (line_width > 0 && width > 0 && line_width + 1 + w > width) {
        lines.push_back(std::move(line));
        line.clear();
        line_width = 0;
      } else if (line_width > 0 && space != nullptr) {
        line.push_back({" ", space->space_style});
        line_width += 1;
      }
      line.insert(line.end(), t.word.begin(), t.word.end());
      line_width += w;
      space = nullptr;
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

class Renderer {
 public:
  explicit Renderer(const RenderStyle& style) : style_(style) {}

  std::string Render(cmark_node* document) {
    IterPtr it(cmark_iter_new(document), cmark_iter_free);
    cmark_event_type event;
    while ((event = cmark_iter_next(it.get())) != CMARK_EVENT_DONE) {
      cmark_node* node = cmark_iter_get_node(it.get());
      Kind kind = KindOf(node);
      if (event == CMARK_EVENT_EXIT) {
        if (kind == Kind::kQuote || kind == Kind::kItem) {
          // An empty item or quote still shows its marker.
          if (containers_.size() <= kMaxIndentDepth && !containers_.back().used) Emit({});
          containers_.pop_back();
        } else if (kind == Kind::kList) {
          lists_.pop_back();
        }
        continue;
      }
      if (kind == Kind::kDocument) continue;
      if (NeedsBlankBefore(node)) blank_depth_ = std::min(blank_depth_, containers_.size());
      switch (kind) {
        case Kind::kQuote: containers_.push_back({"│ ", "│ ", kDim}); break;
        case Kind::kList: EnterList(node); break;
        case Kind::kItem: EnterItem(); break;
        case Kind::kParagraph:
          EmitWrapped(Inlines(node, 0));
          cmark_iter_reset(it.get(), node, CMARK_EVENT_EXIT);
          break;
        case Kind::kHeading:
          EmitHeading(node);
          cmark_iter_reset(it.get(), node, CMARK_EVENT_EXIT);
          break;
        case Kind::kCodeBlock: EmitLiteral(node, "  ", kCode); break;
        case Kind::kHtmlBlock: EmitLiteral(node, "", 0); break;
        case Kind::kThematicBreak: Emit({{Repeat("─", TextWidth() > 0 ? TextWidth() : 3), kDim}}); break;
        case Kind::kTable:
          EmitTable(node);
          cmark_iter_reset(it.get(), node, CMARK_EVENT_EXIT);
          break;
        default: break;  // other blocks: their children render
      }
    }
    return std::move(out_);
  }

 private:
  // A block quote or list item: what starts its lines.
  struct Container {
    std::string first;  // on its first line (a bullet, a number)
    std::string rest;   // on the others
    uint8_t style = 0;
    bool used = false;  // first has been printed
  };
  struct ListState {
    bool ordered = false;
    int next = 1;    // the next item's number
    int marker = 0;  // columns of the widest number and its delimiter
    char delim = '.';
  };

  // A blank line separates blocks, except before a block opening its
  // container and between the items (and their blocks) of a tight list.
  bool NeedsBlankBefore(cmark_node* node) {
    if (out_.empty() || cmark_node_previous(node) == nullptr) return false;
    auto tight = [](cmark_node* list) {
      return list != nullptr && cmark_node_get_type(list) == CMARK_NODE_LIST && cmark_node_get_list_tight(list);
    };
    cmark_node* parent = cmark_node_parent(node);
    if (cmark_node_get_type(node) == CMARK_NODE_ITEM) return !tight(parent);
    if (parent != nullptr && cmark_node_get_type(parent) == CMARK_NODE_ITEM) return !tight(cmark_node_parent(parent));
    return true;
  }

  void EnterList(cmark_node* list) {
    ListState state;
    state.ordered = cmark_node_get_list_type(list) == CMARK_ORDERED_LIST;
    if (state.ordered) {
      state.next = cmark_node_get_list_start(list);
      state.delim = cmark_node_get_list_delim(list) == CMARK_PAREN_DELIM ? ')' : '.';
      int items = 0;
      for (cmark_node* item = cmark_node_first_child(list); item != nullptr; item = cmark_node_next(item)) ++items;
      int widest = std::max(state.next, state.next + items - 1);
      state.marker = static_cast<int>(std::to_string(widest).size()) + 1;
    }
    lists_.push_back(state);
  }

  void EnterItem() {
    if (lists_.empty() || !lists_.back().ordered) {
      containers_.push_back({"• ", "  ", 0});
      return;
    }
    ListState& list = lists_.back();
    std::string number = std::to_string(list.next++) + list.delim;
    std::string pad(static_cast<size_t>(std::max(0, list.marker - static_cast<int>(number.size()))), ' ');
    containers_.push_back({pad + number + " ", std::string(static_cast<size_t>(list.marker) + 1, ' '), 0});
  }

  // Columns left for text inside the current containers.
  int TextWidth() const {
    if (style_.width <= 0) return 0;
    int prefix = 0;
    for (size_t i = 0; i < containers_.size() && i < kMaxIndentDepth; ++i) prefix += DisplayWidth(containers_[i].rest);
    return std::max(style_.width - prefix, std::min(style_.width / 2, kMinTextWidth));
  }

  // Appends one line: the containers' prefixes, then content. A pending
  // blank line comes first, with the prefixes of the containers it was
  // decided in (a blank line before a quote has no bar).
  void Emit(const Line& content) {
    if (blank_depth_ != kNoBlank) {
      Line blank;
      for (size_t i = 0; i < blank_depth_ && i < containers_.size() && i < kMaxIndentDepth; ++i) {
        blank.push_back({containers_[i].rest, containers_[i].style});
      }
      blank_depth_ = kNoBlank;
      Write(std::move(blank));
    }
    Line line;
    for (size_t i = 0; i < containers_.size() && i < kMaxIndentDepth; ++i) {
      Container& c = containers_[i];
      line.push_back({c.used ? c.rest : c.first, c.style});
      c.used = true;
    }
    line.insert(line.end(), content.begin(), content.end());
    Write(std::move(line));
  }

  // Appends line without its trailing spaces, styled if color.
  void Write(Line line) {
    while (!line.empty()) {
      std::string& text = line.back().text;
      while (!text.empty() && text.back() == ' ') text.pop_back();
      if (!text.empty()) break;
      line.pop_back();
    }
    uint8_t current = 0;
    for (const Piece& p : line) {
      if (p.text.empty()) continue;
      if (style_.color && p.style != current) {
        out_ += Sgr(current, p.style);
        current = p.style;
      }
      out_ += p.text;
    }
    if (current != 0) out_ += Sgr(current, 0);
    out_ += '\n';
  }

  void EmitWrapped(const Line& runs) {
    for (const Line& line : Wrap(runs, TextWidth())) Emit(line);
  }

  void EmitHeading(cmark_node* heading) {
    int level = cmark_node_get_heading_level(heading);
    if (style_.color) {
      EmitWrapped(Inlines(heading, level == 1 ? kBold | kUnderline : kBold));
      return;
    }
    Line runs{{Repeat("#", level) + " "}};
    Line text = Inlines(heading, 0);
    runs.insert(runs.end(), text.begin(), text.end());
    EmitWrapped(runs);
  }

  // A code or HTML block: its lines as they are, never interpreted.
  void EmitLiteral(cmark_node* block, const std::string& indent, uint8_t style) {
    std::string text = VisibleControls(cmark_node_get_literal(block) ? cmark_node_get_literal(block) : "");
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.empty()) return;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = std::min(text.find('\n', start), text.size());
      Emit({{indent, 0}, {text.substr(start, end - start), style}});
      start = end + 1;
    }
  }

  void EmitTable(cmark_node* table) {
    struct Cell {
      Line text;
      int width = 0;
    };
    std::vector<std::vector<Cell>> rows;
    size_t header_rows = 0;
    size_t columns = cmark_gfm_extensions_get_table_columns(table);
    for (cmark_node* row = cmark_node_first_child(table); row != nullptr; row = cmark_node_next(row)) {
      bool header = cmark_gfm_extensions_get_table_row_is_header(row);
      if (header) ++header_rows;
      rows.emplace_back();
      for (cmark_node* cell = cmark_node_first_child(row); cell != nullptr; cell = cmark_node_next(cell)) {
        Line text = Inlines(cell, header ? kBold : 0);
        for (Piece& p : text) {
          if (p.hard_break) p = {" ", p.style};
        }
        int width = DisplayWidth(text);
        rows.back().push_back({std::move(text), width});
      }
      columns = std::max(columns, rows.back().size());
    }
    std::vector<int> widths(columns, 0);
    for (const auto& row : rows) {
      for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].width);
    }
    const uint8_t* aligns = cmark_gfm_extensions_get_table_alignments(table);
    size_t aligned = cmark_gfm_extensions_get_table_columns(table);
    for (size_t r = 0; r < rows.size(); ++r) {
      Line line;
      for (size_t c = 0; c < columns; ++c) {
        if (c > 0) line.push_back({" │ ", kDim});
        static const Cell kEmpty;
        const Cell& cell = c < rows[r].size() ? rows[r][c] : kEmpty;
        int room = widths[c] - cell.width;
        char align = aligns != nullptr && c < aligned ? static_cast<char>(aligns[c]) : 'l';
        int left = align == 'r' ? room : align == 'c' ? room / 2 : 0;
        line.push_back({std::string(static_cast<size_t>(left), ' '), 0});
        line.insert(line.end(), cell.text.begin(), cell.text.end());
        line.push_back({std::string(static_cast<size_t>(room - left), ' '), 0});
      }
      Emit(line);
      if (r + 1 == header_rows) {
        Line rule;
        for (size_t c = 0; c < columns; ++c) rule.push_back({(c > 0 ? "─┼─" : "") + Repeat("─", widths[c]), kDim});
        Emit(rule);
      }
    }
  }

  // The inline content of a block as styled runs. Without color, markup
  // keeps markdown's markers; links show their URL after the text.
  Line Inlines(cmark_node* block, uint8_t base) {
    Line runs;
    int counts[8] = {};  // open spans per style bit
    auto style = [&] {
      uint8_t s = base;
      for (int bit = 0; bit < 8; ++bit) {
        if (counts[bit] > 0) s |= static_cast<uint8_t>(1u << bit);
      }
      return s;
    };
    auto span = [&](bool enter, uint8_t bit, const char* marker) {
      int index = std::countr_zero(bit);
      if (!enter) --counts[index];
      if (!style_.color) runs.push_back({marker, style()});
      if (enter) ++counts[index];
    };
    std::vector<size_t> links;  // where each open link's text starts in runs
    IterPtr it(cmark_iter_new(block), cmark_iter_free);
    cmark_event_type event;
    while ((event = cmark_iter_next(it.get())) != CMARK_EVENT_DONE) {
      cmark_node* node = cmark_iter_get_node(it.get());
      if (node == block) continue;
      bool enter = event == CMARK_EVENT_ENTER;
      switch (KindOf(node)) {
        case Kind::kText:
        case Kind::kHtmlInline: runs.push_back({Visible(cmark_node_get_literal(node)), style()}); break;
        case Kind::kSoftBreak: runs.push_back({" ", style()}); break;
        case Kind::kLineBreak: runs.push_back({"", 0, true}); break;
        case Kind::kCode: {
          std::string code = Visible(cmark_node_get_literal(node));
          const char* fence = code.find('`') == std::string::npos ? "`" : "`` ";
          if (!style_.color) runs.push_back({fence, style()});
          runs.push_back({code, static_cast<uint8_t>(style() | kCode)});
          if (!style_.color) runs.push_back({strlen(fence) == 1 ? "`" : " ``", style()});
          break;
        }
        case Kind::kEmph: span(enter, kItalic, "*"); break;
        case Kind::kStrong: span(enter, kBold, "**"); break;
        case Kind::kStrike: span(enter, kStrike, "~~"); break;
        case Kind::kLink:
        case Kind::kImage:
          if (enter) {
            links.push_back(runs.size());
          } else {
            std::string text;
            for (size_t i = links.back(); i < runs.size(); ++i) text += runs[i].text;
            links.pop_back();
            std::string url = Visible(cmark_node_get_url(node));
            // Autolinks show their URL already (GFM adds the scheme).
            if (!url.empty() && url != text && url != "http://" + text && url != "mailto:" + text) {
              runs.push_back({" ", style()});
              runs.push_back({"(" + url + ")", static_cast<uint8_t>(style() | kDim)});
            }
          }
          break;
        default:
          if (enter && cmark_node_get_literal(node) != nullptr) {
            runs.push_back({Visible(cmark_node_get_literal(node)), style()});
          }
          break;
      }
    }
    return runs;
  }

  static constexpr size_t kNoBlank = SIZE_MAX;

  const RenderStyle& style_;
  std::string out_;
  size_t blank_depth_ = kNoBlank;  // a blank line is due, inside this many containers
  std::vector<Container> containers_;
  std::vector<ListState> lists_;
};

// A fence line's character and length, or 0 if the line does not start a
// fence. rest is the line without its indentation.
size_t FenceLength(std::string_view rest, char* ch) {
  if (rest.empty() || (rest[0] != '`' && rest[0] != '~')) return 0;
  size_t n = 0;
  while (n < rest.size() && rest[n] == rest[0]) ++n;
  if (n < 3) return 0;
  *ch = rest[0];
  return n;
}

}  // namespace

std::string RenderMarkdown(std::string_view markdown, const RenderStyle& style) {
  auto document = Parse(markdown);
  if (document == nullptr) return "";
  return Renderer(style).Render(document.get());
}

size_t CompleteBlocksPrefix(std::string_view streamed) {
  size_t cut = 0;
  bool after_blank = false;
  char fence_char = 0;  // 0: outside a fenced code block
  size_t fence_len = 0;
  for (size_t pos = 0; pos < streamed.size();) {
    size_t nl = streamed.find('\n', pos);
    std::string_view line = streamed.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A block starting at the first column after a blank line: what comes
    // before it is complete.
    if (fence_char == 0 && after_blank && !line.empty() && line[0] != ' ' && line[0] != '\t') cut = pos;
    if (nl == std::string_view::npos) break;  // a line still arriving
    size_t indent = line.find_first_not_of(" \t");
    std::string_view rest = indent == std::string_view::npos ? std::string_view() : line.substr(indent);
    char ch = 0;
    size_t len = FenceLength(rest, &ch);
    if (fence_char != 0) {
      // A closing fence: at least as long, nothing after it but spaces.
      if (ch == fence_char && len >= fence_len && rest.find_first_not_of(" \t", len) == std::string_view::npos) {
        fence_char = 0;
      }
    } else if (rest.empty()) {
      after_blank = true;
    } else {
      after_blank = false;
      // A backtick fence's info string has no backtick.
      if (len > 0 && (ch == '~' || rest.find('`', len) == std::string_view::npos)) {
        fence_char = ch;
        fence_len = len;
      }
    }
    pos = nl + 1;
  }
  return cut;
}

}  // namespace odin
