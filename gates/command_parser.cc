#include "gates/command_parser.h"

// Long file: one walk over bash's syntax tree (tree-sitter-bash), with a case
// for each node kind a command can hide in (pipelines, lists, subshells,
// substitutions, redirections, heredocs, functions, expansions). Split, the
// cases of one grammar would be scattered across files that share one walker.

#include <tree_sitter/api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <utility>

extern "C" const TSLanguage* tree_sitter_bash();

namespace odin {

namespace {

// Brace expansion gives up past this many words ({a,b}{c,d}... multiplies),
// and on words longer than this (finding a brace's match is linear).
constexpr size_t kMaxBraceWords = 256;
constexpr size_t kMaxBraceWordBytes = 4096;

std::string Text(TSNode n, const std::string& src) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  return b > a && b <= src.size() ? src.substr(a, b - a) : "";
}

bool Is(TSNode n, const char* type) { return strcmp(ts_node_type(n), type) == 0; }

// A node's children (named ones only, or all), in order. Through a cursor:
// ts_node_child(n, i) walks from the first child each time.
std::vector<TSNode> Children(TSNode n, bool named_only = true) {
  std::vector<TSNode> out;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode child = ts_tree_cursor_current_node(&c);
      if (!named_only || ts_node_is_named(child)) out.push_back(child);
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return out;
}

bool IsAny(TSNode n, std::initializer_list<const char*> types) {
  for (const char* t : types) {
    if (Is(n, t)) return true;
  }
  return false;
}

// ---- words -------------------------------------------------------------------

// A word's value with, per character, whether it was quoted or escaped
// (quoted characters never glob or brace-expand).
struct Spelled {
  std::string value;
  std::string quoted;  // 'q' quoted, 'u' not; one per character of value
  void Add(char c, bool q) {
    value += c;
    quoted += q ? 'q' : 'u';
  }
};

void AppendUtf8(uint32_t cp, Spelled* out) {
  auto add = [out](uint32_t b) { out->Add(static_cast<char>(b), true); };
  if (cp < 0x80) {
    add(cp);
  } else if (cp < 0x800) {
    add(0xC0 | (cp >> 6));
    add(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    add(0xE0 | (cp >> 12));
    add(0x80 | ((cp >> 6) & 0x3F));
    add(0x80 | (cp & 0x3F));
  } else {
    add(0xF0 | ((cp >> 18) & 0x07));
    add(0x80 | ((cp >> 12) & 0x3F));
    add(0x80 | ((cp >> 6) & 0x3F));
    add(0x80 | (cp & 0x3F));
  }
}

// $'...': bash's escapes decoded (a NUL ends the string, as in bash).
void DecodeAnsiC(const std::string& body, Spelled* out) {
  auto digits = [&body](size_t* i, int base, size_t max) {
    uint32_t v = 0;
    size_t n = 0;
    while (n < max && *i < body.size()) {
      char c = body[*i];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : 99;
      if (d >= base) break;
      v = v * static_cast<uint32_t>(base) + static_cast<uint32_t>(d);
      ++*i;
      ++n;
    }
    return std::make_pair(v, n);
  };
  for (size_t i = 0; i < body.size();) {
    char c = body[i++];
    if (c != '\\' || i >= body.size()) {
      out->Add(c, true);
      continue;
    }
    char e = body[i++];
    uint32_t cp = 0;
    switch (e) {
      case 'a': cp = 7; break;
      case 'b': cp = 8; break;
      case 'e':
      case 'E': cp = 27; break;
      case 'f': cp = 12; break;
      case 'n': cp = 10; break;
      case 'r': cp = 13; break;
      case 't': cp = 9; break;
      case 'v': cp = 11; break;
      case '\\':
      case '\'':
      case '"':
      case '?': cp = static_cast<unsigned char>(e); break;
      case 'c': cp = i < body.size() ? static_cast<unsigned char>(body[i++]) & 0x1F : '\\'; break;
      case 'x':
      case 'u':
      case 'U': {
        auto [v, n] = digits(&i, 16, e == 'x' ? 2 : e == 'u' ? 4 : 8);
        if (n == 0) {
          out->Add('\\', true);
          out->Add(e, true);
          continue;
        }
        if (e == 'x') {
          if (v == 0) return;
          out->Add(static_cast<char>(v), true);
        } else {
          if (v == 0) return;
          AppendUtf8(v, out);
        }
        continue;
      }
      default:
        if (e >= '0' && e <= '7') {
          --i;
          auto [v, n] = digits(&i, 8, 3);
          if (v == 0) return;
          out->Add(static_cast<char>(v & 0xFF), true);
          continue;
        }
        out->Add('\\', true);
        cp = static_cast<unsigned char>(e);
    }
    if (cp == 0) return;
    out->Add(static_cast<char>(cp), true);
  }
}

// Appends the value of a word-like node; false if it holds an expansion
// (its value is known only when it runs).
bool Spell(TSNode n, const std::string& src, Spelled* out) {
  if (Is(n, "word") || Is(n, "number")) {
    std::string t = Text(n, src);
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '\\' && i + 1 < t.size()) {
        out->Add(t[++i], true);  // an escaped character stands for itself
      } else {
        out->Add(t[i], false);
      }
    }
    return true;
  }
  if (Is(n, "raw_string")) {
    std::string t = Text(n, src);
    for (size_t i = 1; i + 1 < t.size(); ++i) out->Add(t[i], true);
    return true;
  }
  if (Is(n, "ansi_c_string")) {
    std::string t = Text(n, src);
    if (t.size() < 3) return true;
    DecodeAnsiC(t.substr(2, t.size() - 3), out);
    return true;
  }
  if (Is(n, "translated_string")) {
    return ts_node_named_child_count(n) == 1 && Spell(ts_node_named_child(n, 0), src, out);
  }
  if (Is(n, "brace_expression")) {  // {1..3}: expanded by ExpandBraces
    for (char c : Text(n, src)) out->Add(c, false);
    return true;
  }
  if (Is(n, "string")) {
    for (TSNode c : Children(n)) {
      if (!Is(c, "string_content")) return false;  // an expansion inside
      // Inside double quotes a backslash escapes only $ ` " \ and newline.
      std::string t = Text(c, src);
      for (size_t k = 0; k < t.size(); ++k) {
        if (t[k] == '\\' && k + 1 < t.size() && strchr("$`\"\\\n", t[k + 1]) != nullptr) {
          if (t[++k] != '\n') out->Add(t[k], true);
        } else {
          out->Add(t[k], true);
        }
      }
    }
    return true;
  }
  if (Is(n, "concatenation")) {
    for (TSNode c : Children(n, /*named_only=*/false)) {
      if (!ts_node_is_named(c) || !Spell(c, src, out)) return false;
    }
    return true;
  }
  return false;
}

