#include "index/index_query.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/sha256.h"

namespace odin::index {
namespace {

using nlohmann::json;

constexpr size_t kMaxLimit = 200;

json SymbolJson(const SymbolRow& s) {
  json j = {{"id", s.id},     {"kind", SymbolKindName(s.kind)},
            {"name", s.name}, {"qualified_name", s.qualified_name},
            {"path", s.path}, {"lines", std::to_string(s.start_line) + "-" + std::to_string(s.end_line)}};
  if (s.file_has_errors) j["file_has_syntax_errors"] = true;
  return j;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool LooksLikeTest(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  return path.find("test/") != std::string::npos || path.find("tests/") != std::string::npos ||
         path.find("__tests__/") != std::string::npos || base.rfind("test_", 0) == 0 ||
         base.find("_test.") != std::string::npos || base.find(".test.") != std::string::npos ||
         base.find(".spec.") != std::string::npos || base.find("_spec.") != std::string::npos;
}

StatusOr<json> ParseArgs(std::string_view tool, const json& arguments_json, const std::set<std::string>& allowed) {
  if (!arguments_json.is_object()) {
    return Status::InvalidArgument(std::string(tool), "arguments must be a JSON object");
  }
  const json& args = arguments_json;
  for (const auto& [key, value] : args.items()) {
    if (!allowed.count(key)) return Status::InvalidArgument(std::string(tool), "unknown argument \"" + key + "\"");
  }
  return args;
}

StatusOr<std::string> StringArg(std::string_view tool, const json& args, const char* key, bool required) {
  if (!args.contains(key)) {
    if (required) return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" is required");
    return std::string();
  }
  if (!args[key].is_string())
    return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" must be a string");
  std::string v = args[key].get<std::string>();
  if (v.size() > 4096)
    return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" is over 4096 bytes");
  if (required && v.empty()) return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" is empty");
  return v;
}

StatusOr<size_t> IntArg(std::string_view tool, const json& args, const char* key, size_t fallback, size_t min,
                        size_t max) {
  if (!args.contains(key)) return fallback;
  if (!args[key].is_number_integer()) {
    return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" must be an integer");
  }
  int64_t v = args[key].get<int64_t>();
  if (v < static_cast<int64_t>(min) || v > static_cast<int64_t>(max)) {
    return Status::InvalidArgument(std::string(tool), std::string("\"") + key + "\" must be between " +
                                                          std::to_string(min) + " and " + std::to_string(max));
  }
  return static_cast<size_t>(v);
}

