#include "gates/command_rules.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <tuple>

#include "gates/command_parser.h"
#include "gates/tool_rules.h"
#include "gates/read_only_commands.h"

namespace odin {

namespace {

// Command lines read out of words, values and code per command, at most:
// past this, the command needs approval.
constexpr int kMaxEmbeddedParses = 256;

std::string Base(const std::string& w) { return w.substr(w.rfind('/') + 1); }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

bool WordMatches(const std::string& pattern, const std::string& word) {
  if (!pattern.empty() && pattern.back() == '*')
    return word.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == word;
}

const std::string* FirstMatch(const std::vector<std::string>& rules, const std::vector<std::string>& words) {
  for (const std::string& r : rules) {
    if (CommandRuleMatches(r, words)) return &r;
  }
  return nullptr;
}

// The first rule one of the part's programs matches.
const std::string* ProgramMatch(const std::vector<std::string>& rules, const CommandPart& part) {
  for (const std::vector<std::string>& program : part.programs) {
    if (const std::string* r = FirstMatch(rules, program)) return r;
  }
  return nullptr;
}

std::string Shown(const std::string& text) {
  std::string one = text.size() > 200 ? text.substr(0, 197) + "..." : text;
  for (char& c : one) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return one;
}

// git -c keys that name no program and include nothing (lower case; a
// trailing '.' matches the section).
const char* const kHarmlessGitKeys[] = {"user.",
                                        "color.",
                                        "advice.",
                                        "i18n.",
                                        "column.",
                                        "init.defaultbranch",
                                        "core.quotepath",
                                        "core.autocrlf",
                                        "core.safecrlf",
                                        "core.filemode",
                                        "core.abbrev",
                                        "core.eol",
                                        "core.ignorecase",
                                        "core.precomposeunicode",
                                        "core.longpaths",
                                        "core.symlinks",
                                        "core.whitespace",
                                        "commit.gpgsign",
                                        "tag.gpgsign",
                                        "log.decorate",
                                        "log.abbrevcommit",
                                        "log.date",
                                        "log.follow",
                                        "diff.noprefix",
                                        "diff.renames",
                                        "diff.algorithm",
                                        "diff.context",
                                        "diff.mnemonicprefix",
                                        "diff.relative",
                                        "diff.indentheuristic",
                                        "merge.conflictstyle",
                                        "merge.ff",
                                        "pull.rebase",
                                        "pull.ff",
                                        "rebase.autostash",
                                        "rebase.autosquash",
                                        "push.default",
                                        "push.autosetupremote",
                                        "fetch.prune",
                                        "status.showuntrackedfiles",
                                        "status.short",
                                        "status.branch",
                                        "format.pretty",
                                        "grep.linenumber",
                                        "protocol.version",
                                        "gc.auto",
                                        "maintenance.auto",
                                        "safe.directory",
                                        "feature.manyfiles",
                                        "index.version",
                                        "pack.threads",
                                        "commit.verbose",
                                        "commit.cleanup",
                                        "branch.sort",
                                        "tag.sort",
                                        "versionsort.suffix",
                                        "blame.date",
                                        "blame.coloring",
                                        "pager.branch",
                                        "pager.status"};

bool HarmlessGitKey(const std::string& key) {
  std::string k = Lower(key);
  for (const char* h : kHarmlessGitKeys) {
    std::string s = h;
    if (s.back() == '.' ? k.rfind(s, 0) == 0 : k == s) return true;
  }
  return false;
}

// Environment variables whose value names a program another program runs
// (or configures git, which runs programs).
bool NamesPrograms(const std::string& name) {
  for (const char* v : {"PAGER",
                        "GIT_PAGER",
                        "MANPAGER",
                        "SYSTEMD_PAGER",
                        "EDITOR",
                        "VISUAL",
                        "GIT_EDITOR",
                        "GIT_SEQUENCE_EDITOR",
                        "SUDO_EDITOR",
                        "GIT_SSH",
                        "GIT_SSH_COMMAND",
                        "GIT_ASKPASS",
                        "SSH_ASKPASS",
                        "SUDO_ASKPASS",
                        "GIT_EXTERNAL_DIFF",
                        "GIT_EXEC_PATH",
                        "GIT_PROXY_COMMAND",
                        "GIT_TEMPLATE_DIR",
                        "GIT_CONFIG",
                        "GIT_CONFIG_GLOBAL",
                        "GIT_CONFIG_SYSTEM",
                        "GIT_CONFIG_PARAMETERS",
                        "GIT_CONFIG_COUNT",
                        "LESSOPEN",
                        "LESSCLOSE",
                        "BROWSER",
                        "PROMPT_COMMAND",
                        "PS4",
                        "BASH_ENV",
                        "ENV",
                        "LD_PRELOAD",
                        "LD_AUDIT"}) {
    if (name == v) return true;
  }
  return name.rfind("GIT_CONFIG_KEY_", 0) == 0 || name.rfind("GIT_CONFIG_VALUE_", 0) == 0;
}

// Values of a program setting that run nothing of note.
bool TrivialProgram(const std::string& value) {
  return value.empty() || value == "cat" || value == "true" || value == ":";
}

bool HasShellSyntax(const std::string& s) { return s.find_first_of(" \t\n;&|<>()$`\\'\"!{}") != std::string::npos; }

class Judge {
 public:
  Judge(const std::string& command, const CommandRules& rules, const std::string& workspace, const std::string& cwd)
      : command_(command), rules_(rules), workspace_(workspace), cwd_(cwd.empty() ? workspace : cwd) {}

