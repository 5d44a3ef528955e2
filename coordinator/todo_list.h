#pragma once
// TodoList: an agent's task list, kept by the coordinator (TodoWrite replaces
// it whole) and recorded in the ledger with every change.

#include <string>
#include <vector>

#include "base/status.h"
#include "tools/file_tool_args.h"

namespace odin {

class TodoList {
 public:
  // Replaces the list with the one in TodoWrite's arguments (parsed once,
  // at Submit).
  Status Write(const nlohmann::json& arguments);
  const std::vector<TodoItem>& items() const { return items_; }
  // "[x] 1. done thing\n[>] 2. current\n[ ] 3. next\n" and a count line.
  std::string Render() const;

 private:
  std::vector<TodoItem> items_;
};

}  // namespace odin