// A workspace-relative path as the model may give it ("./src/a.c").
std::string NormalPath(std::string p) {
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Files read once per answer, for checksums.
class Files {
 public:
  Files(IndexDb* db, const ReadWorkspaceFile& read) : db_(db), read_(read) {}
  // The file's content, when it is still what the index parsed.
  const std::string* Content(const std::string& path) {
    auto it = cache_.find(path);
    if (it != cache_.end()) return it->second ? &*it->second : nullptr;
    std::optional<std::string> content;
    StatusOr<std::optional<FileRecord>> rec = db_->File(path);
    StatusOr<std::string> bytes = read_(path);
    if (rec.ok() && *rec && bytes.ok() && Sha256Hex(*bytes) == (*rec)->sha256) content = std::move(*bytes);
    auto& slot = cache_[path] = std::move(content);
    return slot ? &*slot : nullptr;
  }
  // Adds span_sha256 and file_sha256 to j, or "stale" when the file changed.
  void AddChecksums(const SymbolRow& s, json* j) {
    const std::string* content = Content(s.path);
    if (content == nullptr || s.end_byte > content->size() || s.start_byte > s.end_byte) {
      (*j)["stale"] = true;
      return;
    }
    (*j)["span_sha256"] = Sha256Hex(std::string_view(*content).substr(s.start_byte, s.end_byte - s.start_byte));
    (*j)["file_sha256"] = FileSha(s.path);
  }
  std::string FileSha(const std::string& path) {
    auto it = sha_.find(path);
    if (it != sha_.end()) return it->second;
    const std::string* content = Content(path);
    return sha_[path] = content == nullptr ? "" : Sha256Hex(*content);
  }

 private:
  IndexDb* db_;
  const ReadWorkspaceFile& read_;
  std::map<std::string, std::optional<std::string>> cache_;
  std::map<std::string, std::string> sha_;
};

StatusOr<QueryAnswer> RunSymbols(const json& arguments_json, IndexDb* db, const ReadWorkspaceFile& read) {
  ASSIGN_OR_RETURN(json args, ParseArgs(kSymbolsTool, arguments_json, {"query", "kind", "path", "prefix", "limit"}));
  ASSIGN_OR_RETURN(std::string query, StringArg(kSymbolsTool, args, "query", true));
  ASSIGN_OR_RETURN(std::string kind_name, StringArg(kSymbolsTool, args, "kind", false));
  ASSIGN_OR_RETURN(std::string path, StringArg(kSymbolsTool, args, "path", false));
  ASSIGN_OR_RETURN(size_t limit, IntArg(kSymbolsTool, args, "limit", 20, 1, kMaxLimit));
  if (args.contains("prefix") && !args["prefix"].is_boolean()) {
    return Status::InvalidArgument(kSymbolsTool, "\"prefix\" must be true or false");
  }
  bool prefix = args.value("prefix", false);
  std::optional<SymbolKind> kind;
  if (!kind_name.empty()) {
    SymbolKind k;
    if (!ParseSymbolKind(kind_name, &k)) {
      return Status::InvalidArgument(kSymbolsTool,
                                     "\"kind\" must be one of function, method, class, enum, interface, "
                                     "module, constant, type, variable");
    }
    kind = k;
  }
  path = NormalPath(path);
  ASSIGN_OR_RETURN(std::vector<SymbolRow> rows, db->FindSymbols(query, prefix, kind, path, limit + 1));
  QueryAnswer a;
  json out = {{"query", query}};
  bool truncated = rows.size() > limit;
  if (truncated) rows.resize(limit);
  Files files(db, read);
  json matches = json::array();
  std::set<std::string> covered;
  for (const SymbolRow& s : rows) {
    json j = SymbolJson(s);
    files.AddChecksums(s, &j);
    matches.push_back(std::move(j));
    covered.insert(s.path);
  }
  out["matches"] = std::move(matches);
  if (rows.size() > 1) {
    out["note"] = "several symbols match: choose one by its id; none was picked for you";
  }
  if (truncated) out["truncated"] = true;
  if (rows.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::string> closest, db->ClosestNames(query, 8));
    out["closest_names"] = closest;
    out["note"] =
        closest.empty() ? "no symbol of that name is indexed" : "no symbol of that name; the closest names are listed";
  }
  a.text = Dump(out);
  a.covered.assign(covered.begin(), covered.end());
  return a;
}

StatusOr<SymbolRow> SymbolArg(std::string_view tool, const std::string& id, IndexDb* db) {
  ASSIGN_OR_RETURN(std::optional<SymbolRow> s, db->SymbolById(id));
  if (!s) {
    return Status::NotFound(std::string(tool) + ": symbol " + id,
                            "is not in the index (renamed, moved or deleted since it was listed); run symbols again");
  }
  return *s;
}

// One name match of `references`: where, how often, in which symbol.
json ReferenceJson(const ReferenceRow& r) {
  json j = {{"path", r.path}, {"lines", r.lines}, {"uses", r.count}};
  if (!r.from_id.empty()) {
    j["in"] = r.from_qualified_name;
    j["in_id"] = r.from_id;
  }
  if (r.call) j["call"] = true;
  return j;
}

}  // namespace