// The unquoted '}' that closes the '{' at open, or npos.
size_t MatchingBrace(const Spelled& w, size_t open) {
  int depth = 0;
  for (size_t i = open; i < w.value.size(); ++i) {
    if (w.quoted[i] == 'q') continue;
    if (w.value[i] == '{') ++depth;
    if (w.value[i] == '}' && --depth == 0) return i;
  }
  return std::string::npos;
}

// Bash's brace expansion: a{b,c}d -> abd acd, {1..3} -> 1 2 3. False if it
// would make too many words.
bool ExpandBraces(const Spelled& w, std::vector<std::string>* out, int budget = 16) {
  if (budget <= 0) return false;
  if (w.value.size() > kMaxBraceWordBytes) {
    for (size_t i = 0; i < w.value.size(); ++i) {
      if (w.quoted[i] == 'u' && w.value[i] == '{') return false;
    }
  }
  for (size_t open = 0; open < w.value.size(); ++open) {
    if (w.quoted[open] == 'q' || w.value[open] != '{' || (open > 0 && w.value[open - 1] == '$')) continue;
    size_t close = MatchingBrace(w, open);
    if (close == std::string::npos) break;
    // Top-level commas split the alternatives.
    std::vector<std::pair<size_t, size_t>> alternatives;
    int depth = 0;
    size_t from = open + 1;
    for (size_t i = open + 1; i < close; ++i) {
      if (w.quoted[i] == 'q') continue;
      if (w.value[i] == '{') ++depth;
      if (w.value[i] == '}') --depth;
      if (w.value[i] == ',' && depth == 0) {
        alternatives.push_back({from, i});
        from = i + 1;
      }
    }
    std::vector<std::string> items;
    Spelled prefix, suffix;
    prefix.value = w.value.substr(0, open);
    prefix.quoted = w.quoted.substr(0, open);
    suffix.value = w.value.substr(close + 1);
    suffix.quoted = w.quoted.substr(close + 1);
    if (!alternatives.empty()) {
      alternatives.push_back({from, close});
      for (auto [a, b] : alternatives) {
        Spelled whole = prefix;
        whole.value += w.value.substr(a, b - a) + suffix.value;
        whole.quoted += w.quoted.substr(a, b - a) + suffix.quoted;
        if (!ExpandBraces(whole, out, budget - 1) || out->size() > kMaxBraceWords) return false;
      }
      return true;
    }
    // {X..Y}: numbers or single characters.
    std::string inner = w.value.substr(open + 1, close - open - 1);
    size_t dots = inner.find("..");
    if (dots != std::string::npos && w.quoted.substr(open, close - open).find('q') == std::string::npos) {
      std::string a = inner.substr(0, dots), b = inner.substr(dots + 2);
      if (b.find("..") != std::string::npos) b = b.substr(0, b.find(".."));
      long from_v = 0, to_v = 0;
      bool numbers = !a.empty() && !b.empty() && a.find_first_not_of("-0123456789") == std::string::npos &&
                     b.find_first_not_of("-0123456789") == std::string::npos;
      if (numbers) {
        from_v = std::strtol(a.c_str(), nullptr, 10);
        to_v = std::strtol(b.c_str(), nullptr, 10);
      } else if (a.size() == 1 && b.size() == 1) {
        from_v = a[0];
        to_v = b[0];
      } else {
        continue;
      }
      if (std::labs(to_v - from_v) > static_cast<long>(kMaxBraceWords)) return false;
      for (long v = from_v;; v += from_v <= to_v ? 1 : -1) {
        Spelled whole = prefix;
        std::string item = numbers ? std::to_string(v) : std::string(1, static_cast<char>(v));
        whole.value += item + suffix.value;
        whole.quoted += std::string(item.size(), 'q') + suffix.quoted;
        if (!ExpandBraces(whole, out, budget - 1) || out->size() > kMaxBraceWords) return false;
        if (v == to_v) break;
      }
      return true;
    }
  }
  out->push_back(w.value);
  return true;
}

