#pragma once
// Claude Code's definitions as the session uses them: custom slash commands,
// subagent types (AgentTool's subagent_type) and skills (the Skill tool).
// config/claude_defs.h reads them from their files.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

struct ClaudeDef {
  std::string name;         // "review-pr", "code-reviewer", "pdf"
  std::string description;  // one line ("" if none)
  std::string argument_hint;
  // Commands' allowed-tools, agents' tools: what they narrow to (nullopt:
  // no list, nothing narrowed).
  std::optional<std::vector<std::string>> tools;
  std::string model;   // as written; docs/claude-code.md says how it is used
  std::string body;    // the prompt, the system prompt, the skill's text
  std::string source;  // as shown: ".claude/commands/git/commit.md", "~/.claude/agents/x.md"
  std::string scope;   // "project" or "user"
  std::string group;   // a command's subdirectory ("git"), shown beside its description
  // A skill's directory (absolute) and the files in it beside SKILL.md
  // (relative to it, at most kMaxSkillFiles).
  std::string dir;
  std::vector<std::string> files;
};

struct ClaudeDefs {
  std::vector<ClaudeDef> commands;
  std::vector<ClaudeDef> agents;
  std::vector<ClaudeDef> skills;
  // One line each: a file not taken and why, a definition another shadows.
  std::vector<std::string> problems;
  const ClaudeDef* FindCommand(std::string_view name) const;
  const ClaudeDef* FindAgent(std::string_view name) const;
  const ClaudeDef* FindSkill(std::string_view name) const;
};

}  // namespace odin
