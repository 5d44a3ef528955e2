#include "index/symbols.h"

#include "base/sha256.h"

namespace odin::index {

const char* LanguageName(Language language) {
  switch (language) {
    case Language::kNone: return "none";
    case Language::kC: return "c";
    case Language::kCpp: return "cpp";
    case Language::kPython: return "python";
    case Language::kJavaScript: return "javascript";
    case Language::kTypeScript: return "typescript";
    case Language::kTsx: return "tsx";
    case Language::kGo: return "go";
    case Language::kRust: return "rust";
  }
  return "none";
}

Language ParseLanguage(std::string_view name) {
  for (Language l : {Language::kC, Language::kCpp, Language::kPython, Language::kJavaScript, Language::kTypeScript,
                     Language::kTsx, Language::kGo, Language::kRust}) {
    if (name == LanguageName(l)) return l;
  }
  return Language::kNone;
}

Language LanguageForPath(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return Language::kNone;
  std::string_view ext = base.substr(dot + 1);
  if (ext == "c") return Language::kC;
  if (ext == "h" || ext == "cc" || ext == "cpp" || ext == "cxx" || ext == "hh" || ext == "hpp" || ext == "hxx" ||
      ext == "C" || ext == "ipp" || ext == "inl")
    return Language::kCpp;
  if (ext == "py" || ext == "pyi") return Language::kPython;
  if (ext == "js" || ext == "mjs" || ext == "cjs" || ext == "jsx") return Language::kJavaScript;
  if (ext == "ts" || ext == "mts" || ext == "cts") return Language::kTypeScript;
  if (ext == "tsx") return Language::kTsx;
  if (ext == "go") return Language::kGo;
  if (ext == "rs") return Language::kRust;
  return Language::kNone;
}

const char* SymbolKindName(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kFunction: return "function";
    case SymbolKind::kMethod: return "method";
    case SymbolKind::kClass: return "class";
    case SymbolKind::kEnum: return "enum";
    case SymbolKind::kInterface: return "interface";
    case SymbolKind::kModule: return "module";
    case SymbolKind::kConstant: return "constant";
    case SymbolKind::kType: return "type";
    case SymbolKind::kVariable: return "variable";
  }
  return "function";
}

bool ParseSymbolKind(std::string_view name, SymbolKind* kind) {
  for (SymbolKind k :
       {SymbolKind::kFunction, SymbolKind::kMethod, SymbolKind::kClass, SymbolKind::kEnum, SymbolKind::kInterface,
        SymbolKind::kModule, SymbolKind::kConstant, SymbolKind::kType, SymbolKind::kVariable}) {
    if (name == SymbolKindName(k)) {
      *kind = k;
      return true;
    }
  }
  if (name == "struct")
    *kind = SymbolKind::kClass;
  else if (name == "trait")
    *kind = SymbolKind::kInterface;
  else if (name == "namespace")
    *kind = SymbolKind::kModule;
  else
    return false;
  return true;
}

std::string SymbolId(Language language, std::string_view path, SymbolKind kind, std::string_view qualified_name,
                     uint32_t disambiguator) {
  Sha256 h;
  std::string d = std::to_string(disambiguator);
  for (std::string_view part : {std::string_view(LanguageName(language)), path, std::string_view(SymbolKindName(kind)),
                                qualified_name, std::string_view(d)}) {
    h.Update(part);
    h.Update(std::string_view("\0", 1));
  }
  return "sym_" + HexDigest(h.Finish()).substr(0, 16);
}

}  // namespace odin::index
