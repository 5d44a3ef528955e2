#include "planner/claude_defs.h"

namespace odin {
namespace {

const ClaudeDef* Find(const std::vector<ClaudeDef>& list, std::string_view name) {
  for (const ClaudeDef& d : list) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace

const ClaudeDef* ClaudeDefs::FindCommand(std::string_view name) const { return Find(commands, name); }
const ClaudeDef* ClaudeDefs::FindAgent(std::string_view name) const { return Find(agents, name); }
const ClaudeDef* ClaudeDefs::FindSkill(std::string_view name) const { return Find(skills, name); }

}  // namespace odin
