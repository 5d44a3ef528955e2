#include "coordinator/todo_list.h"

namespace odin {

Status TodoList::Write(const nlohmann::json& arguments) {
  ASSIGN_OR_RETURN(TodoArgs args, TodoArgsOf(arguments));
  items_ = std::move(args.todos);
  return Status::OK();
}

std::string TodoList::Render() const {
  std::string out;
  int done = 0, active = 0;
  for (const TodoItem& t : items_) {
    const char* mark = t.status == "completed" ? "[x]" : t.status == "in_progress" ? "[>]" : "[ ]";
    done += t.status == "completed";
    active += t.status == "in_progress";
    out += std::string(mark) + " " + t.id + ". " + t.content + "\n";
  }
  out += "Todo list updated: " + std::to_string(items_.size()) + " items, " + std::to_string(done) + " completed, " +
         std::to_string(active) + " in progress, " + std::to_string(items_.size() - done - active) + " pending\n";
  return out;
}

}  // namespace odin