  RuleVerdict Run();

 private:
  // The deny rule a command line (read as shell) runs, or null. counted: it
  // spends one of kMaxEmbeddedParses (the checks that can only ask).
  const std::string* DeniedIn(const std::string& line, bool counted = true);
  const std::string* DeniedInWord(const std::string& word);
  std::optional<RuleVerdict> DenyFromSettings(const ParsedCommand& parsed);
  void AskForLaterWords(const CommandPart& part);
  void AskForOpenWords(const CommandPart& part);
  void AskForPaths(const CommandPart& part);
  bool Outside(const std::string& path, const std::vector<std::string>& directories) const;
  void Ask(std::string part, std::string reason, std::string key, std::string rule = "") {
    keys_.push_back(std::move(key));
    if (!ask_) ask_ = RuleVerdict{RuleDecision::kAsk, std::move(rule), std::move(part), std::move(reason), {}};
  }
  std::string CommandKey() const { return "command:" + command_; }

  const std::string& command_;
  const CommandRules& rules_;
  const std::string& workspace_;
  std::string cwd_;
  int parses_left_ = kMaxEmbeddedParses;
  // For the command lines read out of words: as long again as the command's own.
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now() + kParseTimeBudget;
  bool out_of_time_ = false;
  std::optional<RuleVerdict> ask_;
  std::vector<std::string> keys_;
};

const std::string* Judge::DeniedIn(const std::string& line, bool counted) {
  if (rules_.deny.empty()) return nullptr;
  if (counted && --parses_left_ < 0) return nullptr;  // Run asks for the whole command
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - std::chrono::steady_clock::now());
  if (left.count() <= 0) {
    out_of_time_ = true;
    return nullptr;
  }
  ParsedCommand parsed = ParseCommandUnchecked(line, left);
  out_of_time_ = out_of_time_ || parsed.unreadable == Unreadable::kTooSlow;
  for (const CommandPart& part : parsed.parts) {
    if (part.dynamic) continue;
    if (const std::string* r = ProgramMatch(rules_.deny, part)) return r;
  }
  return nullptr;
}

// A word that may hold a command: `rm`, `/bin/rm`, `rm x`, `--exec=rm x`,
// `alias.x=!rm x`.
const std::string* Judge::DeniedInWord(const std::string& word) {
  std::vector<std::string> candidates = {word};
  // -xCMD: a one-letter option with its value attached.
  if (word.size() > 2 && word[0] == '-' && word[1] != '-') candidates.push_back(word.substr(2));
  for (size_t eq = word.find('='); eq != std::string::npos; eq = word.find('=', eq + 1)) {
    std::string value = word.substr(eq + 1);
    if (!value.empty() && value[0] == '!') value = value.substr(1);
    if (!value.empty()) candidates.push_back(value);
  }
  for (const std::string& c : candidates) {
    if (!HasShellSyntax(c)) {
      if (const std::string* r = FirstMatch(rules_.deny, {c})) return r;
    } else if (const std::string* r = DeniedIn(c)) {
      return r;
    }
  }
  return nullptr;
}

// Configuration on the command line that names a denied program: denied.
// Other configuration that may name programs: approval.
std::optional<RuleVerdict> Judge::DenyFromSettings(const ParsedCommand& parsed) {
  for (const CommandPart& part : parsed.parts) {
    if (part.dynamic) continue;
    for (const GitConfigSetting& s : part.git_config) {
      std::string key = Lower(s.key);
      if (HarmlessGitKey(key)) continue;
      std::string shown = "`" + Shown(part.text) + "` sets git's " + s.key;
      if (s.from_env) {
        Ask(part.text, shown + " to a value known only when it runs", CommandKey());
        continue;
      }
      bool alias = key.rfind("alias.", 0) == 0;
      // An alias runs a shell command (!cmd) or git with its words.
      std::string runs =
          alias ? (!s.value.empty() && s.value[0] == '!' ? s.value.substr(1) : "git " + s.value) : s.value;
      if (!alias && TrivialProgram(s.value)) continue;
      if (const std::string* r = DeniedIn(runs, /*counted=*/false)) {
        return RuleVerdict{RuleDecision::kDeny,
                           *r,
                           part.text,
                           shown + " to run `" + Shown(runs) + "`, which the deny rule '" + *r + "' matches",
                           {}};
      }
      Ask(part.text, shown + (alias ? ", a git alias" : ", which may name a program git runs"), CommandKey());
    }
  }
  for (const Assignment& a : parsed.assignments) {
    if (!NamesPrograms(a.name)) continue;
    std::string shown = "the command sets " + a.name + ", which names a program other programs run";
    if (!a.known) {
      Ask(a.name, shown + ", to a value known only when it runs", CommandKey());
      continue;
    }
    if (TrivialProgram(a.value) && a.name.rfind("GIT_CONFIG", 0) != 0) continue;
    if (const std::string* r = DeniedIn(a.value, /*counted=*/false)) {
      return RuleVerdict{RuleDecision::kDeny,
                         *r,
                         a.name + "=" + a.value,
                         shown + ", to `" + Shown(a.value) + "`, which the deny rule '" + *r + "' matches",
                         {}};
    }
    Ask(a.name, shown, CommandKey());
  }
  return std::nullopt;
}

// Every word after a part's name: a denied program there (or a command line
// running one) needs approval, whatever runs it.
void Judge::AskForLaterWords(const CommandPart& part) {
  if (rules_.deny.empty()) return;
  // git's subcommand is git's own (`git rm`), not a program it runs.
  size_t git_subcommand = part.words[0] == "git" && part.words.size() > 1 && part.written.size() >= part.words.size()
                              ? part.written.size() - (part.words.size() - 1)
                              : 0;
  for (size_t i = 1; i < part.written.size(); ++i) {
    if (!part.known[i] || i == git_subcommand) continue;
    const std::string& w = part.written[i];
    const std::string* r = nullptr;
    // A denied program's name with what follows as its arguments (`foo git -C . push`).
    std::vector<std::string> tail(part.written.begin() + static_cast<std::ptrdiff_t>(i), part.written.end());
    std::vector<bool> known(part.known.begin() + static_cast<std::ptrdiff_t>(i), part.known.end());
    for (const std::string& rule : rules_.deny) {
      std::vector<std::string> first = CommandRuleWords(rule);
      // A rule that starts with a wildcard names no program to look for.
      if (first.empty() || first[0].starts_with("*") || !WordMatches(Base(first[0]), Base(w))) continue;
      if (--parses_left_ < 0) return;  // Run asks for the whole command
      for (const std::vector<std::string>& program : ReadProgramChain(tail, known).programs) {
        if ((r = FirstMatch(rules_.deny, program)) != nullptr) break;
      }
      if (r != nullptr) break;
    }
    if (r == nullptr) r = DeniedInWord(w);
    if (r != nullptr) {
      Ask(part.text,
          "`" + Shown(part.text) + "` names " + Shown(w) + ", which the deny rule '" + *r +
              "' matches, where something else runs it",
          CommandKey());
      return;
    }
  }
  for (const std::string& code : part.inline_code) {
    // Code that names a denied program as a word (os.system("rm x")).
    std::vector<std::string> tokens;
    std::string t;
    for (char c : code + " ") {
      if (isalnum(static_cast<unsigned char>(c)) || strchr("_./+-", c) != nullptr) {
        t += c;
      } else if (!t.empty()) {
        tokens.push_back(t);
        t.clear();
      }
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::vector<std::string> rest(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.end());
      if (const std::string* r = FirstMatch(rules_.deny, rest)) {
        Ask(part.text,
            "the code given to `" + Shown(part.words[0]) + "` names `" + tokens[i] + "`, which the deny rule '" + *r +
                "' matches",
            CommandKey());
        return;
      }
    }
  }
}

// A deny rule whose words a program may turn out to have: a word it needs is
// computed when it runs (`npm $X` for "npm publish"), or comes from xargs's
// input (`echo push | xargs git` for "git push").
void Judge::AskForOpenWords(const CommandPart& part) {
  std::vector<std::string> unknown;
  for (size_t i = 0; i < part.written.size(); ++i) {
    if (!part.known[i]) unknown.push_back(part.written[i]);
  }
  if (unknown.empty() && !part.input_arguments) return;
  for (const std::vector<std::string>& program : part.programs) {
    for (const std::string& rule : rules_.deny) {
      std::vector<std::string> r = CommandRuleWords(rule);
      bool may = !r.empty();
      for (size_t i = 0; may && i < r.size(); ++i) {
        if (i >= program.size()) {
          may = part.input_arguments && &program == &part.programs.back();
          break;
        }
        if (std::find(unknown.begin(), unknown.end(), program[i]) != unknown.end()) break;
        may = WordMatches(i == 0 ? Base(r[0]) : r[i], i == 0 ? Base(program[0]) : program[i]);
      }
      if (may) {
        Ask(part.text,
            "`" + Shown(part.text) + "` may run what the deny rule '" + rule +
                "' matches: some of its words are known only when it runs",
            CommandKey());
        return;
      }
    }
  }
}

bool Judge::Outside(const std::string& path, const std::vector<std::string>& directories) const {
  if (path.empty() || path[0] == '/') return OutsideWorkspace(path, workspace_, cwd_);
  for (const std::string& d : directories) {
    std::string base = d.empty() ? cwd_ : d[0] == '/' ? d : cwd_ + "/" + d;
    if (OutsideWorkspace(path, workspace_, base)) return true;
  }
  return false;
}

void Judge::AskForPaths(const CommandPart& part) {
  if (workspace_.empty() || FirstMatch(rules_.allow, part.words) != nullptr) return;
  for (const std::string& operand : part.operands) {
    // --file=PATH: the value is a path too.
    std::string w = operand;
    if (!w.empty() && w[0] == '-') {
      size_t eq = w.find('=');
      if (eq == std::string::npos) continue;
      w = w.substr(eq + 1);
    }
    if (w.empty() || !Outside(w, part.directories)) continue;
    Ask(part.text, "`" + Shown(part.text) + "` names " + Shown(w) + ", outside the workspace", "path:" + w);
  }
}

RuleVerdict Judge::Run() {
  // Parsed whatever its length: deny rules hold even for a command that asks.
  ParsedCommand parsed = ParseCommandUnchecked(command_);
  switch (parsed.unreadable) {
    case Unreadable::kNo: break;
    case Unreadable::kTooLong:
      return {RuleDecision::kDeny, "", "",
              "the command is longer than " + std::to_string(kMaxReadableCommandBytes) + " bytes: too long to check"};
    case Unreadable::kTooDeep:
      return {RuleDecision::kDeny, "", "",
              "the command nests substitutions, subshells or blocks more than " + std::to_string(kMaxShellNesting) +
                  " levels deep: too deep to check"};
    case Unreadable::kTooSlow:
      return {RuleDecision::kDeny, "", "",
              "the command took longer than " + std::to_string(kParseTimeBudget.count() / 1000) +
                  " s to read: too complex to check"};
  }
  deadline_ = std::chrono::steady_clock::now() + kParseTimeBudget;
  for (const CommandPart& part : parsed.parts) {
    if (part.dynamic) continue;
    if (const std::string* r = ProgramMatch(rules_.deny, part)) {
      return {RuleDecision::kDeny, *r, part.text, "`" + Shown(part.text) + "` matches the deny rule '" + *r + "'"};
    }
  }
  if (command_.size() > kMaxParsedCommandBytes) {
    Ask("", "the command is longer than " + std::to_string(kMaxParsedCommandBytes) + " characters", CommandKey());
  }
  if (std::optional<RuleVerdict> denied = DenyFromSettings(parsed)) return *denied;
  for (const CommandPart& part : parsed.parts) {
    if (part.dynamic) {
      std::string why = part.why_dynamic.empty() ? "it computes the command it runs" : part.why_dynamic;
      Ask(part.text, "`" + Shown(part.text) + "`: " + why + ", so no rule can judge it", CommandKey());
      continue;
    }
    if (const std::string* r = ProgramMatch(rules_.ask, part)) {
      Ask(part.text, "`" + Shown(part.text) + "` matches the ask rule '" + *r + "'", "rule:" + *r, *r);
    }
    AskForLaterWords(part);
    AskForOpenWords(part);
    AskForPaths(part);
  }
  for (const std::string& literal : parsed.literals) {
    if (const std::string* r = DeniedIn(literal)) {
      Ask(literal, "the quoted text `" + Shown(literal) + "` runs what the deny rule '" + *r + "' matches if evaluated",
          CommandKey());
    }
  }
  if (!workspace_.empty()) {
    for (const Redirect& target : parsed.redirects) {
      if (Outside(target.target, target.directories)) {
        Ask(target.target, "the command writes or reads " + Shown(target.target) + ", outside the workspace",
            "path:" + target.target);
      }
    }
  }
  bool cdpath = false;
  for (const Assignment& a : parsed.assignments) cdpath = cdpath || a.name == "CDPATH";
  for (const CommandPart& part : parsed.parts) {
    if (Base(part.words[0]) != "shopt") continue;
    for (const std::string& w : part.words) cdpath = cdpath || w == "cdable_vars";
  }
  for (const DirectoryChange& d : parsed.directory_changes) {
    if (!d.known || cdpath) {
      Ask(d.text,
          "`" + Shown(d.text) +
              "` goes to a directory known only when it runs, so the paths after it cannot be checked",
          CommandKey());
    }
  }
  if (parses_left_ < 0 || out_of_time_) {
    Ask("", "the command holds too many command lines to check", CommandKey());
  }
  if (!parsed.complete) Ask("", "the command does not parse as shell", CommandKey());
  // From the same parse as the rules' (one reading of what runs).
  bool only_reads = CommandOnlyReads(parsed);
  if (ask_) {
    ask_->ask_keys = keys_;
    ask_->only_reads = only_reads;
    return *ask_;
  }
  RuleVerdict allowed{RuleDecision::kAllow, "", "", ""};
  allowed.only_reads = only_reads;
  return allowed;
}

}  // namespace

