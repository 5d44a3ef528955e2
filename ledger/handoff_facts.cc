#include "ledger/handoff_facts.h"

#include <algorithm>
#include <map>
#include <vector>

#include "ledger/ledger.h"
#include "tools/workspace_path.h"

namespace odin {

namespace {

std::string FirstLine(const std::string& s, size_t max) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > max) line = line.substr(0, max) + "...";
  return line;
}

}  // namespace

StatusOr<std::string> HandoffFacts(Ledger* ledger, const std::string& session_id, const std::string& agent_id,
                                   const std::string& workspace, size_t max_bytes) {
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(session_id));
  std::map<std::string, const ExecutionRow*> mine;
  for (const ExecutionRow& r : rows) {
    if (r.start.agent_id == agent_id) mine[r.start.execution_id] = &r;
  }

  // Files changed, by path: the last call that changed each, in the order
  // of those last changes.
  ASSIGN_OR_RETURN(std::vector<MutationRecord> mutations, ledger->ListMutations(session_id));
  std::map<std::string, std::pair<size_t, std::string>> changed;  // display path -> (order, "modified by ...")
  for (size_t i = 0; i < mutations.size(); ++i) {
    const MutationRecord& m = mutations[i];
    if (m.agent_id != agent_id || m.execution_id.empty() || m.change == "ignored") continue;
    auto it = mine.find(m.execution_id);
    std::string tool = it == mine.end() ? m.source : it->second->start.tool;
    changed[DisplayPath(m.path, workspace)] = {i, m.change + " by " + m.execution_id + " (" + tool + ")"};
  }

  // Failed attempts, oldest first.
  std::vector<std::string> failures;
  for (const ExecutionRow& r : rows) {
    if (r.start.agent_id != agent_id || !r.end || r.end->status == "ok") continue;
    std::string why = !r.end->error.empty() ? r.end->error : r.end->exit_reason;
    if (r.end->exit_code && *r.end->exit_code != 0) why = "exit code " + std::to_string(*r.end->exit_code);
    failures.push_back(r.start.execution_id + " " + r.start.tool + " " + r.end->status + ": " +
                       FirstLine(r.start.args_json, 160) + " -> " + FirstLine(why, 200));
  }
  ASSIGN_OR_RETURN(std::vector<ValidationRecord> validations, ledger->ListValidations(session_id));
  for (const ValidationRecord& v : validations) {
    if (v.agent_id != agent_id || v.status != "errors" || v.new_errors == 0) continue;
    failures.push_back(v.execution_id + " validation of " + DisplayPath(v.path, workspace) + ": " +
                       std::to_string(v.new_errors) + " new errors: " + FirstLine(v.summary, 240));
  }
  ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(session_id));
  for (const GateEvent& e : events) {
    if (e.agent_id != agent_id || e.kind != "completion_refused") continue;
    failures.push_back("completion refused" + (e.execution_id.empty() ? "" : " (" + e.execution_id + ")") + ": " +
                       FirstLine(e.detail_json, 240));
  }

  // Both lists bounded, however long the session: the files the most
  // recently changed within a third of max_bytes; the first failures (what
  // was tried first is often what matters) and the newest in the rest.
  std::string out;
  if (!changed.empty()) {
    std::vector<std::pair<size_t, std::string>> lines;
    for (const auto& [path, how] : changed) lines.push_back({how.first, "- " + path + ": " + how.second + "\n"});
    std::sort(lines.begin(), lines.end());
    std::string list;
    size_t kept = 0;
    for (size_t i = lines.size(); i > 0 && list.size() + lines[i - 1].second.size() < max_bytes / 3; --i, ++kept) {
      list = lines[i - 1].second + list;
    }
    out += "Files changed so far (from the ledger):\n";
    if (kept < lines.size()) {
      out += "  (" + std::to_string(lines.size() - kept) + " more, changed earlier; memory_query lists them)\n";
    }
    out += list;
  }
  if (!failures.empty()) {
    constexpr size_t kFirstFailures = 2;
    std::string first, latest;
    size_t from = 0;
    for (; from < failures.size() && from < kFirstFailures; ++from) first += "- " + failures[from] + "\n";
    size_t latest_from = failures.size();
    while (latest_from > from &&
           out.size() + first.size() + latest.size() + failures[latest_from - 1].size() + 4 < max_bytes) {
      latest = "- " + failures[--latest_from] + "\n" + latest;
    }
    out += std::string(out.empty() ? "" : "\n") + "Failed attempts (from the ledger; do not repeat them unchanged):\n";
    out += first;
    if (latest_from > from) out += "  (" + std::to_string(latest_from - from) + " more omitted)\n";
    out += latest;
  }
  return out;
}

}  // namespace odin
