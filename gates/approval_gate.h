#pragma once
// The approval gate (part of gate 8, the safeguards): a call that an ask rule
// matched, or a read outside the workspace, runs only with an approval. The
// user may give one for the call or for the session (every call with the
// same keys: an ask rule, a command, "read:<dir>" for a directory and what
// lies below it); without a user (headless) the run's policy answers: allow
// or deny.
//
// This class holds the session's approvals and decides; the coordinator
// records the decision as a gate event and holds a call that waits for the
// user. Thread-safety: none.

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

// How a run answers a call that needs approval.
enum class ApprovalPolicy {
  kDeny,    // refused, with a clear result (headless default)
  kAllow,   // runs
  kPrompt,  // waits for the user's answer (interactive)
};
// "deny", "allow", "prompt"; deny for anything else.
ApprovalPolicy ParseApprovalPolicy(std::string_view name);

class ApprovalGate {
 public:
  enum class Decision {
    kApprovedForSession,  // the user allowed every key for the session
    kAskUser,             // the call waits for the user
    kAllowedByPolicy,
    kDeniedByPolicy,
  };

  explicit ApprovalGate(ApprovalPolicy policy) : policy_(policy) {}

  // What happens to a call that needs approval for `keys`. can_prompt:
  // someone listens for approval requests (else prompt answers as deny).
  Decision Decide(const std::vector<std::string>& keys, bool can_prompt) const;
  // The user allowed these keys for the rest of the session.
  void ApproveForSession(const std::vector<std::string>& keys);
  // True iff key was approved for the session: itself, or for "read:<dir>",
  // a directory above it.
  bool ApprovedForSession(const std::string& key) const;

 private:
  ApprovalPolicy policy_;
  std::set<std::string> approved_;
};

// The gate event's words for a decision ("allowed for the session", ...).
const char* ApprovalDecisionName(ApprovalGate::Decision decision);

}  // namespace odin
