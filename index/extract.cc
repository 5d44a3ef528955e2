// Long file: one walk over the syntax tree, and the table of what each
// language's node types mean to the index (definitions, containers, names,
// calls), which is read best in one place.
#include "index/extract.h"

#include <tree_sitter/api.h>

#include <array>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

extern "C" {
const TSLanguage* tree_sitter_c();
const TSLanguage* tree_sitter_cpp();
const TSLanguage* tree_sitter_python();
const TSLanguage* tree_sitter_javascript();
const TSLanguage* tree_sitter_typescript();
const TSLanguage* tree_sitter_tsx();
const TSLanguage* tree_sitter_go();
const TSLanguage* tree_sitter_rust();
}

namespace odin::index {
namespace {

// What a node type means.
enum class Act : uint8_t {
  kNone,
  kDef,           // a definition; its name is the "name" field
  kCFunction,     // C/C++ function_definition: the name is at the end of the declarator chain
  kCDeclaration,  // C/C++ declaration/field_declaration: prototypes (and file-level variables)
  kCTypedef,      // C/C++ type_definition
  kCRecord,       // struct/union/class/enum specifier: a definition only with a body
  kNamespace,     // C++ namespace_definition (may be anonymous)
  kAssign,        // Python assignment at module or class level
  kJsVar,         // JS/TS variable_declarator at module level
  kGoType,        // Go type_spec
  kGoMethod,      // Go method_declaration
  kGoConst,       // Go const_spec / var_spec at package level
  kRustImpl,      // Rust impl_item: a container, not a symbol
  kIdent,         // a name used
  kCall,          // a call: its callee is called
};

struct Rule {
  Act act = Act::kNone;
  SymbolKind kind = SymbolKind::kFunction;
  bool method_in_class = false;  // a function inside a class is a method
  bool is_class = false;         // its children are members
  const char* callee_field = "function";
};

struct NamedRule {
  const char* type;
  Rule rule;
};

constexpr Rule Def(SymbolKind kind, bool method_in_class = false) { return {Act::kDef, kind, method_in_class}; }
constexpr Rule ClassDef(SymbolKind kind) { return {Act::kDef, kind, false, true}; }
constexpr Rule Special(Act act, SymbolKind kind = SymbolKind::kFunction) { return {act, kind}; }
constexpr Rule Ident() { return {Act::kIdent}; }
constexpr Rule Call(const char* field = "function") { return {Act::kCall, SymbolKind::kFunction, false, false, field}; }

// Names used, in every language.
constexpr NamedRule kIdentRules[] = {
    {"identifier", Ident()},           {"type_identifier", Ident()},
    {"field_identifier", Ident()},     {"property_identifier", Ident()},
    {"namespace_identifier", Ident()}, {"shorthand_property_identifier", Ident()},
    {"package_identifier", Ident()},   {"private_property_identifier", Ident()},
};

constexpr NamedRule kCRules[] = {
    {"function_definition", Special(Act::kCFunction)},
    {"declaration", Special(Act::kCDeclaration)},
    {"field_declaration", Special(Act::kCDeclaration)},
    {"type_definition", Special(Act::kCTypedef, SymbolKind::kType)},
    {"struct_specifier", {Act::kCRecord, SymbolKind::kClass, false, true}},
    {"union_specifier", {Act::kCRecord, SymbolKind::kClass, false, true}},
    {"class_specifier", {Act::kCRecord, SymbolKind::kClass, false, true}},
    {"enum_specifier", {Act::kCRecord, SymbolKind::kEnum}},
    {"enumerator", Def(SymbolKind::kConstant)},
    {"preproc_def", Def(SymbolKind::kConstant)},
    {"preproc_function_def", Def(SymbolKind::kFunction)},
    {"namespace_definition", Special(Act::kNamespace, SymbolKind::kModule)},
    {"alias_declaration", Def(SymbolKind::kType)},
    {"concept_definition", Def(SymbolKind::kType)},
    {"call_expression", Call()},
    {"new_expression", Call("type")},
};

constexpr NamedRule kPythonRules[] = {
    {"function_definition", Def(SymbolKind::kFunction, true)},
    {"class_definition", ClassDef(SymbolKind::kClass)},
    {"assignment", Special(Act::kAssign, SymbolKind::kVariable)},
    {"call", Call()},
};

constexpr NamedRule kJsRules[] = {
    {"function_declaration", Def(SymbolKind::kFunction, true)},
    {"generator_function_declaration", Def(SymbolKind::kFunction, true)},
    {"class_declaration", ClassDef(SymbolKind::kClass)},
    {"abstract_class_declaration", ClassDef(SymbolKind::kClass)},
    {"method_definition", Def(SymbolKind::kMethod)},
    {"method_signature", Def(SymbolKind::kMethod)},
    {"abstract_method_signature", Def(SymbolKind::kMethod)},
    {"function_signature", Def(SymbolKind::kFunction)},
    {"interface_declaration", ClassDef(SymbolKind::kInterface)},
    {"type_alias_declaration", Def(SymbolKind::kType)},
    {"enum_declaration", Def(SymbolKind::kEnum)},
    {"internal_module", Def(SymbolKind::kModule)},
    {"module", Def(SymbolKind::kModule)},
    {"variable_declarator", Special(Act::kJsVar, SymbolKind::kVariable)},
    {"call_expression", Call()},
    {"new_expression", Call("constructor")},
};

constexpr NamedRule kGoRules[] = {
    {"function_declaration", Def(SymbolKind::kFunction)},
    {"method_declaration", Special(Act::kGoMethod, SymbolKind::kMethod)},
    {"type_spec", Special(Act::kGoType, SymbolKind::kType)},
    {"type_alias", Special(Act::kGoType, SymbolKind::kType)},
    {"const_spec", Special(Act::kGoConst, SymbolKind::kConstant)},
    {"var_spec", Special(Act::kGoConst, SymbolKind::kVariable)},
    {"method_elem", Def(SymbolKind::kMethod)},
    {"call_expression", Call()},
};

constexpr NamedRule kRustRules[] = {
    {"function_item", Def(SymbolKind::kFunction, true)},
    {"function_signature_item", Def(SymbolKind::kFunction, true)},
    {"struct_item", Def(SymbolKind::kClass)},
    {"union_item", Def(SymbolKind::kClass)},
    {"enum_item", Def(SymbolKind::kEnum)},
    {"trait_item", ClassDef(SymbolKind::kInterface)},
    {"mod_item", Def(SymbolKind::kModule)},
    {"const_item", Def(SymbolKind::kConstant)},
    {"static_item", Def(SymbolKind::kVariable)},
    {"type_item", Def(SymbolKind::kType)},
    {"macro_definition", Def(SymbolKind::kFunction)},
    {"impl_item", {Act::kRustImpl, SymbolKind::kClass, false, true}},
    {"call_expression", Call()},
    {"macro_invocation", Call("macro")},
};

template <size_t N>
void AddRules(std::unordered_map<std::string_view, Rule>* out, const NamedRule (&rules)[N]) {
  for (const NamedRule& r : rules) (*out)[r.type] = r.rule;
}

// Everything one language needs, built once.
struct Grammar {
  const TSLanguage* language = nullptr;
  std::vector<Rule> rules;  // by TSSymbol
  TSFieldId name = 0, declarator = 0, body = 0, type = 0, value = 0, left = 0, receiver = 0;
  TSFieldId field = 0, property = 0, attribute = 0, function = 0, scope = 0;
  const char* separator = ".";
};

TSFieldId Field(const TSLanguage* l, const char* name) {
  return ts_language_field_id_for_name(l, name, static_cast<uint32_t>(strlen(name)));
}

Grammar MakeGrammar(Language language) {
  Grammar g;
  std::unordered_map<std::string_view, Rule> table;
  AddRules(&table, kIdentRules);
  switch (language) {
    case Language::kC:
      g.language = tree_sitter_c();
      AddRules(&table, kCRules);
      g.separator = "::";
      break;
    case Language::kCpp:
      g.language = tree_sitter_cpp();
      AddRules(&table, kCRules);
      g.separator = "::";
      break;
    case Language::kPython:
      g.language = tree_sitter_python();
      AddRules(&table, kPythonRules);
      break;
    case Language::kJavaScript:
      g.language = tree_sitter_javascript();
      AddRules(&table, kJsRules);
      break;
    case Language::kTypeScript:
      g.language = tree_sitter_typescript();
      AddRules(&table, kJsRules);
      break;
    case Language::kTsx:
      g.language = tree_sitter_tsx();
      AddRules(&table, kJsRules);
      break;
    case Language::kGo:
      g.language = tree_sitter_go();
      AddRules(&table, kGoRules);
      break;
    case Language::kRust:
      g.language = tree_sitter_rust();
      AddRules(&table, kRustRules);
      g.separator = "::";
      break;
    case Language::kNone: return g;
  }
  const TSLanguage* l = g.language;
  uint32_t count = ts_language_symbol_count(l);
  g.rules.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    TSSymbol s = static_cast<TSSymbol>(i);
    if (ts_language_symbol_type(l, s) != TSSymbolTypeRegular) continue;
    auto it = table.find(ts_language_symbol_name(l, s));
    if (it != table.end()) g.rules[i] = it->second;
  }
  g.name = Field(l, "name");
  g.declarator = Field(l, "declarator");
  g.body = Field(l, "body");
  g.type = Field(l, "type");
  g.value = Field(l, "value");
  g.left = Field(l, "left");
  g.receiver = Field(l, "receiver");
  g.field = Field(l, "field");
  g.property = Field(l, "property");
  g.attribute = Field(l, "attribute");
  g.function = Field(l, "function");
  g.scope = Field(l, "scope");
  return g;
}

bool IsUpperName(std::string_view name) {
  bool letter = false;
  for (char ch : name) {
    if (ch >= 'a' && ch <= 'z') return false;
    if (ch >= 'A' && ch <= 'Z') letter = true;
  }
  return letter;
}

// A name as written, without template or generic arguments and spaces:
// "Foo<T>::bar" -> "Foo::bar".
std::string CleanName(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  int angle = 0, square = 0;
  for (char ch : text) {
    if (ch == '<')
      ++angle;
    else if (ch == '>' && angle > 0)
      --angle;
    else if (ch == '[')
      ++square;
    else if (ch == ']' && square > 0)
      --square;
    else if (angle == 0 && square == 0 && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '&' &&
             ch != '*' && ch != '(' && ch != ')')
      out.push_back(ch);
  }
  return out;
}

// One walk over one tree.
class Walk {
 public:
  Walk(const Grammar& g, std::string_view src, FileSymbols* out) : g_(g), src_(src), out_(out) {}

