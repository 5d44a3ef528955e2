#pragma once
// What the symbol index knows of one source file: its symbols (definitions,
// with spans) and the names it refers to. Plain data: the parser
// (extract.cc) fills it in a read-only worker, the proto carries it, and the
// coordinator writes it to .odin/index.db (index_db.cc).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace odin::index {

// The languages the index parses. Header files (.h) are read as C++, which
// parses C headers as well.
enum class Language { kNone, kC, kCpp, kPython, kJavaScript, kTypeScript, kTsx, kGo, kRust };

// "c", "cpp", "python", "javascript", "typescript", "tsx", "go", "rust".
const char* LanguageName(Language language);
Language ParseLanguage(std::string_view name);
// The language of a file, by its name's extension; kNone when unknown.
Language LanguageForPath(std::string_view path);

// The normalised kinds (issue 20): what the model asks for.
enum class SymbolKind { kFunction, kMethod, kClass, kEnum, kInterface, kModule, kConstant, kType, kVariable };
// "function", "method", "class", "enum", "interface", "module", "constant",
// "type", "variable".
const char* SymbolKindName(SymbolKind kind);
// Also accepts "struct" (class), "trait" (interface), "namespace" (module).
bool ParseSymbolKind(std::string_view name, SymbolKind* kind);

struct Symbol {
  SymbolKind kind = SymbolKind::kFunction;
  std::string name;            // as written, e.g. "bar"
  std::string qualified_name;  // with its containers, e.g. "ns::Foo::bar"
  uint32_t start_byte = 0, end_byte = 0;
  uint32_t start_line = 0, end_line = 0;  // 1-based, inclusive
  int32_t parent = -1;                    // the containing symbol, an index into FileSymbols::symbols
  // 0 for the first symbol of this kind and qualified name in the file, 1
  // for the next (an overload, a redefinition), and so on.
  uint32_t disambiguator = 0;
};

// A name used in the file, once per (enclosing symbol, name): the lines it
// appears on (the first few) and whether it is called.
struct Reference {
  std::string name;
  int32_t from = -1;  // the innermost enclosing symbol; -1 at file level
  bool call = false;
  uint32_t count = 0;
  std::vector<uint32_t> lines;  // 1-based, ascending, at most kMaxReferenceLines
};
constexpr size_t kMaxReferenceLines = 16;

struct FileSymbols {
  Language language = Language::kNone;
  std::vector<Symbol> symbols;
  std::vector<Reference> references;
  uint32_t lines = 0;
  // The parser met syntax errors: the symbols are what it recovered.
  bool has_errors = false;
};

// Files larger than this are not indexed (generated code, data).
constexpr uint64_t kMaxIndexedFileBytes = 2u << 20;

// The stable id of a symbol: a hash of language, path (relative to the
// workspace), kind, qualified name and disambiguator, never of its span, so
// it survives edits elsewhere in the file. "sym_" and 16 hex digits.
std::string SymbolId(Language language, std::string_view path, SymbolKind kind, std::string_view qualified_name,
                     uint32_t disambiguator);

}  // namespace odin::index