const char* RuleDecisionName(RuleDecision d) {
  switch (d) {
    case RuleDecision::kAllow: return "allow";
    case RuleDecision::kAsk: return "ask";
    case RuleDecision::kDeny: return "deny";
  }
  return "?";
}

bool OutsideWorkspace(const std::string& path, const std::string& workspace, const std::string& cwd) {
  if (path.empty() || workspace.empty()) return false;
  // ~ and $HOME expand to the home directory (a computed word comes as its
  // source text, quotes included).
  for (const char* home : {"~", "$HOME", "${HOME}", "\"$HOME", "\"${HOME}", "\"~"}) {
    if (path.rfind(home, 0) == 0) return true;
  }
  bool absolute = path[0] == '/';
  // Lexical resolution: ".." climbs, "." stays.
  std::vector<std::string> parts;
  std::string base = absolute ? "" : (cwd.empty() ? workspace : cwd);
  std::string joined = base + "/" + path;
  std::istringstream in(joined);
  std::string seg;
  while (std::getline(in, seg, '/')) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(seg);
  }
  std::string resolved;
  for (const std::string& p : parts) resolved += "/" + p;
  if (resolved.empty()) resolved = "/";
  auto below = [&resolved](const std::string& dir) {
    return resolved == dir ||
           (resolved.size() > dir.size() && resolved.compare(0, dir.size(), dir) == 0 && resolved[dir.size()] == '/');
  };
  if (below(workspace)) return false;
  // /proc/PID/root, cwd, fd/N and map_files lead anywhere.
  if (below("/proc") && parts.size() >= 3 &&
      (parts[2] == "root" || parts[2] == "cwd" || parts[2] == "fd" || parts[2] == "map_files" ||
       (parts[2] == "task" && parts.size() >= 5))) {
    return true;
  }
  if (below("/dev/fd")) return true;
  for (const char* own : {"/tmp", "/var/tmp", "/dev", "/proc"}) {
    if (below(own)) return false;
  }
  return true;
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + q + "'";
  }
  return out;
}

bool CommandRuleMatches(const std::string& rule, const std::vector<std::string>& words) {
  std::optional<CommandPattern> c = CommandRulePattern(rule);
  if (!c || c->words.empty() || words.empty()) return false;
  if (!c->glob.empty()) {
    std::string joined = Base(words[0]);
    for (size_t i = 1; i < words.size(); ++i) joined += " " + words[i];
    return fnmatch(c->glob.c_str(), joined.c_str(), 0) == 0 ||
           (!c->exact && fnmatch((c->glob + " *").c_str(), joined.c_str(), 0) == 0);
  }
  const std::vector<std::string>& r = c->words;
  if (r.size() > words.size() || (c->exact && r.size() != words.size())) return false;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string& word = i == 0 ? Base(words[0]) : words[i];
    if (!WordMatches(i == 0 ? Base(r[0]) : r[i], word)) return false;
  }
  return true;
}

RuleVerdict JudgeCommand(const std::string& command, const CommandRules& rules, const std::string& workspace,
                         const std::string& cwd) {
  return Judge(command, rules, workspace, cwd).Run();
}

}  // namespace odin