  void Run(TSNode root) {
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    uint32_t depth = 0;
    for (;;) {
      TSNode node = ts_tree_cursor_current_node(&cursor);
      bool descend = Visit(node, depth);
      if (descend && ts_tree_cursor_goto_first_child(&cursor)) {
        ++depth;
        continue;
      }
      // Up until a next sibling; containers end where their node ends.
      for (;;) {
        if (ts_tree_cursor_goto_next_sibling(&cursor)) {
          PopTo(depth);
          break;
        }
        if (!ts_tree_cursor_goto_parent(&cursor)) {
          ts_tree_cursor_delete(&cursor);
          return;
        }
        --depth;
        PopTo(depth);
      }
    }
  }

 private:
  struct Frame {
    uint32_t depth;     // the container node's depth: its frame covers what lies deeper
    int32_t symbol;     // the enclosing symbol for what lies inside
    std::string scope;  // the qualified name prefix
    bool in_class;
    bool in_function;
  };

  void PopTo(uint32_t depth) {
    // A frame opened at depth d covers nodes deeper than d; at a sibling
    // (depth d again) or above, it is closed.
    while (!frames_.empty() && frames_.back().depth >= depth) frames_.pop_back();
  }

  std::string_view Text(TSNode n) const {
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (a > src_.size() || b > src_.size() || b < a) return {};
    return src_.substr(a, b - a);
  }