bool HasGlob(const Spelled& w) {
  for (size_t i = 0; i < w.value.size(); ++i) {
    if (w.quoted[i] == 'u' && (w.value[i] == '*' || w.value[i] == '?' || w.value[i] == '[')) return true;
  }
  return false;
}

// A word as the shell will pass it: the words it becomes (brace expansion),
// or, when it is known only when it runs, its source text.
struct WordValue {
  std::vector<std::string> values;
  bool known = true;
};

WordValue ReadWord(TSNode n, const std::string& src) {
  Spelled s;
  std::vector<std::string> expanded;
  if (Spell(n, src, &s) && !HasGlob(s) && ExpandBraces(s, &expanded)) return {expanded, true};
  return {{Text(n, src)}, false};
}

// Whether a file_redirect may write a file (ParsedCommand::redirect_writes).
// target: its destination read, if it has one.
bool RedirectMayWrite(TSNode redirect, const std::optional<WordValue>& target) {
  std::string op;  // the operator: the node's one anonymous child
  for (TSNode c : Children(redirect, /*named_only=*/false)) {
    if (!ts_node_is_named(c)) op = ts_node_type(c);
  }
  if (op == "<" || op == "<&" || op == "<&-") return false;
  if (!target || !target->known || target->values.size() != 1) return true;
  const std::string& to = target->values[0];
  if (to == "/dev/null") return false;
  // >&N and >&- duplicate or close a descriptor; >& FILE writes FILE.
  bool descriptor =
      !to.empty() && (to == "-" || std::all_of(to.begin(), to.end(), [](char ch) { return ch >= '0' && ch <= '9'; }));
  return !(descriptor && (op == ">&" || op == ">&-"));
}