StatusOr<QueryAnswer> SyntacticReferences(const json& arguments_json, IndexDb* db,
                                          const std::string& semantic_unavailable) {
  ASSIGN_OR_RETURN(json args, ParseArgs(kReferencesTool, arguments_json, {"symbol_id", "limit"}));
  ASSIGN_OR_RETURN(std::string id, StringArg(kReferencesTool, args, "symbol_id", true));
  ASSIGN_OR_RETURN(size_t limit, IntArg(kReferencesTool, args, "limit", 100, 1, 1000));
  ASSIGN_OR_RETURN(SymbolRow sym, SymbolArg(kReferencesTool, id, db));
  QueryAnswer a;
  std::set<std::string> covered = {sym.path};
  json out = {{"symbol", SymbolJson(sym)}};
  json refs = json::array();
  {
    out["source"] = "syntactic";
    out["complete"] = false;
    out["completeness"] = "name matches from the symbol index: every use of the name \"" + sym.name +
                          "\", which may include other symbols of that name, and misses uses through aliases or macros";
    ASSIGN_OR_RETURN(std::vector<ReferenceRow> rows, db->ReferencesTo(sym.name, limit + 1));
    if (rows.size() > limit) {
      rows.resize(limit);
      out["truncated"] = true;
    }
    for (const ReferenceRow& r : rows) {
      refs.push_back(ReferenceJson(r));
      covered.insert(r.path);
    }
  }
  out["references"] = std::move(refs);
  if (!semantic_unavailable.empty()) out["semantic_unavailable"] = semantic_unavailable;
  a.text = Dump(out);
  a.covered.assign(covered.begin(), covered.end());
  return a;
}

namespace {

StatusOr<QueryAnswer> RunImpact(const json& arguments_json, IndexDb* db, const ReadWorkspaceFile& read) {
  ASSIGN_OR_RETURN(json args, ParseArgs(kImpactTool, arguments_json, {"symbol_id", "path", "depth", "limit"}));
  ASSIGN_OR_RETURN(std::string id, StringArg(kImpactTool, args, "symbol_id", false));
  ASSIGN_OR_RETURN(std::string path, StringArg(kImpactTool, args, "path", false));
  ASSIGN_OR_RETURN(size_t depth, IntArg(kImpactTool, args, "depth", 3, 1, 6));
  ASSIGN_OR_RETURN(size_t limit, IntArg(kImpactTool, args, "limit", 50, 1, kMaxLimit));
  if (id.empty() == path.empty())
    return Status::InvalidArgument(kImpactTool, "give exactly one of \"symbol_id\" and \"path\"");
  std::vector<SymbolRow> targets;
  path = NormalPath(path);
  if (!id.empty()) {
    ASSIGN_OR_RETURN(SymbolRow s, SymbolArg(kImpactTool, id, db));
    targets.push_back(std::move(s));
  } else {
    ASSIGN_OR_RETURN(std::optional<FileRecord> f, db->File(path));
    if (!f) return Status::NotFound(std::string(kImpactTool) + ": " + path, "is not an indexed source file");
    ASSIGN_OR_RETURN(targets, db->FileSymbolsOf(path));
  }
  // Breadth first over "who uses this name", to depth.
  struct Reached {
    size_t distance;
    std::string via;
    uint32_t uses;
  };
  std::map<std::string, Reached> symbols;  // id -> how it was reached
  std::map<std::string, size_t> files;     // path -> distance
  std::set<std::string> done;              // names already followed
  std::set<std::string> frontier;
  std::set<std::string> target_ids;
  for (const SymbolRow& t : targets) {
    target_ids.insert(t.id);
    frontier.insert(t.name);
  }
  bool truncated = false;
  for (size_t d = 1; d <= depth && !frontier.empty(); ++d) {
    std::set<std::string> next;
    for (const std::string& name : frontier) {
      if (!done.insert(name).second) continue;
      ASSIGN_OR_RETURN(std::vector<ReferenceRow> rows, db->ReferencesTo(name, 2000));
      if (rows.size() >= 2000) truncated = true;
      for (const ReferenceRow& r : rows) {
        if (!files.count(r.path)) files[r.path] = d;
        if (r.from_id.empty() || target_ids.count(r.from_id) || symbols.count(r.from_id)) continue;
        symbols[r.from_id] = {d, name, r.count};
        next.insert(r.from_name);
      }
    }
    frontier = std::move(next);
  }
  // Nearest first, then most used.
  std::vector<std::pair<std::string, Reached>> ranked(symbols.begin(), symbols.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second.distance != b.second.distance) return a.second.distance < b.second.distance;
    return a.second.uses > b.second.uses;
  });
  if (ranked.size() > limit) {
    ranked.resize(limit);
    truncated = true;
  }
  Files contents(db, read);
  QueryAnswer a;
  std::set<std::string> covered;
  json out = {{"depth", depth}, {"source", "syntactic"}};
  json target_json = json::array();
  for (const SymbolRow& t : targets) {
    json j = SymbolJson(t);
    contents.AddChecksums(t, &j);
    target_json.push_back(std::move(j));
    covered.insert(t.path);
  }
  if (!path.empty()) {
    out["file"] = {{"path", path}, {"file_sha256", contents.FileSha(path)}};
    covered.insert(path);
  }
  out["targets"] = std::move(target_json);
  json reached = json::array();
  for (const auto& [sid, how] : ranked) {
    StatusOr<std::optional<SymbolRow>> s = db->SymbolById(sid);
    if (!s.ok() || !*s) continue;
    json j = SymbolJson(**s);
    j["distance"] = how.distance;
    j["uses"] = how.via;
    contents.AddChecksums(**s, &j);
    reached.push_back(std::move(j));
  }
  out["symbols"] = std::move(reached);
  std::vector<std::pair<std::string, size_t>> file_list(files.begin(), files.end());
  std::stable_sort(file_list.begin(), file_list.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  json file_json = json::array();
  json tests = json::array();
  for (const auto& [p, d] : file_list) {
    covered.insert(p);
    if (file_json.size() < limit) file_json.push_back({{"path", p}, {"distance", d}});
    if (LooksLikeTest(p)) tests.push_back(p);
  }
  out["files"] = std::move(file_json);
  out["test_files"] = std::move(tests);
  if (truncated) out["truncated"] = true;
  out["note"] = "what uses these symbols' names, transitively (syntactic: by name)";
  a.text = Dump(out);
  a.covered.assign(covered.begin(), covered.end());
  return a;
}

