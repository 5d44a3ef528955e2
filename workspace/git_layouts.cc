#include "workspace/git_layouts.h"

#include <cctype>
#include <set>
#include <vector>

#include "workspace/workspace_files.h"

namespace odin {

namespace {

constexpr uint64_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxNesting = 8;  // modules of modules of ...

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool Space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The sections a repository's config may hold at all: what git init, git
// clone, a submodule or a worktree write, and settings of git's own work.
// A key of any other section counts as one that runs a program: git's
// keys that name programs keep growing (gpg.ssh.defaultKeyCommand,
// tar.*.command, trailer.*.cmd, imap.tunnel, hook.*), so what is not known
// to be harmless is refused, and the keys below that name programs within
// these sections too.
bool AllowedSection(const std::string& name) {
  static const std::set<std::string> kAllowed = {
      "core",        "remote",     "branch",   "user",        "init",     "extensions", "submodule",
      "pull",        "push",       "fetch",    "gc",          "pack",     "index",      "color",
      "commit",      "log",        "status",   "http",        "advice",   "feature",    "am",
      "apply",       "blame",      "checkout", "clone",       "column",   "diff",       "merge",
      "rebase",      "rerere",     "sparse",   "tag",         "transfer", "worktree",   "lfs",
      "safe",        "i18n",       "grep",     "format",      "protocol", "splitindex", "maintenance",
      "interactive", "credential", "mailmap",  "versionsort", "notes",    "alias",      "help",
  };
  return kAllowed.count(name) != 0;
}

// Whether section (lowercased name, then ".subsection" as written) and key
// (lowercased) with value make git run a program.
bool RunsProgram(const std::string& section, const std::string& key, const std::string& value) {
  size_t dot = section.find('.');
  std::string name = section.substr(0, dot);
  bool sub = dot != std::string::npos;
  if (!AllowedSection(name)) return true;
  auto in = [&key](std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      if (key == k) return true;
    }
    return false;
  };
  size_t first = value.find_first_not_of(" \t");
  bool bang = first != std::string::npos && value[first] == '!';
  if (name == "core") {
    return in(
        {"fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "alternaterefscommand"});
  }
  if (name == "commit" || name == "tag") return key == "gpgsign";  // runs gpg.program, or ssh's key command
  if (name == "maintenance") return sub;                           // maintenance.<task>.*: git's own tasks only
  if (name == "notes") return sub;                                 // notes.<ref>.* (rewrite hooks)
  if (name == "sequence") return key == "editor";
  if (name == "diff") return sub ? in({"textconv", "command"}) : key == "external";
  if (name == "merge") return sub && key == "driver";
  if (name == "filter" || name == "pager" || name == "hook") return true;
  if (name == "credential") return key == "helper";
  if (name == "include" || name == "includeif") return key == "path";
  if (name == "gpg") return key == "program";
  if (name == "alias") return bang;
  if (name == "submodule") return key == "update" && bang;
  if (name == "uploadpack") return key == "packobjectshook";
  if (name == "remote") return in({"uploadpack", "receivepack", "vcs"});
  if (name == "protocol") return key == "allow";
  if (name == "web") return key == "browser";
  if (name == "browser" || name == "man" || name == "difftool" || name == "mergetool" || name == "guitool") {
    return in({"cmd", "path"});
  }
  if (name == "interactive") return key == "difffilter";
  if (name == "sendemail") return in({"smtpserver", "sendmailcmd"});
  if (name == "instaweb") return key == "httpd";
  return false;
}

// Reads a value as git does (config.c's parse_value): quotes, the escapes
// \n \t \b \\ \", a backslash before a newline continuing the line, and a
// comment outside quotes ending it. False on what git would refuse.
bool ParseValue(std::string_view text, size_t* i, std::string* out) {
  bool quoted = false;
  while (*i < text.size() && Space(text[*i])) ++*i;
  for (; *i < text.size(); ++*i) {
    char c = text[*i];
    if (c == '\n') {
      if (quoted) return false;
      ++*i;
      return true;
    }
    if (!quoted && (c == '#' || c == ';')) {
      while (*i < text.size() && text[*i] != '\n') ++*i;
      return true;
    }
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (c == '\\') {
      if (++*i >= text.size()) return false;
      char e = text[*i];
      if (e == '\n') continue;  // continues on the next line
      if (e == 'n') {
        *out += '\n';
      } else if (e == 't') {
        *out += '\t';
      } else if (e == 'b') {
        if (!out->empty()) out->pop_back();
      } else if (e == '\\' || e == '"') {
        *out += e;
      } else {
        return false;
      }
      continue;
    }
    *out += c;
  }
  return !quoted;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

std::string CheckGitDir(const WorkspaceFiles& files, const std::string& rel, int depth, bool worktree);

// Checks the git directories grouped below dir (modules/: a submodule's
// name may hold slashes, so a directory without HEAD groups others).
std::string CheckGroup(const WorkspaceFiles& files, const std::string& dir, const std::string& shown, int depth,
                       bool worktrees) {
  if (depth > kMaxNesting) return shown + ": nested too deep to check";
  StatusOr<std::vector<std::string>> names = files.List(dir);
  if (!names.ok()) return shown + ": unreadable";
  for (const std::string& n : *names) {
    std::string child = dir + "/" + n;
    FileEntry e = files.Look(child);
    if (!e.is_dir()) continue;
    bool git_dir = files.Look(child + "/HEAD").exists();
    std::string why = git_dir || worktrees ? CheckGitDir(files, child, depth + 1, worktrees)
                                           : CheckGroup(files, child, shown + "/" + n, depth + 1, false);
    if (!why.empty()) return why;
  }
  return "";
}

std::string CheckGitDir(const WorkspaceFiles& files, const std::string& rel, int depth, bool worktree) {
  auto shown = [&rel](const std::string& name) { return Join(rel, name); };
  for (const char* name : {"config", "config.worktree"}) {
    std::string p = Join(rel, name);
    FileEntry e = files.Look(p);
    if (!e.exists()) continue;
    if (!e.is_file()) return shown(name) + ": not a regular file";
    StatusOr<std::string> text = files.ReadFile(p, kMaxConfigBytes);
    if (!text.ok()) return shown(name) + ": unreadable (" + text.status().message() + ")";
    std::string key = GitConfigRunsPrograms(*text);
    if (!key.empty()) return shown(name) + ": " + key;
  }
  FileEntry hooks = files.Look(Join(rel, "hooks"));
  if (hooks.exists()) {
    if (!hooks.is_dir()) return shown("hooks") + ": not a directory";
    StatusOr<std::vector<std::string>> names = files.List(Join(rel, "hooks"));
    if (!names.ok()) return shown("hooks") + ": unreadable";
    for (const std::string& n : *names) {
      if (!n.ends_with(".sample")) return shown("hooks/" + n);
    }
  }
  FileEntry commondir = files.Look(Join(rel, "commondir"));
  if (commondir.exists()) {
    // A worktree's points back at its repository; anything else sends git
    // elsewhere.
    StatusOr<std::string> text =
        worktree && commondir.is_file() ? files.ReadFile(Join(rel, "commondir"), 4096) : StatusOr<std::string>("");
    if (!text.ok() || (*text != "../..\n" && *text != "../..")) return shown("commondir");
  }
  if (files.Look(Join(rel, "objects/info/alternates")).exists()) return shown("objects/info/alternates");
  if (depth >= kMaxNesting) return "";
  for (const char* group : {"modules", "worktrees"}) {
    std::string g = Join(rel, group);
    if (!files.Look(g).is_dir()) continue;
    std::string why = CheckGroup(files, g, shown(group), depth, std::string(group) == "worktrees");
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

std::string GitConfigRunsPrograms(std::string_view text) {
  const std::string kUnparsable = "(unparsable config)";
  size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::string section;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n' || Space(c)) {
      ++i;
      continue;
    }
    if (c == '#' || c == ';') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '[') {
      ++i;
      std::string name;
      while (i < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-' || text[i] == '.')) {
        name += Lower(text[i++]);
      }
      if (name.empty()) return kUnparsable;
      std::string sub;
      bool has_sub = false;
      if (i < text.size() && Space(text[i])) {
        while (i < text.size() && Space(text[i])) ++i;
        if (i >= text.size() || text[i] != '"' || name.find('.') != std::string::npos) return kUnparsable;
        ++i;
        has_sub = true;
        for (;;) {
          if (i >= text.size() || text[i] == '\n') return kUnparsable;
          char d = text[i++];
          if (d == '"') break;
          if (d == '\\') {
            if (i >= text.size() || text[i] == '\n') return kUnparsable;
            d = text[i++];
          }
          sub += d;
        }
      }
      if (i >= text.size() || text[i] != ']') return kUnparsable;
      ++i;
      // "[a.b]" is the old form of [a "b"]; both name the key "a.b.key".
      section = has_sub ? name + "." + sub : name;
      continue;  // a key may follow on the same line
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {
      std::string key;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-')) {
        key += Lower(text[i++]);
      }
      while (i < text.size() && Space(text[i])) ++i;
      std::string value;
      if (i < text.size() && text[i] == '=') {
        ++i;
        if (!ParseValue(text, &i, &value)) return kUnparsable;
      } else if (i < text.size() && text[i] != '\n' && text[i] != '#' && text[i] != ';') {
        return kUnparsable;
      }
      if (section.empty()) return kUnparsable;
      if (RunsProgram(section, key, value)) {
        // Subsections keep their case, as git compares them.
        return section + "." + key;
      }
      continue;
    }
    return kUnparsable;
  }
  return "";
}

bool GitHeadParses(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if ((text.size() == 40 || text.size() == 64) && IsHex(text)) return true;
  if (!text.starts_with("ref: refs/")) return false;
  std::string_view ref = text.substr(5);
  if (ref.size() > 1024 || ref.ends_with('/') || ref.ends_with(".lock") || ref.ends_with('.')) return false;
  if (ref.find("..") != std::string_view::npos || ref.find("//") != std::string_view::npos ||
      ref.find("@{") != std::string_view::npos || ref.find("/.") != std::string_view::npos) {
    return false;
  }
  for (char c : ref) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '[' || c == '\\') {
      return false;
    }
  }
  return true;
}

std::string GitDirRunsPrograms(const WorkspaceFiles& files, const std::string& rel) {
  return CheckGitDir(files, rel, 0, /*worktree=*/false);
}

bool LooksLikeGitDir(bool head, bool objects_dir, bool refs_dir, bool commondir) {
  return head && ((objects_dir && refs_dir) || commondir);
}

bool CommandGitLayouts::InUpper(const std::string& rel) const {
  FileEntry e = upper_.Look(rel);
  // An overlay whiteout (a 0:0 character device) is a deletion, not an
  // entry.
  return e.exists() && e.type != FileEntry::Type::kOther;
}

const std::map<std::string, std::string>& CommandGitLayouts::Judge(const std::string& dir) {
  auto known = judged_.find(dir);
  if (known != judged_.end()) return known->second;
  std::map<std::string, std::string>& refused = judged_[dir];
  static const char* const kLayoutNames[] = {"HEAD",   "objects",         "refs", "commondir",
                                             "config", "config.worktree", "hooks"};
  bool written = false;
  for (const char* n : kLayoutNames) written = written || InUpper(Join(dir, n));
  if (!written) return refused;  // the command added nothing that makes or runs a repository here
  // The directory as it will be (what the command wrote over what was).
  auto merged = [&](const char* n) {
    std::string p = Join(dir, n);
    FileEntry up = upper_.Look(p);
    if (up.type == FileEntry::Type::kOther) return FileEntry();  // deleted by the command
    return up.exists() ? up : workspace_.Look(p);
  };
  auto was = [&](const char* n) { return workspace_.Look(Join(dir, n)); };
  bool now = LooksLikeGitDir(merged("HEAD").exists(), merged("objects").is_dir(), merged("refs").is_dir(),
                             merged("commondir").exists());
  if (!now) return refused;
  bool before =
      LooksLikeGitDir(was("HEAD").exists(), was("objects").is_dir(), was("refs").is_dir(), was("commondir").exists());
  std::string why = GitDirRunsPrograms(upper_, dir);
  if (why.empty() && !before) {
    // Made a repository by this command: what was there runs as well.
    why = GitDirRunsPrograms(workspace_, dir);
  }
  if (!why.empty()) {
    for (const char* n : kLayoutNames) {
      if (InUpper(Join(dir, n))) refused[n] = "a repository laid out here could run a program (" + why + ")";
    }
    return refused;
  }
  if (InUpper(Join(dir, "HEAD"))) {
    FileEntry head = upper_.Look(Join(dir, "HEAD"));
    StatusOr<std::string> text = head.is_file() ? upper_.ReadFile(Join(dir, "HEAD"), 4096, WorkspaceFiles::Links::kNone)
                                                : Status::InvalidArgument("HEAD", "not a file");
    if (!text.ok() || !GitHeadParses(*text)) refused["HEAD"] = "a HEAD git cannot read";
  }
  return refused;
}

std::string CommandGitLayouts::MustNotLand(const std::string& rel) {
  std::vector<std::string> parts;
  for (size_t start = 0; start <= rel.size();) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    if (end > start) parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  // Each ancestor (and rel itself) as a name in its directory.
  std::string dir;
  for (const std::string& name : parts) {
    std::string path = Join(dir, name);
    if (name == ".git" && InUpper(path) && !workspace_.Look(path).exists()) {
      // A new .git: a repository of its own only if harmless.
      if (!upper_.Look(path).is_dir()) return "a new .git that is not a directory (it sends git elsewhere)";
      std::string why = GitDirRunsPrograms(upper_, path);
      if (!why.empty()) return "a new repository that could run a program (" + why + ")";
    }
    static const std::set<std::string> kLayoutNames = {"HEAD",   "objects",         "refs", "commondir",
                                                       "config", "config.worktree", "hooks"};
    if (kLayoutNames.count(name) != 0) {
      const std::map<std::string, std::string>& refused = Judge(dir);
      auto it = refused.find(name);
      if (it != refused.end()) return it->second;
    }
    dir = path;
  }
  return "";
}

}  // namespace odin