// ---- the walk ----------------------------------------------------------------

using Directories = std::vector<std::string>;  // as CommandPart::directories

struct Parse {
  TSParser* parser;
  ParsedCommand* out;
  std::chrono::steady_clock::time_point deadline;
  std::vector<size_t> anywhere;  // parts in function bodies: they run wherever a cd led
};

// Nodes that nest (kMaxShellNesting counts them), and those that may run
// their body more than once.
bool Nests(TSNode n) {
  return IsAny(n, {"command_substitution", "process_substitution", "subshell", "compound_statement", "if_statement",
                   "while_statement", "for_statement", "c_style_for_statement", "case_statement", "function_definition",
                   "arithmetic_expansion", "expansion", "parenthesized_expression", "test_command", "negated_command",
                   "redirected_statement"});
}
bool Repeats(TSNode n) {
  return IsAny(n, {"while_statement", "for_statement", "c_style_for_statement", "function_definition"});
}

struct Context {
  int shells = 0;         // command lines inside command lines
  bool repeats = false;   // inside a loop or a function body
  bool function = false;  // inside a function body
};

Directories Collect(Parse* p, const std::string& text, Context ctx, Directories start);

std::string Basename(const std::string& w) { return w.substr(w.rfind('/') + 1); }

void Merge(const Directories& more, Directories* into) {
  for (const std::string& d : more) {
    if (std::find(into->begin(), into->end(), d) == into->end()) into->push_back(d);
  }
}

// Past kMaxDirectories places, the command's place is no longer followed.
void Cap(ParsedCommand* out, Directories* dirs) {
  if (dirs->size() <= kMaxDirectories) return;
  out->directory_changes.push_back({"", false, "(the directories it may be in are too many to follow)"});
  *dirs = {""};
}

// Where `cd target` leads from each of dirs (composed lexically; resolved by
// the rules against the real starting directory).
Directories Moved(const Directories& dirs, const std::string& target) {
  Directories out;
  for (const std::string& d : dirs) {
    std::string to = target[0] == '/' || d.empty() ? target : d + "/" + target;
    if (std::find(out.begin(), out.end(), to) == out.end()) out.push_back(to);
  }
  return out;
}

enum class Move { kNone, kTo, kBack };

// What a cd, pushd or popd does to the directory: kTo d->target (or an
// unknown place if !d->known), kBack to a place it was in before.
Move DirectoryChangeOf(const CommandPart& part, bool repeats, DirectoryChange* d) {
  const std::vector<std::string>& w = part.words;
  std::string name = Basename(w[0]);
  if (name == "popd") return Move::kBack;
  if (name != "cd" && name != "pushd") return Move::kNone;
  size_t i = 1;
  while (i < w.size() && w[i].size() > 1 && w[i][0] == '-' && w[i] != "--") {
    if (name == "pushd" && w[i] == "-n") return Move::kNone;  // changes the stack only
    if (w[i][1] >= '0' && w[i][1] <= '9') break;              // pushd -N
    ++i;
  }
  if (i < w.size() && w[i] == "--") ++i;
  d->text = part.text;
  if (i >= w.size()) {
    if (name == "pushd") return Move::kBack;  // swaps the two top directories
    d->known = false;                         // cd alone: $HOME
  } else {
    d->target = w[i];
    // pushd +N / -N rotates the stack.
    if (name == "pushd" && d->target.size() > 1 && (d->target[0] == '+' || d->target[0] == '-')) return Move::kBack;
    size_t index = part.written.size() - (w.size() - i);
    if (index < part.known.size() && !part.known[index]) d->known = false;
    if (d->target.empty() || d->target == "-" || d->target[0] == '~') d->known = false;
  }
  if (repeats) d->known = false;
  return Move::kTo;
}

