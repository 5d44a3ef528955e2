#include "config/claude_defs.h"

#include <algorithm>
#include <functional>

#include "base/sha256.h"
#include "base/terminal_text.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

std::string Trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::string Unquoted(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

// A name a command, agent or skill may have: typed after "/", given as
// subagent_type, shown in a prompt.
bool GoodName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' || c == ':';
  });
}

// One line: a description shown in /help and in prompts.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  text = VisibleControls(text);
  return text.size() > 300 ? text.substr(0, 297) + "..." : text;
}

enum class Kind { kCommand, kAgent, kSkill };

struct Reader {
  const WorkspaceFiles& files;
  std::string shown_prefix;
  std::string scope;
  DefsDigest* digest;
  ClaudeDefs* out;
  uint64_t total = 0;  // bytes read

  // The file's text, fed to the digest; nullopt (said) when unreadable.
  std::optional<std::string> Read(const std::string& rel, const std::string& shown) {
    if (total > kMaxDefTotalBytes) return std::nullopt;
    StatusOr<std::string> text = files.ReadFile(rel, kMaxDefBytes, WorkspaceFiles::Links::kNone);
    if (!text.ok()) {
      out->problems.push_back(shown + ": not read: " + VisibleControls(text.status().message()));
      return std::nullopt;
    }
    total += text->size();
    if (total > kMaxDefTotalBytes) {
      out->problems.push_back(shown + " and what follows: not read: over " + std::to_string(kMaxDefTotalBytes >> 20) +
                              " MiB of definitions in one directory");
      return std::nullopt;
    }
    if (digest != nullptr) digest->text += rel + '\0' + Sha256Hex(*text) + '\0';
    return *std::move(text);
  }

  ClaudeDef Make(const std::string& shown, const std::string& text, std::string name) {
    Frontmatter fm = ParseFrontmatter(text);
    ClaudeDef d;
    if (fm.Has("name")) name = Unquoted(fm.Get("name"));
    d.name = std::move(name);
    d.description = OneLine(fm.Get("description"));
    if (d.description.empty()) {  // Claude Code's default: the body's first line
      size_t start = fm.body.find_first_not_of(" \t\r\n#");
      if (start != std::string::npos) d.description = OneLine(fm.body.substr(start, fm.body.find('\n', start) - start));
    }
    d.argument_hint = OneLine(fm.Get("argument-hint"));
    for (const char* key : {"allowed-tools", "tools"}) {
      // An empty list is Claude Code's "not given": every tool.
      if (std::vector<std::string> list = SplitToolList(fm.Get(key)); fm.Has(key) && !list.empty()) d.tools = list;
    }
    d.model = fm.Get("model");
    d.body = std::move(fm.body);
    d.source = shown;
    d.scope = scope;
    return d;
  }

  // The files below rel (depth-bounded, at most limit, in name order),
  // relative to rel: only the .md ones when md_only. A link is listed, never
  // followed.
  void Walk(const std::string& rel, const std::string& sub, size_t depth, size_t limit, bool md_only,
            std::vector<std::string>* found) {
    if (depth > kMaxDefDepth || found->size() >= limit) return;
    StatusOr<std::vector<WorkspaceFiles::Entry>> entries = files.ListEntries(sub.empty() ? rel : rel + "/" + sub);
    if (!entries.ok()) return;
    std::sort(entries->begin(), entries->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const WorkspaceFiles::Entry& e : *entries) {
      if (found->size() >= limit) return;
      std::string path = sub.empty() ? e.name : sub + "/" + e.name;
      if (e.is_dir && !e.is_link) {
        Walk(rel, path, depth + 1, limit, md_only, found);
      } else if (!md_only || (!e.is_link && e.name.size() > 3 && e.name.ends_with(".md"))) {
        found->push_back(path);
      }
    }
  }

