// Rules that judge a call by what it names rather than by a command line:
// an MCP server's tools (mcp__SERVER__TOOL), WebFetch's domains
// (WebFetch(domain:HOST)) and the built-in tools' rules (tool_rules.h),
// written as Claude Code writes them.

#include "gates/tool_rules.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>

#include "base/file_util.h"
#include "gates/command_parser.h"
#include "tools/exec_command.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

// Claude Code's tools Odin has no entry for, so that a rule on one is read
// as a tool rule (and matches nothing here) rather than as a program's name.
constexpr const char* kClaudeOnlyTools[] = {"Agent",
                                            "WebSearch",
                                            "NotebookEdit",
                                            "NotebookRead",
                                            "BashOutput",
                                            "KillShell",
                                            "ExitPlanMode",
                                            "SlashCommand",
                                            "TaskOutput",
                                            "TaskStop",
                                            "ListMcpResourcesTool",
                                            "LSP",
                                            "ReadMcpResourceTool"};

bool KnownToolName(const std::string& name) {
  if (FindTool(name) != nullptr || name.rfind(kMcpToolPrefix, 0) == 0) return true;
  for (const std::string& n : ToolsForMode(Mode::kEdit)) {
    const ToolInfo* t = FindTool(n);
    if (t != nullptr && t->claude_code_name != nullptr && name == t->claude_code_name) return true;
  }
  return std::find(std::begin(kClaudeOnlyTools), std::end(kClaudeOnlyTools), name) != std::end(kClaudeOnlyTools);
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// The rule's name covers the tool called: its own name, its Claude Code
// name, Claude Code's name for the family ("Read" for every tool that reads
// files, "Edit" and "Write" for every one that writes one) or Agent's old
// name.
bool NameCovers(const std::string& name, const ToolInfo& t) {
  if (name == t.name || (t.claude_code_name != nullptr && name == t.claude_code_name)) return true;
  if (t.tool_class == ToolClass::kRead && t.handler != ToolHandler::kTodoWrite && name == "Read") {
    return t.handler == ToolHandler::kFileRead || t.handler == ToolHandler::kSearch;
  }
  if (t.tool_class == ToolClass::kWrite) return name == "Edit" || name == "Write";
  if (t.handler == ToolHandler::kSubagent) return name == "Agent" || name == "Task";
  return false;
}

}  // namespace