// element_root: the command is a whole element of a top-level && chain, so
// what follows it in the chain runs only if it succeeded.
void AddCommand(Parse* p, TSNode cmd, const std::string& src, Context ctx, bool element_root, Directories* dirs) {
  CommandPart part;
  part.text = Text(cmd, src);
  part.directories = *dirs;
  for (TSNode c : Children(cmd)) {
    if (Is(c, "variable_assignment")) {
      // BASH_ENV and ENV make a shell run a file first.
      std::string assignment = Text(c, src);
      if (assignment.rfind("BASH_ENV=", 0) == 0 || assignment.rfind("ENV=", 0) == 0) {
        part.dynamic = true;
        part.why_dynamic = "BASH_ENV and ENV make a shell run a file first";
      }
      continue;
    }
    if (IsAny(c, {"file_redirect", "herestring_redirect", "heredoc_redirect"})) continue;
    TSNode word = c;
    if (Is(c, "command_name")) {
      if (ts_node_named_child_count(c) == 0) continue;
      word = ts_node_named_child(c, 0);
    }
    WordValue v = ReadWord(word, src);
    for (std::string& value : v.values) {
      part.written.push_back(std::move(value));
      part.known.push_back(v.known);
    }
  }
  if (part.written.empty()) return;
  ProgramChain chain = ReadProgramChain(part.written, part.known);
  part.programs = std::move(chain.programs);
  part.words = part.programs.back();
  part.operands = std::move(chain.operands);
  part.git_config = std::move(chain.git_config);
  part.inline_code = std::move(chain.inline_code);
  part.input_arguments = chain.input_arguments;
  if (!chain.dynamic.empty() && !part.dynamic) {
    part.dynamic = true;
    part.why_dynamic = chain.dynamic;
  }
  for (const std::string& e : chain.environment) {
    size_t eq = e.find('=');
    p->out->assignments.push_back({e.substr(0, eq), e.substr(eq + 1), true});
  }
  if (!chain.command_lines.empty() && ctx.shells >= kMaxNestedShells && !part.dynamic) {
    part.dynamic = true;
    part.why_dynamic = "command lines nest deeper than " + std::to_string(kMaxNestedShells) + " shells";
  }
  DirectoryChange change;
  Move move = part.dynamic ? Move::kNone : DirectoryChangeOf(part, ctx.repeats, &change);
  bool nested = !part.dynamic;
  if (ctx.function) p->anywhere.push_back(p->out->parts.size());
  p->out->parts.push_back(std::move(part));
  if (move == Move::kBack) {
    // popd: back to a place seen before, which one depends on the stack.
    for (const CommandPart& before : p->out->parts) Merge(before.directories, dirs);
    Cap(p->out, dirs);
  }
  if (move == Move::kTo) {
    p->out->directory_changes.push_back(change);
    if (change.known) {
      Directories moved = Moved(*dirs, change.target);
      if (element_root) {
        *dirs = moved;  // what follows in the && chain runs only after it succeeded
      } else {
        Merge(moved, dirs);  // it may have failed
        Cap(p->out, dirs);
      }
    }
  }
  if (!nested) return;
  Context inner = ctx;
  ++inner.shells;
  for (const std::string& line : chain.command_lines) {
    // A shell's cd ends with it, eval's does not: either way, where it led
    // is a place for what follows.
    Merge(Collect(p, line, inner, *dirs), dirs);
    Cap(p->out, dirs);
    if (p->out->unreadable != Unreadable::kNo) return;
  }
}

void AddAssignment(TSNode n, const std::string& src, ParsedCommand* out) {
  TSNode name = ts_node_child_by_field_name(n, "name", 4);
  TSNode value = ts_node_child_by_field_name(n, "value", 5);
  Assignment a;
  a.name = ts_node_is_null(name) ? "" : Text(name, src);
  if (!ts_node_is_null(value)) {
    Spelled s;
    a.known = Spell(value, src, &s);
    a.value = a.known ? s.value : Text(value, src);
  }
  out->assignments.push_back(a);
}

bool MayRunLater(const std::string& text) {
  return text.find("$(") != std::string::npos || text.find('`') != std::string::npos ||
         text.find("<(") != std::string::npos || text.find(">(") != std::string::npos;
}

