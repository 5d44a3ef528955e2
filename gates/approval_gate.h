#pragma once
// The approval gate (part of gate 8, the safeguards): a call that an ask rule
// matched, or a read outside the workspace, runs only with an approval. The
// user may give one for the call or for the session (every call with the
// same keys: an ask rule, a command, "read:<dir>" for a directory and what
// lies below it), or always (saved: config/approval_store.h), for exactly
// the call shown (its saved key: "command:<text>" or "call:<tool> <args>");
// without a user (headless) a saved approval, else the run's policy answers:
// allow or deny. Only what the rules left to ask comes here: a deny rule,
// the mode, the protected paths and the sandbox are never answered by it.
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
    kApprovedSaved,       // the user allowed exactly this call always (a saved approval)
    kAskUser,             // the call waits for the user
    kAllowedByPolicy,
    kDeniedByPolicy,
  };

  explicit ApprovalGate(ApprovalPolicy policy) : policy_(policy) {}

  // What happens to a call that needs approval for `keys`. can_prompt:
  // someone listens for approval requests (else prompt answers as deny).
  // saved_key: the call's key for saved approvals ("" when it has none).
  Decision Decide(const std::vector<std::string>& keys, const std::string& saved_key, bool can_prompt) const;
  // Saved approvals that answer in this session (the user's store).
  void AddSaved(const std::vector<std::string>& keys) { saved_.insert(keys.begin(), keys.end()); }
  // The user allowed these keys for the rest of the session.
  void ApproveForSession(const std::vector<std::string>& keys);
  // True iff key was approved for the session: itself, or for "read:<dir>",
  // a directory above it.
  bool ApprovedForSession(const std::string& key) const;

 private:
  ApprovalPolicy policy_;
  std::set<std::string> approved_;
  std::set<std::string> saved_;
};

// The gate event's words for a decision ("allowed for the session", ...).
const char* ApprovalDecisionName(ApprovalGate::Decision decision);

}  // namespace odin
