#pragma once
// Claude Code's definition files, read as Claude Code reads them: custom
// slash commands (commands/**/*.md), subagent types (agents/**/*.md) and
// skills (skills/NAME/SKILL.md), each Markdown with a YAML frontmatter.
// They come from the workspace's .claude/, Claude Code's user directory
// (~/.claude, $CLAUDE_CONFIG_DIR) and Odin's own ($XDG_CONFIG_HOME/odin;
// .odin/ is private state), a workspace's only once it is trusted (the
// config loader hashes what was read here, so what is used is what was
// trusted). docs/claude-code.md says what each field does here.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "planner/claude_defs.h"

namespace odin {

class WorkspaceFiles;

// A frontmatter as its files write it: "key: value" lines, a list as
// "[a, b]" or "- a" lines below its key, a "|" or ">" block. Read line by
// line rather than by a YAML parser: Claude Code's own documented examples
// ("argument-hint: [pr-number] [priority]") are not valid YAML, and a file
// Claude Code takes must be taken here.
struct Frontmatter {
  std::vector<std::pair<std::string, std::string>> fields;  // in order; a list's items joined by ", "
  std::string body;                                         // what follows the frontmatter
  // The field's value, "" if absent.
  std::string Get(std::string_view key) const;
  bool Has(std::string_view key) const;
};
Frontmatter ParseFrontmatter(std::string_view text);

// A tool list as written ("Read, Grep", "[Read, Bash(git add:*)]"): its
// entries, split at commas outside parentheses.
std::vector<std::string> SplitToolList(std::string_view text);

// The definitions below dir (a directory holding commands/, agents/,
// skills/), read through files (rooted at or above it). rel: dir relative
// to files' root ("" for the root, ".claude" in a workspace); shown_prefix:
// how sources are shown (".claude/", "~/.claude/"); scope: "project" or
// "user". *digest (if given) is fed every file read, name and bytes.
struct DefsDigest {
  std::string text;  // what the trust hash takes: "path\0sha256\0" per file
};
ClaudeDefs ReadClaudeDefs(const WorkspaceFiles& files, const std::string& rel, const std::string& shown_prefix,
                          const std::string& scope, DefsDigest* digest = nullptr);

// later over earlier, by name: the workspace's over the user's. What is
// shadowed is said in problems.
ClaudeDefs MergeDefs(ClaudeDefs earlier, ClaudeDefs later);

// Bounds on what is read.
constexpr size_t kMaxDefFiles = 500;             // per kind and directory
constexpr uint64_t kMaxDefBytes = 256 * 1024;    // per file
constexpr size_t kMaxSkillFiles = 200;           // listed per skill
constexpr size_t kMaxDefDepth = 4;               // commands/a/b/c/d.md
constexpr uint64_t kMaxDefTotalBytes = 4 << 20;  // read per directory (a workspace's .claude)

}  // namespace odin