  int32_t Enclosing() const { return frames_.empty() ? -1 : frames_.back().symbol; }
  bool InClass() const { return !frames_.empty() && frames_.back().in_class; }
  bool InFunction() const { return !frames_.empty() && frames_.back().in_function; }
  const std::string& Scope() const {
    static const std::string kEmpty;
    return frames_.empty() ? kEmpty : frames_.back().scope;
  }

  std::string Qualify(std::string_view name) const {
    const std::string& scope = Scope();
    if (scope.empty()) return std::string(name);
    std::string q = scope;
    q += g_.separator;
    q += name;
    return q;
  }

  // Adds a symbol for node, named by name_node, and opens its frame.
  int32_t AddSymbol(TSNode node, TSNode name_node, SymbolKind kind, std::string qualified, uint32_t depth,
                    bool is_class) {
    std::string name = qualified;
    size_t cut = name.rfind(g_.separator);
    if (cut != std::string::npos) name = name.substr(cut + strlen(g_.separator));
    if (name.empty()) return -1;
    if (!ts_node_is_null(name_node)) names_.insert(ts_node_start_byte(name_node));
    Symbol s;
    s.kind = kind;
    s.name = std::move(name);
    s.qualified_name = std::move(qualified);
    s.start_byte = ts_node_start_byte(node);
    s.end_byte = ts_node_end_byte(node);
    s.start_line = ts_node_start_point(node).row + 1;
    s.end_line = ts_node_end_point(node).row + 1;
    s.parent = Enclosing();
    s.disambiguator = seen_[std::string(SymbolKindName(kind)) + '\0' + s.qualified_name]++;
    int32_t index = static_cast<int32_t>(out_->symbols.size());
    std::string scope = s.qualified_name;
    out_->symbols.push_back(std::move(s));
    bool function = kind == SymbolKind::kFunction || kind == SymbolKind::kMethod;
    frames_.push_back({depth, index, std::move(scope), is_class, function});
    return index;
  }