std::optional<ToolRule> ParseToolRule(const std::string& rule) {
  size_t open = rule.find('(');
  std::string name = rule.substr(0, open);
  if (name.empty() || !(isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return std::nullopt;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return std::nullopt;
  }
  if (open == std::string::npos) {
    // A bare name: a tool's as Claude Code writes it (capitalised, or an MCP
    // tool's); "symbols" or "make" stay Odin's command rules.
    bool capitalised = isupper(static_cast<unsigned char>(name[0])) != 0;
    if (!(capitalised || name.rfind(kMcpToolPrefix, 0) == 0) || !KnownToolName(name)) return std::nullopt;
    return ToolRule{name, std::nullopt};
  }
  if (!isupper(static_cast<unsigned char>(name[0])) || rule.back() != ')') return std::nullopt;
  return ToolRule{name, rule.substr(open + 1, rule.size() - open - 2)};
}

std::string ToolRuleProblem(const std::string& rule) {
  std::optional<ToolRule> r = ParseToolRule(rule);
  if (!r || !KnownToolName(r->tool)) return "not a rule on a tool Odin or Claude Code has";
  if (!r->specifier) return "";
  const std::string& spec = *r->specifier;
  if (spec.empty()) return "an empty specifier";
  if (r->tool == "WebFetch") return spec.rfind("domain:", 0) == 0 ? "" : "WebFetch rules name a domain:HOST";
  // Tool(param:value): a parameter match, which Odin does not read.
  size_t colon = spec.find(':');
  if (colon != std::string::npos && colon > 0 && spec.compare(colon, 2, ":*") != 0 &&
      std::all_of(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(colon),
                  [](char c) { return islower(static_cast<unsigned char>(c)) || c == '_'; })) {
    return "a parameter rule (" + spec.substr(0, colon) + ":...), which Odin does not read";
  }
  return "";
}

namespace {

// A Bash rule's specifier as words, quotes honoured ("a b" is one word).
std::vector<std::string> QuotedWords(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (isspace(static_cast<unsigned char>(c))) {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(word));
  return out;
}

}  // namespace

std::optional<CommandPattern> CommandRulePattern(const std::string& rule) {
  std::optional<ToolRule> r = ParseToolRule(rule);
  if (!r) return CommandPattern{Words(rule), false, ""};  // Odin's own: words, a prefix
  if (r->tool != "Bash" && r->tool != kExecuteCommandTool) return std::nullopt;
  std::string spec = r->specifier.value_or("*");
  CommandPattern c;
  bool prefix = false;
  if (spec.size() >= 2 && spec.compare(spec.size() - 2, 2, ":*") == 0) {
    spec.resize(spec.size() - 2);  // the legacy prefix form
    prefix = true;
  }
  c.words = QuotedWords(spec);
  if (c.words.size() > 1 && c.words.back() == "*") {  // "npm run test *"
    c.words.pop_back();
    prefix = true;
  }
  if (c.words.size() == 1 && c.words[0] == "*") return c;  // Bash(*): every command
  // A * anywhere but at the end of the last word spans words: a glob over
  // the whole command.
  for (size_t i = 0; i < c.words.size(); ++i) {
    size_t star = c.words[i].find('*');
    bool last_char_of_last = i + 1 == c.words.size() && star == c.words[i].size() - 1;
    if (star != std::string::npos && !last_char_of_last) {
      for (const std::string& w : c.words) c.glob += (c.glob.empty() ? "" : " ") + w;
      c.exact = !prefix;
      return c;
    }
  }
  bool ends_in_star = !c.words.empty() && c.words.back().back() == '*';
  c.exact = !prefix && !ends_in_star;
  return c;
}

std::vector<std::string> CommandRuleWords(const std::string& rule) {
  std::optional<CommandPattern> c = CommandRulePattern(rule);
  return c ? c->words : std::vector<std::string>();
}

std::string PathRulePattern(const std::string& specifier, const std::string& workspace, const std::string& home) {
  std::string spec = specifier;
  while (spec.size() > 1 && spec.back() == '/') spec.pop_back();  // a directory: what is below it too
  std::string pattern;
  if (spec.empty()) return "";
  // The workspace's and home's own names are literal: a "[1]" in them is no
  // character class.
  auto literal = [](const std::string& path) {
    std::string out;
    for (char c : path) {
      if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  };
  const std::string ws = literal(workspace);
  if (spec.rfind("//", 0) == 0) {
    pattern = spec.substr(1);
  } else if (spec == "~" || spec.rfind("~/", 0) == 0) {
    if (home.empty()) return "";
    pattern = literal(home) + spec.substr(1);
  } else if (spec[0] == '/') {
    pattern = ws + spec;
  } else if (spec.rfind("./", 0) == 0) {
    pattern = ws + spec.substr(1);
  } else if (spec.find('/') != std::string::npos) {
    pattern = ws + "/" + spec;
  } else {
    pattern = ws + "/**/" + spec;  // gitignore: a bare name at any depth
  }
  return LexicalPath(pattern, "/");
}

bool PathRuleMatches(const std::string& specifier, const std::string& path, const std::string& workspace,
                     const std::string& home) {
  std::string pattern = PathRulePattern(specifier, workspace, home);
  if (pattern.empty()) return false;
  return PathPatternCovers(pattern, path);
}

std::vector<std::string> UnreadablePatterns(const CommandRules& rules, const std::string& workspace,
                                            const std::string& home) {
  std::vector<std::string> out;
  for (const std::string& rule : rules.deny) {
    std::optional<ToolRule> r = ParseToolRule(rule);
    if (!r || r->tool != "Read" || !r->specifier) continue;
    std::string pattern = PathRulePattern(*r->specifier, workspace, home);
    if (!pattern.empty()) out.push_back(std::move(pattern));
  }
  return out;
}

RuleVerdict JudgeToolRules(const ToolRuleSubject& call, const CommandRules& rules, const std::string& workspace,
                           const std::string& home) {
  const ToolInfo& t = *call.tool;
  auto matches = [&](const std::string& text) {
    std::optional<ToolRule> r = ParseToolRule(text);
    if (!r || !NameCovers(r->tool, t)) return false;
    if (!r->specifier || *r->specifier == "*") return true;
    if (t.handler == ToolHandler::kSubagent) return *r->specifier == call.subagent_type;
    return !call.path.empty() && PathRuleMatches(*r->specifier, call.path, workspace, home);
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (!matches(rule)) continue;
      std::string subject = call.path.empty() ? std::string(t.name) : std::string(t.name) + " of " + call.path;
      RuleVerdict v{decision, rule, subject, subject + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"rule:" + rule};
      return v;
    }
  }
  return RuleVerdict();
}

namespace {

// The loop's own bookkeeping (todos, the ledger's memory, the plan, the
// conversation): no tool list leaves them out.
bool Bookkeeping(const ToolInfo& t) {
  return t.handler == ToolHandler::kTodoWrite || t.handler == ToolHandler::kMemoryQuery ||
         t.handler == ToolHandler::kContextSummarizer || t.handler == ToolHandler::kPlanUpdate;
}

// A tool list names each tool (Claude Code's agents list Read, Grep and
// Glob one by one): no families here.
bool NamesExactly(const std::string& name, const ToolInfo& t) {
  return name == t.name || (t.claude_code_name != nullptr && name == t.claude_code_name) ||
         (t.handler == ToolHandler::kSubagent && (name == "Agent" || name == "Task"));
}

const std::string* FirstRule(const std::vector<std::string>& rules, const std::vector<std::string>& words) {
  for (const std::string& r : rules) {
    if (CommandRuleMatches(r, words)) return &r;
  }
  return nullptr;
}

std::string ListShown(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& r : list) out += (out.empty() ? "" : ", ") + r;
  return "(" + out + ")";
}

}  // namespace

