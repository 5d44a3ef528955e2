#pragma once
// Coordinator: the single authority that runs tool calls.
//
// For each call it assigns an execution id and puts the call through the
// gates: the mode gate (the tool must belong to the call's mode), then, for
// tools that change files, the read-before-edit gate against the calling
// agent's file cache, one write per file at a time. A call that passes goes to
// a worker; its start is recorded in the ledger *before* the worker sees it,
// and its end (with the output, the diff and content hashes as artifacts)
// before the caller hears of it. A call a gate refuses is recorded too, as a
// rejected execution. TodoWrite runs here, in the coordinator.
//
// Each agent has its own file cache and todo list; a session's caches can be
// rebuilt from the ledger (ResumeSession), so scripted calls continue where
// they left off.
//
// Passive: calls advance only inside Poll(). Thread-safety: none.

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/process_launcher.h"
#include "base/status.h"
#include "coordinator/file_cache.h"
#include "coordinator/ledger.h"
#include "coordinator/todo_list.h"
#include "coordinator/worker_pool.h"
#include "coordinator/worker_transport.h"

namespace odin {

struct CoordinatorOptions {
  std::string session_kind = "exec";  // recorded with the session
  std::string workspace;              // absolute root, symlinks resolved
  std::string mode = "exec";          // default mode of calls
  std::string agent_id = "main";      // default agent of calls
  uint64_t artifact_cap_bytes = 8u << 20;
  FileCacheOptions file_cache;
  WorkerPoolOptions pool;
};

// What the caller hears about one call.
struct CallHandlers {
  std::function<void(const v1::ToolProgress&)> on_progress;
  // Called once, after the end is recorded. `recorded` is not OK iff the
  // ledger could not record the end.
  std::function<void(const v1::ToolResult&, const Status& recorded)> on_done;
};

class Coordinator final : private WorkerPool::Listener {
 public:
  Coordinator(CoordinatorOptions options, Clock* clock, ProcessLauncher* launcher,
              WorkerTransport* transport);
  ~Coordinator() override;

  // Starts the workers. Their sandboxes come up while the caller opens the
  // ledger, which is the slow part of a cold start.
  Status StartWorkers();
  // Records a new session in ledger, which must outlive the coordinator.
  // REQUIRES: called once (or ResumeSession), before Submit.
  Status AttachLedger(Ledger* ledger);
  // Continues session_id instead: its agents' file caches and todo lists are
  // rebuilt from the calls the ledger holds. NotFound if there is no such
  // session. REQUIRES: instead of AttachLedger.
  Status ResumeSession(Ledger* ledger, const std::string& session_id);

  // Queues a tool call. Returns its execution id.
  std::string Submit(ToolCall call, CallHandlers handlers);
  void Cancel(const std::string& execution_id);
  Status Poll(Duration max_wait, std::vector<PollFd>* extra_fds = nullptr);
  void Shutdown(Duration wait) { pool_.Shutdown(wait); }

  const std::string& session_id() const { return session_id_; }
  WorkerPool& pool() { return pool_; }
  // The files an agent has cached, for the planner's context.
  std::vector<CachedFileInfo> CachedFiles(const std::string& agent_id);
  const TodoList& Todos(const std::string& agent_id);
  // Called for each worker's Hello (e.g. to warn that it runs unsandboxed).
  std::function<void(const v1::Hello&)> on_worker_ready;

 private:
  struct Call {
    ToolCall call;
    CallHandlers handlers;
    SteadyTime dispatched_at{};
    bool started = false;
    std::string write_path;  // the file a writing tool holds the lock of
    std::string output;      // the first artifact_cap bytes of output, in arrival order
  };
  struct AgentState {
    std::unique_ptr<FileCache> cache;
    TodoList todos;
  };

  Status OnDispatch(const ToolCall& call, const std::string& worker_id) override;
  void OnProgress(const v1::ToolProgress& progress) override;
  void OnResult(const v1::ToolResult& result) override;
  void OnWorkerReady(const v1::Hello& hello) override;

  AgentState& Agent(const std::string& agent_id);
  // Ends a call without a worker (refused by a gate, or run here).
  void EndHere(const std::string& id, int tool_status, const Status& why, const std::string& text = "");
  void RunTodoWrite(const std::string& id);
  // Runs the read-before-edit gate for the next write queued on path, and
  // dispatches it or ends it; repeats until one is in flight or none is left.
  void DispatchNextWrite(const std::string& path);
  void ApplyToCache(const Call& c, const v1::ToolResult& r);
  std::string ResultJson(const Call& c, const v1::ToolResult& r) const;

  CoordinatorOptions o_;
  Ledger* ledger_ = nullptr;
  Clock* clock_;
  WorkerPool pool_;
  std::string session_id_;
  std::map<std::string, Call> calls_;                         // by execution id
  std::map<std::string, AgentState> agents_;                  // by agent id
  std::map<std::string, std::deque<std::string>> write_queues_;  // path -> execution ids; front is in flight
};

// Ledger names of statuses and exit reasons ("timed_out", "sandbox_setup_failed").
std::string ToolStatusName(int tool_status);
std::string ExitReasonName(int exit_reason);

}  // namespace odin
