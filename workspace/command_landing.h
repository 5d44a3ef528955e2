#pragma once
// What must never land from a command's overlay (OverlayApplyOptions::
// must_not_land), the one rule for whoever lands it: the coordinator, for a
// command on this machine, and a host agent, for a command one of its
// workers ran over an overlay on that host (remote/host_agent.cc).
//
// Never lands: a protected name anywhere (IsProtectedPath), a .git that was
// there replaced, git's control files (IsGitControlPath) in a git directory
// that was there, and in a repository the command made, what could run a
// program (CommandGitLayouts). What git needs for ordinary work (objects,
// refs, index, logs, HEAD) lands, and so does a new repository (git init,
// git clone), as it would without the overlay.
//
// Thread-safety: none; answers are remembered.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "workspace/git_layouts.h"
#include "workspace/workspace_files.h"

namespace odin {

class CommandLandingRules {
 public:
  // workspace_files: the workspace through the safe file layer (null: none
  // to read through; then nothing that makes a repository lands). upper: the
  // overlay's upper directory.
  CommandLandingRules(std::string workspace, const WorkspaceFiles* workspace_files, const std::string& upper);
  CommandLandingRules(const CommandLandingRules&) = delete;
  CommandLandingRules& operator=(const CommandLandingRules&) = delete;

  // Whether what the command changed at rel (relative to the workspace) must not land.
  bool MustNotLand(const std::string& rel);

 private:
  bool HadGit(const std::string& git_rel);

  std::string workspace_;
  const WorkspaceFiles* workspace_files_;
  std::optional<WorkspaceFiles> upper_files_;
  std::optional<CommandGitLayouts> layouts_;
  std::map<std::string, bool> had_git_;
};

}  // namespace odin
