#include "coordinator/mutation_holds.h"

#include "planner/workflows.h"

namespace odin {

bool MutationHolds::Set(const std::string& agent_id, MutationHold hold) {
  Held& held = by_agent_[agent_id];
  if (held.hold.rule == hold.rule && held.hold.reason == hold.reason && held.hold.max_files == hold.max_files) {
    return false;
  }
  // The file budget's count lasts the message (other holds may come and go
  // meanwhile).
  if (hold.rule.empty()) held.files.clear();
  held.hold = std::move(hold);
  return true;
}

MutationHolds::Held& MutationHolds::Owner(const std::string& agent_id) {
  std::string id = agent_id;
  for (int depth = 0; depth < 8 && !id.empty(); ++depth) {
    Held& held = by_agent_[id];
    if (!held.hold.rule.empty()) return held;
    id = parent_of_ ? parent_of_(id) : "";
  }
  return by_agent_[agent_id];
}

const MutationHold& MutationHolds::Of(const std::string& agent_id) { return Owner(agent_id).hold; }

bool MutationHolds::Allows(const std::string& agent_id, const std::string& relative) {
  Held& owner = Owner(agent_id);
  const MutationHold& hold = owner.hold;
  if (hold.rule.empty()) return true;
  if (hold.max_files > 0) {
    if (owner.files.count(relative) > 0) return true;
    if (owner.files.size() >= hold.max_files) return false;
    owner.files.insert(relative);
    return true;
  }
  return !hold.allowed.empty() && IsTestPath(relative, hold.allowed);
}

}  // namespace odin