// One element of a top-level && chain (or a whole statement), walked
// without recursion; *dirs follows its cd's.
void WalkElement(Parse* p, TSNode element, const std::string& src, Context ctx, Directories* dirs) {
  struct Item {
    TSNode node;
    int nesting;
    bool repeats;
    bool function;
  };
  // The command that is the element (`cd x 2>/dev/null && ...` too).
  TSNode root = element;
  TSNode body = ts_node_child_by_field_name(element, "body", 4);
  if (Is(element, "redirected_statement") && !ts_node_is_null(body)) root = body;
  std::vector<Item> stack = {{element, 0, ctx.repeats, ctx.function}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    TSNode n = it.node;
    int nesting = it.nesting + (Nests(n) ? 1 : 0);
    if (nesting > kMaxShellNesting) {
      p->out->unreadable = Unreadable::kTooDeep;
      return;
    }
    bool repeats = it.repeats || Repeats(n);
    bool function = it.function || Is(n, "function_definition");
    if (Is(n, "command")) {
      Context here = ctx;
      here.repeats = repeats;
      here.function = function;
      AddCommand(p, n, src, here, ts_node_eq(n, root), dirs);
      if (p->out->unreadable != Unreadable::kNo) return;
    } else if (Is(n, "variable_assignment")) {
      AddAssignment(n, src, p->out);
    } else if (Is(n, "file_redirect")) {
      TSNode target = ts_node_child_by_field_name(n, "destination", 11);
      std::optional<WordValue> v;
      if (!ts_node_is_null(target)) {
        v = ReadWord(target, src);
        if (v->known && v->values.size() == 1) p->out->redirects.push_back({v->values[0], *dirs});
      }
      if (RedirectMayWrite(n, v)) p->out->redirect_writes = true;
    }
    if (IsAny(n, {"raw_string", "ansi_c_string", "variable_assignment"})) {
      Spelled s;
      if (Spell(Is(n, "variable_assignment") ? ts_node_child_by_field_name(n, "value", 5) : n, src, &s) &&
          MayRunLater(s.value) &&
          std::find(p->out->literals.begin(), p->out->literals.end(), s.value) == p->out->literals.end()) {
        p->out->literals.push_back(s.value);
      }
    }
    // Every node below: the arguments' substitutions, bodies of loops,
    // functions and subshells. Pushed last to first, so parts come out in
    // source order.
    std::vector<TSNode> children = Children(n);
    for (auto c = children.rbegin(); c != children.rend(); ++c) stack.push_back({*c, nesting, repeats, function});
  }
}

// The elements of a && chain (a && b && c), or the statement itself.
std::vector<TSNode> AndChain(TSNode statement) {
  std::vector<TSNode> rights;
  TSNode n = statement;
  while (Is(n, "list") && ts_node_child_count(n) == 3 && strcmp(ts_node_type(ts_node_child(n, 1)), "&&") == 0) {
    rights.push_back(ts_node_child(n, 2));
    n = ts_node_child(n, 0);
  }
  std::vector<TSNode> out = {n};
  out.insert(out.end(), rights.rbegin(), rights.rend());
  return out;
}

// A program's statements in order, each from where the ones before may have
// left it; returns where it may end.
Directories Walk(Parse* p, TSNode root, const std::string& src, Context ctx, Directories dirs) {
  for (TSNode statement : Children(root)) {
    // tree-sitter reads `a && b > f` as (a && b) > f; in bash the
    // redirection is b's, so it is walked with b.
    std::vector<TSNode> redirects;
    TSNode body = ts_node_child_by_field_name(statement, "body", 4);
    if (Is(statement, "redirected_statement") && !ts_node_is_null(body) && Is(body, "list")) {
      for (TSNode c : Children(statement)) {
        if (!ts_node_eq(c, body)) redirects.push_back(c);
      }
      statement = body;
    }
    Directories after = dirs;  // a chain may stop at any element
    Directories current = dirs;
    for (TSNode element : AndChain(statement)) {
      WalkElement(p, element, src, ctx, &current);
      if (p->out->unreadable != Unreadable::kNo) return dirs;
      Merge(current, &after);
    }
    for (TSNode r : redirects) WalkElement(p, r, src, ctx, &current);
    dirs = after;
    Cap(p->out, &dirs);
  }
  return dirs;
}