  void ReadKind(const std::string& dir, Kind kind) {
    std::string base = dir.empty() ? "" : dir + "/";
    if (kind == Kind::kSkill) {
      StatusOr<std::vector<WorkspaceFiles::Entry>> entries = files.ListEntries(base + "skills");
      if (!entries.ok()) return;
      std::sort(entries->begin(), entries->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      size_t taken = 0;
      for (const WorkspaceFiles::Entry& e : *entries) {
        if (!e.is_dir || e.is_link || ++taken > kMaxDefFiles) continue;
        std::string rel = base + "skills/" + e.name + "/SKILL.md";
        std::string shown = OneLine(shown_prefix + "skills/" + e.name + "/SKILL.md");
        if (!files.Look(rel).exists()) continue;
        std::optional<std::string> text = Read(rel, shown);
        if (!text) continue;
        ClaudeDef d = Make(shown, *text, e.name);
        d.dir = files.Absolute(base + "skills/" + e.name);
        std::vector<std::string> all;
        Walk(base + "skills/" + e.name, "", 0, kMaxSkillFiles + 1, false, &all);
        for (std::string& f : all) {
          if (f != "SKILL.md") d.files.push_back(OneLine(f));
        }
        Add(std::move(d), &out->skills);
      }
      return;
    }
    const char* sub = kind == Kind::kCommand ? "commands" : "agents";
    std::vector<std::string> found;
    Walk(base + sub, "", 0, kMaxDefFiles, true, &found);
    for (const std::string& f : found) {
      std::string rel = base + sub + "/" + f;
      std::string shown = OneLine(shown_prefix + sub + "/" + f);
      std::optional<std::string> text = Read(rel, shown);
      if (!text) continue;
      std::string stem = f.substr(f.rfind('/') == std::string::npos ? 0 : f.rfind('/') + 1);
      stem.resize(stem.size() - 3);
      ClaudeDef d = Make(shown, *text, stem);
      if (kind == Kind::kCommand) {
        d.name = stem;  // a command is its file's name, whatever the frontmatter says
        if (f.find('/') != std::string::npos) d.group = f.substr(0, f.rfind('/'));
      }
      Add(std::move(d), kind == Kind::kCommand ? &out->commands : &out->agents);
    }
  }

  void Add(ClaudeDef d, std::vector<ClaudeDef>* list) {
    if (!GoodName(d.name)) {
      out->problems.push_back(d.source + ": not taken: its name '" + OneLine(d.name) +
                              "' is not 1 to 64 letters, digits, '-', '_', '.' or ':'");
      return;
    }
    auto named = [list](const std::string& name) {
      return std::find_if(list->begin(), list->end(), [&name](const ClaudeDef& o) { return o.name == name; });
    };
    // Two commands of one name in different subdirectories: the later is
    // /group:name, as Claude Code shows it "(project:group)".
    if (named(d.name) != list->end() && !d.group.empty()) d.name = d.group + ":" + d.name;
    auto same = named(d.name);
    if (same != list->end()) {
      out->problems.push_back(d.source + ": not taken: " + same->source + " has the name '" + d.name + "' too");
      return;
    }
    list->push_back(std::move(d));
  }
};

void MergeList(std::vector<ClaudeDef>* earlier, std::vector<ClaudeDef> later, std::vector<std::string>* problems) {
  for (ClaudeDef& d : later) {
    auto same = std::find_if(earlier->begin(), earlier->end(), [&d](const ClaudeDef& o) { return o.name == d.name; });
    if (same != earlier->end()) {
      problems->push_back(same->source + " is shadowed by " + d.source);
      *same = std::move(d);
    } else {
      earlier->push_back(std::move(d));
    }
  }
}

}  // namespace

std::string Frontmatter::Get(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return v;
  }
  return "";
}

bool Frontmatter::Has(std::string_view key) const {
  return std::any_of(fields.begin(), fields.end(), [key](const auto& f) { return f.first == key; });
}

Frontmatter ParseFrontmatter(std::string_view text) {
  Frontmatter fm;
  auto line_end = [&text](size_t at) {
    size_t nl = text.find('\n', at);
    return nl == std::string_view::npos ? text.size() : nl;
  };
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a BOM: the file starts after it
  if (Trimmed(text.substr(0, line_end(0))) != "---") {
    fm.body = std::string(text);
    return fm;
  }
  size_t at = line_end(0) + 1;
  std::vector<std::pair<std::string, std::string>> fields;
  bool closed = false;
  bool block = false;  // the last key took a "|" or ">" block
  while (at <= text.size()) {
    size_t end = line_end(at);
    std::string_view raw = text.substr(at, end - at);
    at = end + 1;
    std::string line = Trimmed(raw);
    if (line == "---") {
      closed = true;
      break;
    }
    if (line.empty() || line[0] == '#') continue;
    bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    if (indented && !fields.empty()) {
      std::string& v = fields.back().second;
      if (block) {
        v += (v.empty() ? "" : " ") + line;
      } else if (line.starts_with("- ") || line == "-") {
        v += (v.empty() ? "" : ", ") + Unquoted(Trimmed(line.substr(1)));
      } else {
        v += (v.empty() ? "" : " ") + line;  // a plain scalar folded over lines
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trimmed(line.substr(0, colon));
    std::string value = Trimmed(line.substr(colon + 1));
    block = value == "|" || value == ">" || value == "|-" || value == ">-";
    if (block) value.clear();
    fields.emplace_back(std::move(key), Unquoted(std::move(value)));
  }
  if (!closed) {  // no end: not a frontmatter after all
    fm.body = std::string(text);
    return fm;
  }
  fm.fields = std::move(fields);
  std::string_view body = at < text.size() ? text.substr(at) : std::string_view();
  fm.body = std::string(body);
  while (!fm.body.empty() && (fm.body[0] == '\n' || fm.body[0] == '\r')) fm.body.erase(0, 1);
  return fm;
}

std::vector<std::string> SplitToolList(std::string_view text) {
  std::string s = Trimmed(text);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  auto take = [&] {
    std::string t = Unquoted(Trimmed(cur));
    if (!t.empty()) out.push_back(std::move(t));
    cur.clear();
  };
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      take();
      continue;
    }
    cur += c;
  }
  take();
  return out;
}

ClaudeDefs ReadClaudeDefs(const WorkspaceFiles& files, const std::string& rel, const std::string& shown_prefix,
                          const std::string& scope, DefsDigest* digest) {
  ClaudeDefs out;
  Reader r{files, shown_prefix, scope, digest, &out};
  // A linked directory is not followed (ListEntries refuses a link on the way).
  r.ReadKind(rel, Kind::kCommand);
  r.ReadKind(rel, Kind::kAgent);
  r.ReadKind(rel, Kind::kSkill);
  return out;
}

ClaudeDefs MergeDefs(ClaudeDefs earlier, ClaudeDefs later) {
  ClaudeDefs out = std::move(earlier);
  out.problems.insert(out.problems.end(), later.problems.begin(), later.problems.end());
  MergeList(&out.commands, std::move(later.commands), &out.problems);
  MergeList(&out.agents, std::move(later.agents), &out.problems);
  MergeList(&out.skills, std::move(later.skills), &out.problems);
  return out;
}

}  // namespace odin
