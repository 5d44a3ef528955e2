#pragma once
// ToolHost: what a planner loop needs of whoever runs its tool calls. In the
// coordinator's process that is the Coordinator itself; in a subagent worker
// it is a proxy that sends every call to the coordinator (subagent_worker),
// so the coordinator's gates, budgets and ledger see a subagent's calls as
// they see the main agent's.

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "coordinator/file_cache.h"
#include "coordinator/worker_pool.h"

namespace odin {

// The validation gate's latest verdict on a file the session changed.
struct FileVerdict {
  std::string path;         // absolute
  std::string mutation_id;  // the write it follows
  std::string check_id;     // the lsp_check execution
  std::string status;       // clean, errors, timed_out, no_validator
  std::string validator;
  int new_errors = 0;
  std::string summary;
  std::string reason;
};

// What the caller hears about one call.
struct CallHandlers {
  std::function<void(const v1::ToolProgress&)> on_progress;
  // Called once, after the end is recorded. `recorded` is not OK iff the
  // ledger could not record the end.
  std::function<void(const v1::ToolResult&, const Status& recorded)> on_done;
};

class ToolHost {
 public:
  virtual ~ToolHost() = default;
  // Queues a tool call. Returns its execution id.
  virtual std::string Submit(ToolCall call, CallHandlers handlers) = 0;
  // reason: a v1::CancelReason (2: the user's).
  virtual void Cancel(const std::string& execution_id, int reason = 2) = 0;
  // The files an agent has cached, for its system prompt.
  virtual std::vector<CachedFileInfo> CachedFiles(const std::string& agent_id) = 0;
  // An agent's todo list, rendered ("" when empty).
  virtual std::string TodosText(const std::string& agent_id) = 0;
  // Files whose latest verdict is errors or timed_out, sorted by path.
  virtual std::vector<FileVerdict> Blocking() const = 0;
  virtual const std::string& session_id() const = 0;
  // Records a gate event of an agent's loop (a stall, a refused completion).
  virtual void RecordGateEvent(const std::string& agent_id, const std::string& message_id, const std::string& kind,
                               const std::string& execution_id, const std::string& detail_json) = 0;
};

}  // namespace odin
