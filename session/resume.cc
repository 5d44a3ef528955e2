#include "session/resume.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "ledger/ledger.h"
#include "base/proc_info.h"
#include "workspace/workspace_files.h"

namespace odin {

using nlohmann::json;

namespace {}  // namespace

bool ResumableKind(const std::string& kind) {
  return kind == "agent" || kind == "interactive" || kind == "daemon" || kind == "acp";
}

StatusOr<std::string> PickResumableSession(const std::string& ledger_path, const std::string& id, bool newest) {
  if (!ExistsBelow(DirName(ledger_path), ledger_path.substr(ledger_path.rfind('/') + 1))) {
    return newest ? Status::NotFound("--continue", "this workspace has no session to continue yet")
                  : Status::NotFound("session '" + id + "'",
                                     "no such session in this workspace's ledger (it has none yet)");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Ledger> ledger, Ledger::OpenReadOnly(ledger_path));
  ASSIGN_OR_RETURN(VerifyReport report, ledger->Verify());
  if (!report.ok) {
    return Status::Corruption("resume", "the ledger's hash chain does not verify (" + report.problem +
                                            "); its records cannot be trusted to rebuild a session");
  }
  ASSIGN_OR_RETURN(std::vector<SessionRecord> sessions, ledger->ListSessions());
  const SessionRecord* found = nullptr;
  for (const SessionRecord& s : sessions) {
    if (newest) {
      if (ResumableKind(s.kind)) found = &s;
    } else if (s.id == id || (id.size() >= 8 && s.id.rfind(id, 0) == 0)) {
      if (found != nullptr && found->id != s.id) {
        return Status::InvalidArgument("session '" + id + "'", "the prefix names more than one session");
      }
      found = &s;
    }
  }
  if (found == nullptr) {
    return Status::NotFound(newest ? "--continue" : "session '" + id + "'",
                            newest ? "this workspace has no agent session to continue"
                                   : "no such session in this workspace's ledger (odin sessions lists them)");
  }
  if (!ResumableKind(found->kind)) {
    return Status::InvalidArgument("session " + found->id,
                                   "is an `odin " + found->kind + "` session, not an agent's: nothing to resume");
  }
  ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries, ledger->ListConversation(found->id, "main"));
  if (int64_t pid = RunningOwner(entries); pid > 0 && pid != getpid()) {
    return Status::FailedPrecondition("session " + found->id, "is still running in odin process " +
                                                                  std::to_string(pid) + " (end that process first)");
  }
  return found->id;
}

int64_t RunningOwner(const std::vector<ConversationEntry>& entries) {
  // The newest owner: alive (same boot, same process) means running.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->kind != "owner") continue;
    json o = ParseJson(it->content_json);
    if (!o.is_object()) return 0;
    int64_t pid = o.value("pid", int64_t{0});
    if (pid > 0 && o.value("boot_id", "") == BootId() && !o.value("start_time", "").empty() &&
        ProcessStartTime(pid) == o.value("start_time", "")) {
      return pid;
    }
    return 0;
  }
  return 0;
}

StatusOr<std::vector<std::string>> EndInterruptedCalls(Ledger* ledger, const std::string& session_id, int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(session_id));
  std::vector<std::string> ids;
  for (const ExecutionRow& r : rows) {
    if (r.end) continue;
    ExecutionEnd end;
    end.execution_id = r.start.execution_id;
    end.status = "interrupted";
    end.exit_reason = "interrupted";
    end.finished_at_ms = now_ms;
    end.error = "the odin process that ran this call ended before it did";
    RETURN_IF_ERROR(ledger->AddExecutionEnd(end, {}));
    ids.push_back(r.start.execution_id);
  }
  return ids;
}

bool LastRanOnThisBoot(const std::vector<ConversationEntry>& entries) {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->kind != "owner") continue;
    json o = ParseJson(it->content_json);
    return !o.is_object() || o.value("boot_id", "") == BootId();
  }
  return true;
}

std::string WhyAResumeLeavesWrites(const std::string& kind, bool call_ended, bool same_boot, bool may_hold) {
  if (!ResumableKind(kind)) return "an odin exec's call, never resumed";
  if (call_ended) return "an earlier resume closed its call without applying them";
  if (!same_boot) return "the machine restarted since, so its files may not all have reached the disk";
  if (may_hold) return "a workflow's or a reviewer's hold could have judged them";
  return "";
}

std::string SessionOwnerJson() {
  json owner = {
      {"pid", static_cast<int64_t>(getpid())}, {"boot_id", BootId()}, {"start_time", ProcessStartTime(getpid())}};
  return owner.dump();
}

}  // namespace odin