  void AddReference(std::string_view name, bool call, TSNode at) {
    if (name.empty() || name.size() > 256) return;
    int32_t from = Enclosing();
    key_.assign(reinterpret_cast<const char*>(&from), sizeof from);
    key_.append(name);
    auto [it, fresh] = refs_.try_emplace(key_, out_->references.size());
    if (fresh) {
      Reference r;
      r.name = std::string(name);
      r.from = from;
      out_->references.push_back(std::move(r));
    }
    Reference& r = out_->references[it->second];
    r.call = r.call || call;
    ++r.count;
    uint32_t line = ts_node_start_point(at).row + 1;
    if (r.lines.size() < kMaxReferenceLines && (r.lines.empty() || r.lines.back() != line)) r.lines.push_back(line);
  }

  // The children of node in field (tree-sitter 0.20's
  // ts_node_field_name_for_child miscounts; the cursor does not).
  std::vector<TSNode> FieldChildren(TSNode node, TSFieldId field) const {
    std::vector<TSNode> out;
    TSTreeCursor c = ts_tree_cursor_new(node);
    if (ts_tree_cursor_goto_first_child(&c)) {
      do {
        if (ts_tree_cursor_current_field_id(&c) == field) out.push_back(ts_tree_cursor_current_node(&c));
      } while (ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
    return out;
  }

  // The name at the end of a C/C++ declarator chain, and whether a
  // function declarator was on the way.
  TSNode DeclaratorName(TSNode n, bool* function) const {
    for (int i = 0; i < 32 && !ts_node_is_null(n); ++i) {
      const char* type = ts_node_type(n);
      if (strcmp(type, "function_declarator") == 0) *function = true;
      TSNode next = ts_node_child_by_field_id(n, g_.declarator);
      if (ts_node_is_null(next)) {
        // init_declarator etc. end here; a parenthesized_declarator has no field.
        if (strcmp(type, "parenthesized_declarator") == 0 && ts_node_named_child_count(n) > 0) {
          n = ts_node_named_child(n, 0);
          continue;
        }
        return n;
      }
      n = next;
    }
    return n;
  }

  // The rightmost name of a callee: f, obj.f, a::b::f, f<T>.
  std::string_view CalleeName(TSNode n) const {
    for (int i = 0; i < 8 && !ts_node_is_null(n); ++i) {
      if (ts_node_named_child_count(n) == 0) return Text(n);
      TSNode next = ts_node_child_by_field_id(n, g_.name);
      if (ts_node_is_null(next)) next = ts_node_child_by_field_id(n, g_.field);
      if (ts_node_is_null(next)) next = ts_node_child_by_field_id(n, g_.property);
      if (ts_node_is_null(next)) next = ts_node_child_by_field_id(n, g_.attribute);
      if (ts_node_is_null(next)) next = ts_node_child_by_field_id(n, g_.function);
      if (ts_node_is_null(next)) return {};
      n = next;
    }
    return {};
  }

  // Returns whether to walk into node's children.
  bool Visit(TSNode node, uint32_t depth) {
    TSSymbol sym = ts_node_symbol(node);
    if (sym >= g_.rules.size()) return true;
    const Rule& rule = g_.rules[sym];
    switch (rule.act) {
      case Act::kNone: return true;
      case Act::kIdent:
        if (!names_.count(ts_node_start_byte(node))) AddReference(Text(node), false, node);
        return false;
      case Act::kCall: {
        TSNode callee =
            ts_node_child_by_field_name(node, rule.callee_field, static_cast<uint32_t>(strlen(rule.callee_field)));
        std::string_view name = CalleeName(callee);
        if (!name.empty()) AddReference(name, true, node);
        return true;
      }
      case Act::kDef: {
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name)) return true;
        SymbolKind kind = rule.kind;
        if (rule.method_in_class && InClass()) kind = SymbolKind::kMethod;
        AddSymbol(node, name, kind, Qualify(CleanName(Text(name))), depth, rule.is_class);
        return true;
      }
      case Act::kCFunction: {
        bool function = false;
        TSNode name = DeclaratorName(ts_node_child_by_field_id(node, g_.declarator), &function);
        if (ts_node_is_null(name)) return true;
        std::string written = CleanName(Text(name));
        SymbolKind kind =
            InClass() || written.find("::") != std::string::npos ? SymbolKind::kMethod : SymbolKind::kFunction;
        AddSymbol(node, name, kind, Qualify(written), depth, false);
        return true;
      }
      case Act::kCDeclaration: {
        if (InFunction()) return true;
        bool field = strcmp(ts_node_type(node), "field_declaration") == 0;
        for (TSNode declarator : FieldChildren(node, g_.declarator)) {
          bool function = false;
          TSNode name = DeclaratorName(declarator, &function);
          if (ts_node_is_null(name) || (!function && field)) continue;
          std::string written = CleanName(Text(name));
          SymbolKind kind = function ? (InClass() || written.find("::") != std::string::npos ? SymbolKind::kMethod
                                                                                             : SymbolKind::kFunction)
                                     : SymbolKind::kVariable;
          size_t opened = frames_.size();
          AddSymbol(node, name, kind, Qualify(written), depth, false);
          frames_.resize(opened);  // a declaration contains nothing
        }
        return true;
      }
      case Act::kCTypedef: {
        for (TSNode declarator : FieldChildren(node, g_.declarator)) {
          bool function = false;
          TSNode name = DeclaratorName(declarator, &function);
          if (ts_node_is_null(name)) continue;
          size_t opened = frames_.size();
          AddSymbol(node, name, SymbolKind::kType, Qualify(CleanName(Text(name))), depth, false);
          frames_.resize(opened);
        }
        return true;
      }
      case Act::kCRecord: {
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name) || ts_node_is_null(ts_node_child_by_field_id(node, g_.body))) return true;
        std::string scope = Scope();
        // "enum class E" / "enum struct E": the enumerators are E's.
        TSNode second = ts_node_child(node, 1);
        bool scoped = rule.kind != SymbolKind::kEnum ||
                      (!ts_node_is_null(second) && !ts_node_is_named(second) &&
                       (strcmp(ts_node_type(second), "class") == 0 || strcmp(ts_node_type(second), "struct") == 0));
        if (AddSymbol(node, name, rule.kind, Qualify(CleanName(Text(name))), depth, rule.is_class) >= 0 && !scoped) {
          // A plain enum's enumerators live in the enclosing scope.
          frames_.back().scope = scope;
        }
        return true;
      }
      case Act::kNamespace: {
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name)) {
          // An anonymous namespace: its members keep the enclosing scope.
          return true;
        }
        AddSymbol(node, name, SymbolKind::kModule, Qualify(CleanName(Text(name))), depth, false);
        return true;
      }
      case Act::kAssign: {
        if (InFunction()) return true;
        TSNode left = ts_node_child_by_field_id(node, g_.left);
        if (ts_node_is_null(left) || strcmp(ts_node_type(left), "identifier") != 0) return true;
        std::string_view name = Text(left);
        size_t opened = frames_.size();
        AddSymbol(node, left, IsUpperName(name) ? SymbolKind::kConstant : SymbolKind::kVariable, Qualify(name), depth,
                  false);
        frames_.resize(opened);
        return true;
      }
      case Act::kJsVar: {
        if (InFunction()) return true;
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name) || strcmp(ts_node_type(name), "identifier") != 0) return true;
        TSNode value = ts_node_child_by_field_id(node, g_.value);
        const char* vt = ts_node_is_null(value) ? "" : ts_node_type(value);
        SymbolKind kind = IsUpperName(Text(name)) ? SymbolKind::kConstant : SymbolKind::kVariable;
        bool scope = false;
        if (strcmp(vt, "arrow_function") == 0 || strcmp(vt, "function_expression") == 0 ||
            strcmp(vt, "function") == 0 || strcmp(vt, "generator_function") == 0) {
          kind = SymbolKind::kFunction;
          scope = true;
        } else if (strcmp(vt, "class") == 0) {
          kind = SymbolKind::kClass;
          scope = true;
        }
        size_t opened = frames_.size();
        AddSymbol(node, name, kind, Qualify(Text(name)), depth, kind == SymbolKind::kClass);
        if (!scope) frames_.resize(opened);
        return true;
      }
      case Act::kGoType: {
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name)) return true;
        TSNode type = ts_node_child_by_field_id(node, g_.type);
        const char* tt = ts_node_is_null(type) ? "" : ts_node_type(type);
        SymbolKind kind = strcmp(tt, "struct_type") == 0      ? SymbolKind::kClass
                          : strcmp(tt, "interface_type") == 0 ? SymbolKind::kInterface
                                                              : SymbolKind::kType;
        AddSymbol(node, name, kind, Qualify(Text(name)), depth, kind != SymbolKind::kType);
        return true;
      }
      case Act::kGoMethod: {
        TSNode name = ts_node_child_by_field_id(node, g_.name);
        if (ts_node_is_null(name)) return true;
        // The receiver's type: "(s *Server[T])" -> "Server", the last word
        // outside brackets.
        std::string type, word;
        int square = 0;
        for (char ch : Text(ts_node_child_by_field_id(node, g_.receiver))) {
          if (ch == '[') ++square;
          if (ch == ']' && square > 0) --square;
          if (square == 0 && (isalnum(static_cast<unsigned char>(ch)) || ch == '_')) {
            word.push_back(ch);
          } else if (!word.empty()) {
            type = std::move(word);
            word.clear();
          }
        }
        std::string q = type.empty() ? std::string(Text(name)) : type + "." + std::string(Text(name));
        AddSymbol(node, name, SymbolKind::kMethod, Qualify(q), depth, false);
        return true;
      }
      case Act::kGoConst: {
        if (InFunction()) return true;
        for (TSNode name : FieldChildren(node, g_.name)) {
          size_t opened = frames_.size();
          AddSymbol(node, name, rule.kind, Qualify(Text(name)), depth, false);
          frames_.resize(opened);
        }
        return true;
      }
      case Act::kRustImpl: {
        TSNode type = ts_node_child_by_field_id(node, g_.type);
        std::string scope = ts_node_is_null(type) ? "" : CleanName(Text(type));
        if (scope.empty()) return true;
        frames_.push_back({depth, Enclosing(), Qualify(scope), true, false});
        return true;
      }
    }
    return true;
  }

  const Grammar& g_;
  std::string_view src_;
  FileSymbols* out_;
  std::vector<Frame> frames_;
  std::unordered_set<uint32_t> names_;  // start bytes of definitions' names
  std::unordered_map<std::string, uint32_t> seen_;
  std::unordered_map<std::string, size_t> refs_;
  std::string key_;
};