namespace {

// What a tool list cannot read safely, found in the text: the shell's
// places that evaluate a string as code or set variables without an
// assignment the parser lists (arithmetic, [[ ]], ${...} operators,
// declare -n, read, for, printf -v, ...). The list is narrowing: a
// command it cannot judge is outside it.
bool Unjudgeable(const std::string& command) {
  std::string outside_single;  // single-quoted text cannot run
  std::string bare;            // neither can double-quoted words name a builtin
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char ch = command[i];
    if (quote == '\'') {
      if (ch == '\'') quote = 0;
      continue;
    }
    if (ch == '\\' && i + 1 < command.size()) {
      outside_single += command.substr(i, 2);
      if (quote == 0) bare += ' ';
      ++i;
      continue;
    }
    if (quote == '"') {
      outside_single += ch;
      if (ch == '"') quote = 0;
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
      if (ch == '"') outside_single += ch;
      bare += ' ';
      continue;
    }
    outside_single += ch;
    bare += ch;
  }
  for (const char* evaluating : {"((", "[[", "${", "$["}) {
    if (outside_single.find(evaluating) != std::string::npos) return true;
  }
  static const char* const kSetters[] = {"declare", "typeset",   "export",  "readonly", "local",    "let",    "read",
                                         "mapfile", "readarray", "getopts", "for",      "select",   "unset",  "alias",
                                         "set",     "shopt",     "trap",    "enable",   "hash",     "source", ".",
                                         "eval",    "exec",      "command", "builtin",  "function", "coproc", "case"};
  // Only a word in a command's place is a builtin: `git add .` is not
  // `. file`, `grep -r for src` no loop.
  auto is_setter = [](const std::string& w) {
    return std::any_of(std::begin(kSetters), std::end(kSetters), [&w](const char* s) { return w == s; });
  };
  static const char* const kLeaders[] = {"then", "do", "else", "elif", "if", "while", "until", "!", "time"};
  std::string word;
  bool command_place = true;
  for (char ch : bare + "\n") {
    bool space = ch == ' ' || ch == '\t';
    bool separator = ch == '\n' || ch == ';' || ch == '&' || ch == '|' || ch == '(' || ch == ')' || ch == '{' ||
                     ch == '}' || ch == '`';
    if (!space && !separator) {
      word += ch;
      continue;
    }
    if (!word.empty()) {
      if (command_place && is_setter(word)) return true;
      command_place = command_place && std::any_of(std::begin(kLeaders), std::end(kLeaders),
                                                   [&word](const char* l) { return word == l; });
      word.clear();
    }
    if (separator) command_place = true;
  }
  return false;
}

}  // namespace

