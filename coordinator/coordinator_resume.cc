// The coordinator's side of taking a session up again (--resume, a fork's
// first resume) and of a conversation losing calls (a compaction's masked
// calls, a rewind's taken-back ones): what goes back into the agents' file
// caches, todo lists and the files' verdicts, and what leaves them.

#include <algorithm>
#include <cstdint>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/json_input.h"
#include "coordinator/coordinator.h"
#include "ledger/forks.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

// The calls whose output a compaction (its gate event's detail) masked.
std::vector<std::string> MaskedCalls(const json& detail) {
  std::vector<std::string> ids;
  if (!detail.is_object()) return ids;
  for (const json& id : detail.value("masked", json::array())) {
    if (id.is_string()) ids.push_back(id.get<std::string>());
  }
  return ids;
}

}  // namespace

void Coordinator::ForgetCompactedFiles(const std::string& agent_id, const std::string& detail_json) {
  // The model no longer sees what the masked calls read or wrote: an edit
  // based on those bytes must meet the read-before-edit gate again.
  // Those are the files each masked call put in the cache (its recorded
  // result says which: Read, Grep's content, a write), and the files the
  // calls named.
  json detail = ParseJson(detail_json);
  if (!detail.is_object()) return;
  FileCache& cache = *Agent(agent_id).cache;
  for (const json& f : detail.value("files", json::array())) {
    if (!f.is_string()) continue;
    if (StatusOr<std::string> path = ResolvePath(f.get<std::string>(), o_.workspace); path.ok()) {
      cache.Invalidate(*path);
    }
  }
  if (ledger_ == nullptr) return;
  for (const std::string& id : MaskedCalls(detail)) {
    StatusOr<ExecutionRow> row = ledger_->FindExecution(id);
    if (!row.ok() || !row->end || row->start.agent_id != agent_id) continue;
    json result = ParseJson(row->end->result_json);
    if (!result.is_object() || !result.contains("cache") || !result["cache"].is_array()) continue;
    for (const json& f : result["cache"]) {
      if (f.is_object() && f.contains("path") && f["path"].is_string()) cache.Invalidate(f["path"].get<std::string>());
    }
  }
}

Status Coordinator::ResumeSession(Ledger* ledger, const std::string& session_id) {
  ledger_ = ledger;
  RETURN_IF_ERROR(ledger_->FindSession(session_id).status());
  session_id_ = session_id;
  // A fork (session/rewind.h) goes on from what the sessions it was copied
  // from did until the copy: their calls first, oldest session first.
  std::vector<std::string> lineage;
  std::vector<ExecutionRow> rows;
  std::vector<GateEvent> events;
  int64_t until = INT64_MAX;
  for (std::string id = session_id; !id.empty() && lineage.size() < 64;) {
    if (std::find(lineage.begin(), lineage.end(), id) != lineage.end()) break;
    lineage.push_back(id);
    ASSIGN_OR_RETURN(std::vector<ExecutionRow> own, ledger_->ListSessionExecutions(id));
    ASSIGN_OR_RETURN(std::vector<GateEvent> own_events, ledger_->ListGateEvents(id));
    std::erase_if(own, [&](const ExecutionRow& r) { return r.start.started_at_ms > until; });
    std::erase_if(own_events, [&](const GateEvent& e) { return e.created_at_ms > until; });
    rows.insert(rows.begin(), own.begin(), own.end());
    events.insert(events.begin(), own_events.begin(), own_events.end());
    id.clear();
    for (const GateEvent& e : own_events) {
      std::optional<ForkOrigin> origin = ForkOriginIn(e);
      if (!origin) continue;
      id = origin->session_id;
      until = std::min(until, origin->at_ms);
    }
  }
  // The latest verdict of each file the session changed, so a blocked
  // session stays blocked (and its forks).
  RETURN_IF_ERROR(validation_.Resume(ledger_, lineage, rows));
  // Calls whose output a compaction masked or a rewind took back: the model
  // no longer sees what they read, so it does not go back into the cache.
  // A rewind's are gone from the conversation altogether: their todo
  // lists too.
  std::set<std::string> masked, rewound;
  for (const GateEvent& e : events) {
    if (e.kind != "compaction" && e.kind != "rewind") continue;
    for (std::string& id : MaskedCalls(ParseJson(e.detail_json))) {
      if (e.kind == "rewind") rewound.insert(id);
      masked.insert(std::move(id));
    }
  }
  // Replay what each successful call did to its agent's cache and todos.
  for (const ExecutionRow& row : rows) {
    if (!row.end || row.end->status != "ok") continue;
    AgentState& agent = Agent(row.start.agent_id);
    if (rewound.count(row.start.execution_id) != 0) continue;
    if (HandlerOf(row.start.tool) == ToolHandler::kTodoWrite) {
      Status replayed = agent.todos.Write(ParseJson(row.start.args_json));  // the ledger's record
      if (!replayed.ok()) spdlog::warn("cannot replay {}: {}", row.start.execution_id, replayed.message());
      continue;
    }
    if (masked.count(row.start.execution_id) != 0) continue;
    json result = ParseJson(row.end->result_json);
    if (!result.is_object() || !result.contains("cache")) continue;
    for (const json& f : result["cache"]) {
      std::vector<std::pair<uint32_t, uint32_t>> ranges;
      for (const json& r : f.value("ranges", json::array())) ranges.push_back({r[0], r[1]});
      std::string path = f.value("path", "");
      agent.cache->RecordReadRanges(
          path, f.value("sha256", ""), f.value("size", 0), f.value("total_lines", 0), f.value("mtime_ns", int64_t{0}),
          f.value("full", false) || f.value("written", false), ranges, f.value("written", false));
    }
  }
  return Status::OK();
}

}  // namespace odin