uint32_t CountLines(std::string_view s) {
  if (s.empty()) return 0;
  uint32_t lines = 0;
  const char* p = s.data();
  const char* end = p + s.size();
  while ((p = static_cast<const char*>(memchr(p, '\n', static_cast<size_t>(end - p)))) != nullptr) {
    ++lines;
    ++p;
  }
  return s.back() == '\n' ? lines : lines + 1;
}

}  // namespace

struct Extractor::Impl {
  TSParser* parser = ts_parser_new();
  std::array<std::unique_ptr<Grammar>, 9> grammars;
  ~Impl() { ts_parser_delete(parser); }
};

Extractor::Extractor() : impl_(std::make_unique<Impl>()) {}
Extractor::~Extractor() = default;

FileSymbols Extractor::Extract(Language language, std::string_view content) {
  FileSymbols out;
  out.language = language;
  out.lines = CountLines(content);
  if (language == Language::kNone || content.size() > UINT32_MAX) return out;
  std::unique_ptr<Grammar>& g = impl_->grammars[static_cast<size_t>(language)];
  if (!g) g = std::make_unique<Grammar>(MakeGrammar(language));
  if (!ts_parser_set_language(impl_->parser, g->language)) return out;
  TSTree* tree = ts_parser_parse_string(impl_->parser, nullptr, content.data(), static_cast<uint32_t>(content.size()));
  if (tree == nullptr) {
    out.has_errors = true;
    return out;
  }
  TSNode root = ts_tree_root_node(tree);
  out.has_errors = ts_node_has_error(root);
  Walk(*g, content, &out).Run(root);
  ts_tree_delete(tree);
  return out;
}

}  // namespace odin::index