bool CommandWithin(const std::string& command, const std::vector<std::string>& rules, const std::string& cwd) {
  if (command.size() > kMaxParsedCommandBytes || Unjudgeable(command)) return false;
  ParsedCommand parsed = ParseCommandUnchecked(command);
  if (parsed.unreadable != Unreadable::kNo || !parsed.complete || parsed.parts.empty()) return false;
  // A list that names commands names no file to redirect to, no variable
  // that changes what a named command does (PATH, GIT_*, LD_PRELOAD), and
  // no quoted text that runs when evaluated.
  if (parsed.redirect_writes || !parsed.assignments.empty() || !parsed.literals.empty()) return false;
  bool moved = !cwd.empty() && cwd != ".";
  return std::all_of(parsed.parts.begin(), parsed.parts.end(), [&](const CommandPart& part) {
    // What finally runs must match, not a wrapper around it (timeout, env,
    // xargs): "Bash(timeout:*)" does not let `timeout 5 rm -rf x` in. What
    // is known only when it runs, takes arguments from its input, or is
    // configured on the spot (git -c) is out.
    if (part.dynamic || part.input_arguments || part.programs.size() > 1 || !part.git_config.empty() ||
        part.words.empty() || part.written.empty()) {
      return false;
    }
    // git pointed at another repository or configuration (a planted
    // evil/config's core.fsmonitor) is not the git the rule names.
    if (part.words[0].substr(part.words[0].rfind('/') + 1) == "git") {
      for (const std::string& w : part.written) {
        for (const char* option :
             {"-C", "--git-dir", "--work-tree", "--exec-path", "--config-env", "--namespace", "--super-prefix", "-c"}) {
          if (w == option || w.rfind(std::string(option) + "=", 0) == 0) return false;
        }
      }
    }
    const std::string* rule = FirstRule(rules, part.words);
    if (rule == nullptr) return false;
    // A program named by a path (or by a word with '=' in it, which only a
    // file can be here) is the one the rule names, from where the command
    // starts: ./git is not "git", tools/ok.sh not scripts/ok.sh.
    const std::string& program = part.written[0];
    if (program.find_first_of("/=") == std::string::npos) return true;
    std::optional<CommandPattern> pattern = CommandRulePattern(*rule);
    bool here = !moved && part.directories == std::vector<std::string>{""};
    return here && pattern && !pattern->words.empty() && pattern->words[0] == program;
  });
}

bool ToolListOffers(const std::vector<std::string>& list, const std::string& tool) {
  if (tool.rfind(kMcpToolPrefix, 0) == 0) return !JudgeToolName(tool, {{}, {}, list}).rule.empty();
  const ToolInfo* t = FindTool(tool);
  if (t == nullptr) return false;
  if (Bookkeeping(*t)) return true;
  return std::any_of(list.begin(), list.end(), [t](const std::string& rule) {
    std::optional<ToolRule> r = ParseToolRule(rule);
    return r && NamesExactly(r->tool, *t);
  });
}

