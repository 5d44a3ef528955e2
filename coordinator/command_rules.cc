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

RuleVerdict JudgeCommand(const std::string& command, const CommandRules& rules) {
  StatusOr<ParsedCommand> parsed = ParseCommand(command);
  if (!parsed.ok()) return {RuleDecision::kAsk, "", "", "the command is " + parsed.status().message()};
  std::optional<RuleVerdict> ask;
  for (const CommandPart& part : parsed->parts) {
    if (part.dynamic) {
      if (!ask) ask = RuleVerdict{RuleDecision::kAsk, "", part.text,
                                  "`" + Shown(part.text) + "` computes the command it runs, so no rule can judge it"};
      continue;
    }
    if (const std::string* r = FirstMatch(rules.deny, part)) {
      return {RuleDecision::kDeny, *r, part.text, "`" + Shown(part.text) + "` matches the deny rule '" + *r + "'"};
    }
    if (!ask) {
      if (const std::string* r = FirstMatch(rules.ask, part)) {
        ask = RuleVerdict{RuleDecision::kAsk, *r, part.text,
                          "`" + Shown(part.text) + "` matches the ask rule '" + *r + "'"};
      }
    }
  }
  if (ask) return *ask;
  if (!parsed->complete) return {RuleDecision::kAsk, "", "", "the command does not parse as shell"};
  return {RuleDecision::kAllow, "", "", ""};
}

}  // namespace odin
