#pragma once
// Git layouts that run programs: what in a directory git takes for a
// repository could make git run a program the next time anyone (the user,
// their shell prompt, an editor) runs git there. A command may make a
// repository (git init, git clone) or change one; what it made lands only
// when none of this is in it (DESIGN.md §9, docs/sandbox.md):
//
//   - a config (config, config.worktree) setting a key that names a
//     program: core.fsmonitor, core.hooksPath, core.sshCommand, core.pager,
//     core.editor, filter.*, diff.*.textconv, credential.helper, include and
//     includeIf, and the rest of GitConfigRunsPrograms' table;
//   - hooks other than git's own *.sample files;
//   - a commondir or objects/info/alternates (they send git elsewhere);
//   - the same in the git directories below it (modules/, worktrees/).
//
// And HEAD lands only when it parses as git reads it: a HEAD git cannot
// read makes git pass the directory by and take one above it (the
// workspace root laid out as a repository) for the repository.

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace odin {

class WorkspaceFiles;

// The first key in text (a git config file) that makes git run a program,
// as "section.key" or "section.subsection.key" ("core.fsmonitor",
// "filter.lfs.smudge"); "" if none. Text git itself could not parse, or
// that this reader cannot follow, is answered "(unparsable config)": when
// in doubt, it runs one.
std::string GitConfigRunsPrograms(std::string_view text);

// Whether text is a HEAD git reads: "ref: refs/..." (a well-formed ref
// name) or an object id (40 or 64 hex digits), with one trailing newline.
bool GitHeadParses(std::string_view text);

// Why the git directory at rel (in files; "" for files' root) could run a
// program or send git elsewhere, naming the file and the key ("config:
// core.fsmonitor", "hooks/pre-commit"); "" if nothing in it could. Reads
// through the safe file layer; a config that cannot be read (too large, a
// symlink outside) counts against it.
std::string GitDirRunsPrograms(const WorkspaceFiles& files, const std::string& rel);

// The names whose presence makes git take a directory for a git directory
// (HEAD, and objects/ and refs/ or commondir), as git's own check reads
// them.
bool LooksLikeGitDir(bool head, bool objects_dir, bool refs_dir, bool commondir);

// The git layouts a command's overlay would make, judged before it lands:
// the upper directory (what the command wrote) over the workspace. A path
// of the upper directory (relative) must not land when
//   - it is a HEAD of a directory git would take for a repository and it
//     does not parse (GitHeadParses);
//   - it is a new .git whose layout could run a program (GitDirRunsPrograms
//     of what the command wrote), or a .git that is not a directory;
//   - it is one of the names that make a repository (HEAD, objects, refs,
//     commondir, config, config.worktree, hooks) of a directory that is a
//     repository once it lands and could run a program then: by what the
//     command wrote in it, or, where the command made it a repository, by
//     what was there already (a repository's own "config" at the root).
// A repository that was one before keeps its own config: only what the
// command changed in it is judged (the user's core.pager is theirs).
//
// Thread-safety: none. Answers are remembered per directory.
class CommandGitLayouts {
 public:
  CommandGitLayouts(const WorkspaceFiles& workspace, const WorkspaceFiles& upper)
      : workspace_(workspace), upper_(upper) {}
  // Why rel must not land ("" if it may), for ApplyOverlayUpper's
  // must_not_land.
  std::string MustNotLand(const std::string& rel);

 private:
  // The names in dir (relative) that must not land, with why.
  const std::map<std::string, std::string>& Judge(const std::string& dir);
  bool InUpper(const std::string& rel) const;  // present in what the command wrote (a whiteout is not)

  const WorkspaceFiles& workspace_;
  const WorkspaceFiles& upper_;
  std::map<std::string, std::map<std::string, std::string>> judged_;
};

}  // namespace odin
