#pragma once
// Coordinator: the single authority that runs tool calls. For each call it
// assigns an execution id, records the start in the ledger *before* the call
// reaches a worker, relays progress, and records the end (with the full output
// as an artifact when head and tail do not hold it all) before telling the
// caller. Nothing runs that is not recorded.
//
// Passive: calls advance only inside Poll(). Thread-safety: none.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/process_launcher.h"
#include "base/status.h"
#include "coordinator/ledger.h"
#include "coordinator/worker_pool.h"
#include "coordinator/worker_transport.h"

namespace odin {

struct CoordinatorOptions {
  std::string session_kind = "exec";  // recorded with the session
  std::string workspace;              // absolute root
  std::string mode = "exec";          // recorded with every call
  std::string agent_id = "main";
  uint64_t artifact_cap_bytes = 8u << 20;
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
  // Records the session in ledger, which must outlive the coordinator.
  // REQUIRES: called once, before Submit.
  Status AttachLedger(Ledger* ledger);
  // Queues a tool call. Returns its execution id.
  std::string Submit(ToolCall call, CallHandlers handlers);
  void Cancel(const std::string& execution_id);
  Status Poll(Duration max_wait, std::vector<PollFd>* extra_fds = nullptr);
  void Shutdown(Duration wait) { pool_.Shutdown(wait); }

  const std::string& session_id() const { return session_id_; }
  WorkerPool& pool() { return pool_; }
  // Called for each worker's Hello (e.g. to warn that it runs unsandboxed).
  std::function<void(const v1::Hello&)> on_worker_ready;

 private:
  struct Call {
    std::string tool;
    std::string arguments_json;
    CallHandlers handlers;
    SteadyTime dispatched_at{};
    bool started = false;
    std::string output;  // the first artifact_cap bytes of output, in arrival order
  };

  Status OnDispatch(const ToolCall& call, const std::string& worker_id) override;
  void OnProgress(const v1::ToolProgress& progress) override;
  void OnResult(const v1::ToolResult& result) override;
  void OnWorkerReady(const v1::Hello& hello) override;

  CoordinatorOptions o_;
  Ledger* ledger_ = nullptr;
  Clock* clock_;
  WorkerPool pool_;
  std::string session_id_;
  std::map<std::string, Call> calls_;  // by execution id
};

// Ledger names of statuses and exit reasons ("timed_out", "sandbox_setup_failed").
std::string ToolStatusName(int tool_status);
std::string ExitReasonName(int exit_reason);

}  // namespace odin
