#pragma once
// The reviewers' and workflows' mutation holds (planner/tool_host.h's
// MutationHold), by agent. A subagent works under the hold of the agent
// that started it, and so on up: its changes pass the same rules. A hold
// allows the paths its patterns name, or with max_files a number of files,
// counted for as long as the hold lasts. The coordinator refuses a write
// the hold does not allow and puts back what a command changed there
// (held_changes.cc).

#include <functional>
#include <map>
#include <set>
#include <string>

#include "planner/tool_host.h"

namespace odin {

class MutationHolds {
 public:
  // The agent that started agent_id ("" for a main agent).
  using ParentOf = std::function<std::string(const std::string& agent_id)>;

  explicit MutationHolds(ParentOf parent_of) : parent_of_(std::move(parent_of)) {}

  // Sets agent_id's own hold (rule "" lifts it): false when it has that
  // one already (nothing to record).
  bool Set(const std::string& agent_id, MutationHold hold);
  // The hold agent_id works under: its own, else its starter's, and so on
  // up (rule "" for none).
  const MutationHold& Of(const std::string& agent_id);
  // Whether that hold allows a change to `relative` (a path in the
  // workspace), counting it against max_files.
  bool Allows(const std::string& agent_id, const std::string& relative);

 private:
  struct Held {
    MutationHold hold;
    std::set<std::string> files;  // with hold.max_files: the paths counted
  };
  Held& Owner(const std::string& agent_id);

  ParentOf parent_of_;
  std::map<std::string, Held> by_agent_;
};

}  // namespace odin