StatusOr<QueryAnswer> RunOutline(const json& arguments_json, IndexDb* db, const ReadWorkspaceFile& read) {
  ASSIGN_OR_RETURN(json args, ParseArgs(kOutlineTool, arguments_json, {"path"}));
  ASSIGN_OR_RETURN(std::string path, StringArg(kOutlineTool, args, "path", true));
  path = NormalPath(path);
  ASSIGN_OR_RETURN(std::optional<FileRecord> f, db->File(path));
  if (!f) return Status::NotFound(std::string(kOutlineTool) + ": " + path, "is not an indexed source file");
  ASSIGN_OR_RETURN(std::vector<SymbolRow> rows, db->FileSymbolsOf(path));
  Files contents(db, read);
  std::map<std::string, int> depth_of;
  json list = json::array();
  for (const SymbolRow& s : rows) {
    int depth = s.parent_id.empty() || !depth_of.count(s.parent_id) ? 0 : depth_of[s.parent_id] + 1;
    depth_of[s.id] = depth;
    json j = SymbolJson(s);
    j.erase("path");
    j.erase("file_has_syntax_errors");
    j["depth"] = depth;
    contents.AddChecksums(s, &j);
    j.erase("file_sha256");
    list.push_back(std::move(j));
  }
  json out = {{"path", path},
              {"language", LanguageName(f->language)},
              {"lines", f->lines},
              {"file_sha256", contents.FileSha(path)},
              {"symbols", std::move(list)}};
  if (f->has_errors) out["has_syntax_errors"] = "the file does not parse cleanly: these are the symbols recovered";
  QueryAnswer a;
  a.text = Dump(out);
  a.covered = {path};
  return a;
}

}  // namespace

bool LanguageServerMayAnswer(std::string_view tool) { return tool == kReferencesTool; }

