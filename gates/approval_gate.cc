#include "gates/approval_gate.h"

#include "base/file_util.h"

namespace odin {

ApprovalPolicy ParseApprovalPolicy(std::string_view name) {
  if (name == "allow") return ApprovalPolicy::kAllow;
  if (name == "prompt") return ApprovalPolicy::kPrompt;
  return ApprovalPolicy::kDeny;
}

ApprovalGate::Decision ApprovalGate::Decide(const std::vector<std::string>& keys, const std::string& saved_key,
                                            bool can_prompt) const {
  // The user allowed its kind for the session (every reason to ask), or asks
  // now (interactive), or the policy answers (headless).
  bool all_approved = !keys.empty();
  for (const std::string& k : keys) all_approved = all_approved && ApprovedForSession(k);
  if (all_approved) return Decision::kApprovedForSession;
  if (!saved_key.empty() && saved_.count(saved_key) != 0) return Decision::kApprovedSaved;
  if (policy_ == ApprovalPolicy::kPrompt && can_prompt) return Decision::kAskUser;
  return policy_ == ApprovalPolicy::kAllow ? Decision::kAllowedByPolicy : Decision::kDeniedByPolicy;
}

void ApprovalGate::ApproveForSession(const std::vector<std::string>& keys) {
  approved_.insert(keys.begin(), keys.end());
}

bool ApprovalGate::ApprovedForSession(const std::string& key) const {
  if (approved_.count(key) != 0) return true;
  // Reading in a directory was allowed for the session: so is reading below it.
  if (key.rfind("read:", 0) != 0) return false;
  for (std::string dir = key.substr(5); dir.size() > 1;) {
    dir = DirName(dir);
    if (approved_.count("read:" + dir) != 0) return true;
  }
  return false;
}

const char* ApprovalDecisionName(ApprovalGate::Decision decision) {
  switch (decision) {
    case ApprovalGate::Decision::kApprovedForSession: return "allowed for the session";
    case ApprovalGate::Decision::kApprovedSaved: return "allowed by a saved approval";
    case ApprovalGate::Decision::kAskUser: return "asked the user";
    case ApprovalGate::Decision::kAllowedByPolicy: return "allowed by policy";
    case ApprovalGate::Decision::kDeniedByPolicy: return "denied by policy";
  }
  return "denied by policy";
}

}  // namespace odin
