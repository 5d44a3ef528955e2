#pragma once
// Approvals that stick: the "always" answers to the approval gate
// (gates/approval_gate.h), saved in the user's config directory, never in a
// workspace: $XDG_CONFIG_HOME/odin/approvals.json, default
// ~/.config/odin/approvals.json:
//
//   {"version": 1,
//    "approvals": [{"key": "command:npm test", "workspace": "/abs/root",
//                   "saved_at_ms": N}, ...]}
//
// A key is what the user was shown and answered (an ask rule, a command's
// exact text, a directory to read, a host to fetch from); "workspace" is
// absent for an approval in every workspace. It answers only the approval
// gate: deny rules, the mode, the protected paths and the sandbox come first
// and are never answered by it. Locked and replaced atomically, and read
// only when it is the user's own (config/private_store.h).

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

struct SavedApproval {
  std::string key;
  std::string workspace;  // "" for every workspace
  int64_t saved_at_ms = 0;
};

class ApprovalStore {
 public:
  explicit ApprovalStore(std::string path) : path_(std::move(path)) {}
  // approvals.json in the user's config directory ("" when there is none).
  static std::string DefaultPath(const std::map<std::string, std::string>& env);

  const std::string& path() const { return path_; }

  // Every saved approval, in the order saved.
  StatusOr<std::vector<SavedApproval>> List() const;
  // The keys that answer for root: its own and every workspace's.
  StatusOr<std::vector<std::string>> KeysFor(const std::string& root) const;
  // Saves keys for workspace ("" for every one); a key saved already for
  // the same scope is not saved twice.
  Status Save(const std::vector<std::string>& keys, const std::string& workspace, int64_t now_ms) const;
  // Removes the approvals whose key is key, or the one numbered key as List
  // orders them (from 1). Returns what was removed (empty: nothing matched).
  StatusOr<std::vector<SavedApproval>> Remove(const std::string& key);

 private:
  std::string path_;
};

// "command npm test", "ask rule Bash(git push:*)", "read /etc and below",
// "fetch from example.com": a key as the user reads it.
std::string DescribeApprovalKey(const std::string& key);

}  // namespace odin