StatusOr<QueryAnswer> RunIndexQuery(std::string_view tool, const json& arguments_json, IndexDb* db,
                                    const ReadWorkspaceFile& read) {
  if (tool == kSymbolsTool) return RunSymbols(arguments_json, db, read);
  if (tool == kReferencesTool) return SyntacticReferences(arguments_json, db, "");
  if (tool == kImpactTool) return RunImpact(arguments_json, db, read);
  if (tool == kOutlineTool) return RunOutline(arguments_json, db, read);
  return Status::NotFound("unknown index tool '" + std::string(tool) + "'");
}

StatusOr<SpanNow> ResolveSpan(const std::string& symbol_id, IndexDb* db, const ReadWorkspaceFile& read) {
  ASSIGN_OR_RETURN(SymbolRow sym, SymbolArg("EditSymbol", symbol_id, db));
  ASSIGN_OR_RETURN(std::optional<FileRecord> f, db->File(sym.path));
  if (!f) return Status::NotFound("EditSymbol: " + sym.path, "is no longer indexed");
  ASSIGN_OR_RETURN(std::string content, read(sym.path));
  std::string sha = Sha256Hex(content);
  if (sha != f->sha256) {
    return Status::FailedPrecondition("EditSymbol: " + sym.path, "changed since it was indexed");
  }
  if (sym.end_byte > content.size() || sym.start_byte > sym.end_byte) {
    return Status::FailedPrecondition("EditSymbol: " + sym.path, "the symbol's span is past the file's end");
  }
  SpanNow out;
  out.span_sha256 = Sha256Hex(std::string_view(content).substr(sym.start_byte, sym.end_byte - sym.start_byte));
  out.file_sha256 = std::move(sha);
  out.file_content = std::move(content);
  out.symbol = std::move(sym);
  return out;
}

namespace {

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// Where the symbol's own name is in its span: the first whole-word
// occurrence that is not a qualifier (the "Server" of "Server::Server()"
// names the class; the second one is the constructor). The span's start
// when the name is not written there.
size_t NameOffset(const std::string& content, const SymbolRow& s) {
  std::string_view span = std::string_view(content).substr(s.start_byte, s.end_byte - s.start_byte);
  if (s.name.empty()) return s.start_byte;
  for (size_t at = span.find(s.name); at != std::string_view::npos; at = span.find(s.name, at + 1)) {
    size_t end = at + s.name.size();
    if (at > 0 && IsWordByte(span[at - 1])) continue;
    if (end < span.size() && IsWordByte(span[end])) continue;
    if (span.substr(end, 2) == "::") continue;
    return s.start_byte + at;
  }
  return s.start_byte;
}

}  // namespace