// Backslash-newline joins lines outside single quotes, comments and
// here-documents; tree-sitter keeps it as a word break (r\<newline>m would
// read as `r m`), so it is removed before the command is read.
std::string JoinContinuations(TSNode root, const std::string& src) {
  std::vector<std::pair<uint32_t, uint32_t>> kept;  // byte ranges where it stays
  std::vector<TSNode> stack = {root};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (IsAny(n, {"raw_string", "ansi_c_string", "comment", "heredoc_body", "heredoc_content", "heredoc_start",
                  "heredoc_end", "simple_heredoc_body"})) {
      kept.push_back({ts_node_start_byte(n), ts_node_end_byte(n)});
      continue;
    }
    for (TSNode c : Children(n, /*named_only=*/false)) stack.push_back(c);
  }
  std::sort(kept.begin(), kept.end());
  auto is_kept = [&kept](size_t at) {
    // The last range starting at or before at (ranges do not overlap).
    auto it = std::upper_bound(kept.begin(), kept.end(), std::make_pair(static_cast<uint32_t>(at), UINT32_MAX));
    return it != kept.begin() && at < std::prev(it)->second;
  };
  std::string out;
  size_t backslashes = 0;  // consecutive ones before i
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\\' && i + 1 < src.size() && src[i + 1] == '\n' && backslashes % 2 == 0 && !is_kept(i)) {
      ++i;  // an escaping backslash before a newline: both go
      backslashes = 0;
      continue;
    }
    backslashes = src[i] == '\\' ? backslashes + 1 : 0;
    out += src[i];
  }
  return out;
}

// A parse within what is left of the time budget; null when it ran out.
TSTree* ParseWithin(Parse* p, const std::string& src) {
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(p->deadline - std::chrono::steady_clock::now());
  TSTree* tree = nullptr;
  if (left.count() > 0) {
    ts_parser_set_timeout_micros(p->parser, static_cast<uint64_t>(left.count()));
    tree = ts_parser_parse_string(p->parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
  }
  if (tree == nullptr) {
    ts_parser_reset(p->parser);  // the next parse starts afresh
    p->out->unreadable = Unreadable::kTooSlow;
  }
  return tree;
}

Directories Collect(Parse* p, const std::string& text, Context ctx, Directories start) {
  if (text.size() > kMaxReadableCommandBytes) {
    p->out->unreadable = Unreadable::kTooLong;
    return start;
  }
  std::string src = text;
  TSTree* tree = ParseWithin(p, src);
  if (tree == nullptr) return start;
  if (src.find("\\\n") != std::string::npos) {
    std::string joined = JoinContinuations(ts_tree_root_node(tree), src);
    if (joined != src) {
      ts_tree_delete(tree);
      src = std::move(joined);
      tree = ParseWithin(p, src);
      if (tree == nullptr) return start;
    }
  }
  TSNode root = ts_tree_root_node(tree);
  if (ts_node_has_error(root)) p->out->complete = false;
  Directories end = Walk(p, root, src, ctx, std::move(start));
  ts_tree_delete(tree);
  return end;
}

}  // namespace

StatusOr<ParsedCommand> ParseCommand(const std::string& command) {
  if (command.size() > kMaxParsedCommandBytes) {
    return Status::InvalidArgument("command",
                                   "longer than " + std::to_string(kMaxParsedCommandBytes) + " characters: not parsed");
  }
  return ParseCommandUnchecked(command);
}

ParsedCommand ParseCommandUnchecked(const std::string& command, std::chrono::microseconds time_budget) {
  ParsedCommand out;
  Parse p{ts_parser_new(), &out, std::chrono::steady_clock::now() + time_budget, {}};
  ts_parser_set_language(p.parser, tree_sitter_bash());
  Collect(&p, command, Context{}, {""});
  ts_parser_delete(p.parser);
  // A function's body runs where it is called: anywhere a cd led.
  Directories everywhere;
  for (const CommandPart& part : out.parts) Merge(part.directories, &everywhere);
  for (size_t i : p.anywhere) out.parts[i].directories = everywhere;
  if (out.unreadable != Unreadable::kNo) {
    ParsedCommand refused;
    refused.unreadable = out.unreadable;
    refused.complete = out.complete;
    return refused;
  }
  return out;
}

}  // namespace odin