std::string ToolListRefusal(const std::vector<std::string>& list, const std::string& tool,
                            const ToolRuleSubject& subject, const std::string& command, const std::string& workspace,
                            const std::string& home, const std::string& cwd) {
  std::string shown = ListShown(list);
  if (tool.rfind(kMcpToolPrefix, 0) == 0) {
    return JudgeToolName(tool, {{}, {}, list}).rule.empty() ? tool + " is not in the tool list " + shown : "";
  }
  if (subject.tool == nullptr) return tool + " is not in the tool list " + shown;
  const ToolInfo& t = *subject.tool;
  if (Bookkeeping(t)) return "";
  if (t.handler == ToolHandler::kCommand) {
    std::vector<std::string> commands;
    for (const std::string& rule : list) {
      std::optional<ToolRule> r = ParseToolRule(rule);
      if (!r || !NamesExactly(r->tool, t)) continue;
      if (!r->specifier || *r->specifier == "*") return "";
      commands.push_back(rule);
    }
    if (!commands.empty() && CommandWithin(command, commands, cwd)) return "";
    return commands.empty() ? std::string(t.name) + " is not in the tool list " + shown
                            : "`" + (command.size() > 200 ? command.substr(0, 197) + "..." : command) +
                                  "` is not a command the tool list names " + shown;
  }
  for (const std::string& rule : list) {
    std::optional<ToolRule> r = ParseToolRule(rule);
    if (!r || !NamesExactly(r->tool, t)) continue;
    if (!JudgeToolRules(subject, {{}, {}, {rule}}, workspace, home).rule.empty()) return "";
  }
  std::string what = subject.path.empty() ? std::string(t.name) : std::string(t.name) + " of " + subject.path;
  return what + " is not in the tool list " + shown;
}

RuleVerdict JudgeToolName(const std::string& tool, const CommandRules& rules) {
  auto matches = [&tool](const std::string& rule) {
    if (!rule.empty() && rule.back() == '*') return tool.compare(0, rule.size() - 1, rule, 0, rule.size() - 1) == 0;
    return tool == rule ||
           (rule.rfind("mcp__", 0) == 0 && rule.find("__", 5) == std::string::npos && tool.rfind(rule + "__", 0) == 0);
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (rule.empty() || !matches(rule)) continue;
      RuleVerdict v{decision, rule, tool, tool + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"rule:" + rule};
      return v;
    }
  }
  return RuleVerdict();
}

RuleVerdict JudgeWebFetch(const std::string& host, const CommandRules& rules) {
  auto matches = [&host](const std::string& rule) {
    if (rule == "WebFetch") return true;
    const std::string prefix = "WebFetch(domain:";
    if (rule.size() <= prefix.size() + 1 || rule.compare(0, prefix.size(), prefix) != 0 || rule.back() != ')') {
      return false;
    }
    std::string domain = rule.substr(prefix.size(), rule.size() - prefix.size() - 1);
    for (char& ch : domain) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    if (domain.rfind("*.", 0) == 0) {
      std::string parent = domain.substr(1);  // ".example.com"
      return host.size() > parent.size() && host.compare(host.size() - parent.size(), parent.size(), parent) == 0;
    }
    return host == domain;
  };
  for (auto [list, decision, what] : {std::tuple{&rules.deny, RuleDecision::kDeny, "denied"},
                                      {&rules.ask, RuleDecision::kAsk, "needs approval"},
                                      {&rules.allow, RuleDecision::kAllow, "allowed"}}) {
    for (const std::string& rule : *list) {
      if (!matches(rule)) continue;
      RuleVerdict v{decision, rule, host, "fetching " + host + " " + what + " by rule '" + rule + "'", {}};
      if (decision == RuleDecision::kAsk) v.ask_keys = {"webfetch:" + host};
      return v;
    }
  }
  return RuleVerdict{
      RuleDecision::kAsk,
      "",
      host,
      "no permission rule allows fetching " + host + " (permissions.allow: WebFetch(domain:" + host + "))",
      {"webfetch:" + host}};
}

}  // namespace odin