StatusOr<ReferenceTarget> FindReferenceTarget(const json& arguments_json, IndexDb* db, const ReadWorkspaceFile& read) {
  ASSIGN_OR_RETURN(json args, ParseArgs(kReferencesTool, arguments_json, {"symbol_id", "limit"}));
  ASSIGN_OR_RETURN(std::string id, StringArg(kReferencesTool, args, "symbol_id", true));
  ASSIGN_OR_RETURN(size_t limit, IntArg(kReferencesTool, args, "limit", 100, 1, 1000));
  ASSIGN_OR_RETURN(SpanNow span, ResolveSpan(id, db, read));
  ReferenceTarget t;
  t.limit = limit;
  size_t at = NameOffset(span.file_content, span.symbol);
  size_t line_start = span.file_content.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = line_start == std::string::npos || at == 0 ? 0 : line_start + 1;
  t.line = static_cast<uint32_t>(std::count(span.file_content.begin(), span.file_content.begin() + at, '\n'));
  for (size_t i = line_start; i < at; ++i) {
    unsigned char c = static_cast<unsigned char>(span.file_content[i]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte
    t.character += c >= 0xF0 ? 2 : 1;  // four-byte sequences are two UTF-16 units
  }
  t.symbol = std::move(span.symbol);
  t.file_content = std::move(span.file_content);
  return t;
}

StatusOr<QueryAnswer> SemanticReferences(const ReferenceTarget& target, const std::string& server,
                                         const std::vector<ServerReference>& places, size_t outside, bool complete,
                                         const std::string& completeness, IndexDb* db) {
  QueryAnswer a;
  std::set<std::string> covered = {target.symbol.path};
  json out = {{"symbol", SymbolJson(target.symbol)},
              {"source", "semantic"},
              {"server", server},
              {"complete", complete},
              {"completeness", completeness}};
  // Grouped by file and enclosing symbol, in the server's order.
  struct Group {
    std::string path;
    const SymbolRow* in = nullptr;
    std::vector<uint32_t> lines;
  };
  std::map<std::string, std::vector<SymbolRow>> symbols_of;
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::string>, size_t> group_of;
  size_t taken = 0;
  for (const ServerReference& p : places) {
    if (taken == target.limit) {
      out["truncated"] = true;
      break;
    }
    ++taken;
    auto known = symbols_of.find(p.path);
    if (known == symbols_of.end()) {
      StatusOr<std::vector<SymbolRow>> rows = db->FileSymbolsOf(p.path);
      known = symbols_of.emplace(p.path, rows.ok() ? std::move(*rows) : std::vector<SymbolRow>()).first;
    }
    const SymbolRow* in = nullptr;
    for (const SymbolRow& s : known->second) {
      if (s.start_line > p.line || s.end_line < p.line) continue;
      if (in == nullptr || s.end_line - s.start_line < in->end_line - in->start_line) in = &s;
    }
    auto key = std::make_pair(p.path, in == nullptr ? std::string() : in->id);
    auto g = group_of.find(key);
    if (g == group_of.end()) {
      g = group_of.emplace(key, groups.size()).first;
      groups.push_back({p.path, in, {}});
    }
    groups[g->second].lines.push_back(p.line);
  }
  json refs = json::array();
  for (Group& g : groups) {
    std::sort(g.lines.begin(), g.lines.end());
    json j = {{"path", g.path}, {"lines", g.lines}, {"uses", g.lines.size()}};
    if (g.in != nullptr) {
      j["in"] = g.in->qualified_name;
      j["in_id"] = g.in->id;
    }
    refs.push_back(std::move(j));
    covered.insert(g.path);
  }
  out["references"] = std::move(refs);
  if (outside > 0) out["outside_workspace"] = outside;
  if (!complete) {
    // What the server may not have seen: uses of the name in the files it
    // did not answer with, from the index.
    ASSIGN_OR_RETURN(std::vector<ReferenceRow> rows, db->ReferencesTo(target.symbol.name, target.limit + 1));
    json elsewhere = json::array();
    for (const ReferenceRow& r : rows) {
      if (covered.count(r.path)) continue;
      if (elsewhere.size() == target.limit) {
        out["truncated"] = true;
        break;
      }
      elsewhere.push_back(ReferenceJson(r));
    }
    for (const json& j : elsewhere) covered.insert(j["path"].get<std::string>());
    if (!elsewhere.empty()) {
      out["name_matches_elsewhere"] = std::move(elsewhere);
      out["name_matches_note"] =
          "syntactic: uses of the name \"" + target.symbol.name +
          "\" in files the server did not report; they may be this symbol or another of that name";
    }
  }
  a.text = Dump(out);
  a.covered.assign(covered.begin(), covered.end());
  return a;
}

StatusOr<std::string> RepoMap(IndexDb* db, size_t budget_tokens) {
  ASSIGN_OR_RETURN(auto ranked, db->MostReferenced(400));
  // Grouped by file, files in the order of their best symbol.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SymbolRow*>> by_file;
  for (const auto& [s, users] : ranked) {
    if (!by_file.count(s.path)) order.push_back(s.path);
    by_file[s.path].push_back(&s);
  }
  size_t budget = budget_tokens * 4;
  std::string out;
  for (const std::string& path : order) {
    std::string block = path + ":\n";
    for (const SymbolRow* s : by_file[path]) {
      block += "  " + std::string(SymbolKindName(s->kind)) + " " + s->qualified_name + " (line " +
               std::to_string(s->start_line) + ")\n";
    }
    if (out.size() + block.size() > budget) {
      // Whole files only, but a first file is cut rather than left out.
      if (out.empty()) out = block.substr(0, budget);
      break;
    }
    out += block;
  }
  return out;
}

}  // namespace odin::index
