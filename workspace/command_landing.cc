#include "workspace/command_landing.h"

#include <algorithm>
#include <utility>

#include "base/file_util.h"
#include "workspace/protected_paths.h"

namespace odin {

CommandLandingRules::CommandLandingRules(std::string workspace, const WorkspaceFiles* workspace_files,
                                         const std::string& upper)
    : workspace_(std::move(workspace)), workspace_files_(workspace_files) {
  // Git layouts are judged on what the command wrote over the workspace,
  // through the safe file layer.
  StatusOr<WorkspaceFiles> upper_files = WorkspaceFiles::Open(upper);
  if (upper_files.ok() && workspace_files_ != nullptr) {
    upper_files_.emplace(std::move(*upper_files));
    layouts_.emplace(*workspace_files_, *upper_files_);
  }
}

bool CommandLandingRules::HadGit(const std::string& git_rel) {
  auto it = had_git_.find(git_rel);
  if (it == had_git_.end()) {
    it = had_git_.emplace(git_rel, workspace_files_ == nullptr || workspace_files_->Look(git_rel).exists()).first;
  }
  return it->second;
}

bool CommandLandingRules::MustNotLand(const std::string& rel) {
  // Where the first .git component ends.
  size_t git_end = std::string::npos;
  for (size_t start = 0; start <= rel.size() && git_end == std::string::npos;) {
    size_t end = std::min(rel.find('/', start), rel.size());
    if (rel.compare(start, end - start, ".git") == 0) git_end = end;
    start = end + 1;
  }
  if (git_end == std::string::npos) {
    if (IsProtectedPath(JoinPath(workspace_, rel), workspace_)) return true;
  } else if (HadGit(rel.substr(0, git_end))) {
    if (git_end == rel.size()) return true;  // a .git that was there, replaced
    if (IsGitControlPath(rel.substr(git_end + 1))) return true;
  }
  // A new repository is judged whole. Without the layer to read through,
  // nothing that makes a repository lands.
  if (!layouts_) return rel.find(".git") != std::string::npos || rel.ends_with("HEAD");
  return !layouts_->MustNotLand(rel).empty();
}

}  // namespace odin
