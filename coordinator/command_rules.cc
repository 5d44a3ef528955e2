#include "coordinator/command_rules.h"

#include <optional>
#include <sstream>

#include "coordinator/command_parser.h"

namespace odin {

namespace {

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string Base(const std::string& w) { return w.substr(w.rfind('/') + 1); }

bool WordMatches(const std::string& pattern, const std::string& word) {
  if (!pattern.empty() && pattern.back() == '*') return word.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == word;
}

bool RuleMatches(const std::string& rule, const CommandPart& part) {
  std::vector<std::string> r = Words(rule);
  if (r.empty() || r.size() > part.words.size()) return false;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string& word = i == 0 ? Base(part.words[0]) : part.words[i];
    if (!WordMatches(i == 0 ? Base(r[0]) : r[i], word)) return false;
  }
  return true;
}

const std::string* FirstMatch(const std::vector<std::string>& rules, const CommandPart& part) {
  for (const std::string& r : rules) {
    if (RuleMatches(r, part)) return &r;
  }
  return nullptr;
}

std::string Shown(const std::string& text) { return text.size() > 200 ? text.substr(0, 197) + "..." : text; }

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
  bool absolute = path[0] == '/';
  if (!absolute && path.find("..") == std::string::npos) return false;  // stays below cwd
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
    return resolved == dir || (resolved.size() > dir.size() && resolved.compare(0, dir.size(), dir) == 0 &&
                               resolved[dir.size()] == '/');
  };
  if (below(workspace)) return false;
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

RuleVerdict JudgeCommand(const std::string& command, const CommandRules& rules, const std::string& workspace,
                         const std::string& cwd) {
  // Parsed whatever its length: deny rules hold even for a command that asks.
  ParsedCommand parsed_value;
  bool too_long = command.size() > kMaxParsedCommandBytes;
  if (too_long) {
    parsed_value = ParseCommandUnchecked(command);
  } else {
    parsed_value = *ParseCommand(command);
  }
  const ParsedCommand* parsed = &parsed_value;
  std::optional<RuleVerdict> ask;
  std::vector<std::string> keys;
  auto add_ask = [&ask, &keys](RuleVerdict v, std::string key) {
    keys.push_back(std::move(key));
    if (!ask) ask = std::move(v);
  };
  if (too_long) {
    add_ask({RuleDecision::kAsk, "", "", "the command is longer than " + std::to_string(kMaxParsedCommandBytes) +
                                             " characters"},
            "command:" + command);
  }
  for (const CommandPart& part : parsed->parts) {
    if (part.dynamic) {
      add_ask({RuleDecision::kAsk, "", part.text,
               "`" + Shown(part.text) + "` computes the command it runs, so no rule can judge it"},
              "command:" + command);
      continue;
    }
    if (const std::string* r = FirstMatch(rules.deny, part)) {
      return {RuleDecision::kDeny, *r, part.text, "`" + Shown(part.text) + "` matches the deny rule '" + *r + "'"};
    }
    if (const std::string* r = FirstMatch(rules.ask, part)) {
      add_ask({RuleDecision::kAsk, *r, part.text, "`" + Shown(part.text) + "` matches the ask rule '" + *r + "'"},
              "rule:" + *r);
      continue;
    }
    // A path outside the workspace in its arguments, unless an allow rule
    // vouches for the part.
    if (FirstMatch(rules.allow, part) == nullptr) {
      for (size_t i = 1; i < part.words.size(); ++i) {
        const std::string& w = part.words[i];
        if (w.empty() || w[0] == '-' || !OutsideWorkspace(w, workspace, cwd)) continue;
        add_ask({RuleDecision::kAsk, "", part.text, "`" + Shown(part.text) + "` names " + w + ", outside the workspace"},
                "path:" + w);
      }
    }
  }
  for (const std::string& target : parsed->redirects) {
    if (OutsideWorkspace(target, workspace, cwd)) {
      add_ask({RuleDecision::kAsk, "", target, "the command writes or reads " + target + ", outside the workspace"},
              "path:" + target);
    }
  }
  if (!parsed->complete) {
    add_ask({RuleDecision::kAsk, "", "", "the command does not parse as shell"}, "command:" + command);
  }
  if (ask) {
    ask->ask_keys = keys;
    return *ask;
  }
  return {RuleDecision::kAllow, "", "", ""};
}

}  // namespace odin
