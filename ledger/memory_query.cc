#include "ledger/memory_query.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/file_tool_args.h"
#include "tools/text_file.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr size_t kDiffShown = 4096;
constexpr int kMaxLimit = 50;

std::string FirstLine(const std::string& text) {
  std::string line = ToDisplayText(text.substr(0, text.find('\n')));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

// Where a write went (absolute), or "".
std::string FileOf(const ExecutionRow& row, const std::string& workspace) {
  StatusOr<std::string> path = ResolveWorkspacePath(TargetFileOf(row.start.tool, row.start.args_json), workspace);
  return path.ok() ? *path : "";
}

json ValidationJson(const ValidationRecord& v, const std::string& workspace) {
  json out = {{"execution_id", v.execution_id},
              {"file", DisplayPath(v.path, workspace)},
              {"status", v.status},
              {"validator", v.validator},
              {"new_errors", v.new_errors}};
  if (!v.mutation_id.empty()) out["validates"] = v.mutation_id;
  if (!v.reason.empty()) out["reason"] = v.reason;
  if (!v.summary.empty()) out["summary"] = v.summary;
  return out;
}

json ExecutionJson(const ExecutionRow& row) {
  json out = {{"execution_id", row.start.execution_id}, {"tool", row.start.tool}, {"agent", row.start.agent_id}};
  if (!row.start.parent_id.empty()) out["parent_id"] = row.start.parent_id;
  json args = ParseJson(row.start.args_json);
  if (!args.is_discarded()) {
    // Contents can be long: keep what identifies the call.
    for (const char* big : {"content", "old_string", "new_string", "edits"}) {
      if (args.is_object() && args.contains(big)) {
        std::string text = args[big].is_string() ? args[big].get<std::string>() : args[big].dump();
        args[big] = text.size() > 200 ? text.substr(0, 200) + "... (" + std::to_string(text.size()) + " bytes)" : text;
      }
    }
    out["arguments"] = args;
  }
  if (!row.end) {
    out["status"] = "started";
    return out;
  }
  out["status"] = row.end->status;
  if (row.end->exit_code) out["exit_code"] = *row.end->exit_code;
  out["duration_ms"] = row.end->duration_us / 1000;
  if (!row.end->error.empty())
    out["error"] = FirstLine(row.end->error);
  else if (!row.end->output_head.empty())
    out["output_first_line"] = FirstLine(row.end->output_head);
  return out;
}

}  // namespace

StatusOr<std::string> RunMemoryQuery(Ledger* ledger, const std::string& session_id, const std::string& workspace,
                                     const std::string& args_json) {
  return AnswerMemoryQuery(ledger, session_id, workspace, ParseJson(args_json));
}

StatusOr<std::string> AnswerMemoryQuery(Ledger* ledger, const std::string& session_id, const std::string& workspace,
                                        const json& args) {
  if (!args.is_object()) return Status::InvalidArgument("memory_query", "arguments must be a JSON object");
  for (auto it = args.begin(); it != args.end(); ++it) {
    static const char* kKnown[] = {"query", "file_path", "execution_id", "tool", "status", "limit"};
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return it.key() == k; }) ==
        std::end(kKnown)) {
      return Status::InvalidArgument("memory_query", "unknown argument '" + it.key() + "'");
    }
    if (it.key() == "limit" ? !it->is_number_integer() : !it->is_string()) {
      return Status::InvalidArgument("memory_query", "'" + it.key() + "' has the wrong type");
    }
  }
  std::string query = args.value("query", "");
  int limit = std::clamp(args.value("limit", 10), 1, kMaxLimit);
  std::string file;
  if (args.contains("file_path")) {
    ASSIGN_OR_RETURN(file, ResolveWorkspacePath(args["file_path"].get<std::string>(), workspace));
  }
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(session_id));
  ASSIGN_OR_RETURN(std::vector<ValidationRecord> validations, ledger->ListValidations(session_id));
  std::map<std::string, const ValidationRecord*> validation_of;  // mutation id -> its validation
  for (const ValidationRecord& v : validations) {
    if (!v.mutation_id.empty()) validation_of[v.mutation_id] = &v;
  }
  json out = {{"query", query}};

  if (query == "last_edit") {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
      if (!IsWriteTool(it->start.tool) || !it->end || it->end->status != "ok") continue;
      std::string path = FileOf(*it, workspace);
      if (!file.empty() && path != file) continue;
      json edit = ExecutionJson(*it);
      edit["file"] = DisplayPath(path, workspace);
      ASSIGN_OR_RETURN(std::vector<Artifact> artifacts, ledger->ListArtifacts(it->start.execution_id));
      for (const Artifact& a : artifacts) {
        if (a.kind != "diff") continue;
        std::string diff = ToDisplayText(a.content);
        edit["diff"] = diff.size() > kDiffShown ? diff.substr(0, kDiffShown) + "\n[... diff cut ...]\n" : diff;
      }
      auto v = validation_of.find(it->start.execution_id);
      if (v != validation_of.end()) edit["validation"] = ValidationJson(*v->second, workspace);
      out["edit"] = edit;
      break;
    }
    if (!out.contains("edit")) out["edit"] = nullptr;
  } else if (query == "last_validation") {
    for (auto it = validations.rbegin(); it != validations.rend(); ++it) {
      if (!file.empty() && it->path != file) continue;
      json v = ValidationJson(*it, workspace);
      ASSIGN_OR_RETURN(std::vector<DiagnosticRecord> diagnostics, ledger->ListDiagnostics(it->execution_id));
      json list = json::array();
      for (const DiagnosticRecord& d : diagnostics) {
        if (list.size() >= static_cast<size_t>(kMaxLimit)) break;
        list.push_back({{"file", DisplayPath(d.path, workspace)},
                        {"line", d.line},
                        {"column", d.column},
                        {"severity", d.severity == 1   ? "error"
                                     : d.severity == 2 ? "warning"
                                                       : "note"},
                        {"code", d.code},
                        {"message", d.message},
                        {"new", d.is_new}});
      }
      v["diagnostics"] = list;
      out["validation"] = v;
      break;
    }
    if (!out.contains("validation")) out["validation"] = nullptr;
  } else if (query == "failed_attempts") {
    json attempts = json::array();
    for (auto it = rows.rbegin(); it != rows.rend() && attempts.size() < static_cast<size_t>(limit); ++it) {
      if (!IsWriteTool(it->start.tool) || !it->end) continue;
      std::string path = FileOf(*it, workspace);
      if (!file.empty() && path != file) continue;
      auto v = validation_of.find(it->start.execution_id);
      bool bad_validation =
          v != validation_of.end() && (v->second->status == "errors" || v->second->status == "timed_out");
      if (it->end->status == "ok" && !bad_validation) continue;
      json a = ExecutionJson(*it);
      a["file"] = DisplayPath(path, workspace);
      if (v != validation_of.end()) a["validation"] = ValidationJson(*v->second, workspace);
      attempts.push_back(a);
    }
    out["attempts"] = attempts;
  } else if (query == "executions") {
    json list = json::array();
    std::string id = args.value("execution_id", "");
    std::string tool = args.value("tool", "");
    std::string status = args.value("status", "");
    for (auto it = rows.rbegin(); it != rows.rend() && list.size() < static_cast<size_t>(limit); ++it) {
      if (!id.empty() && it->start.execution_id != id) continue;
      if (!tool.empty() && it->start.tool != tool) continue;
      if (!status.empty() && (it->end ? it->end->status : "started") != status) continue;
      json e = ExecutionJson(*it);
      if (IsWriteTool(it->start.tool)) e["file"] = DisplayPath(FileOf(*it, workspace), workspace);
      auto v = validation_of.find(it->start.execution_id);
      if (v != validation_of.end()) e["validation"] = ValidationJson(*v->second, workspace);
      list.push_back(e);
    }
    out["executions"] = list;
  } else if (query == "changes") {
    // The mutation records: file tools', commands' and external changes.
    ASSIGN_OR_RETURN(std::vector<MutationRecord> mutations, ledger->ListMutations(session_id));
    json list = json::array();
    for (auto it = mutations.rbegin(); it != mutations.rend() && list.size() < static_cast<size_t>(limit); ++it) {
      if (!file.empty() && it->path != file) continue;
      json m = {{"path", DisplayPath(it->path, workspace)},
                {"change", it->change},
                {"source", it->source},
                {"execution_id", it->execution_id.empty() ? json() : json(it->execution_id)},
                {"undoable", it->undoable}};
      if (it->change == "ignored") m["entries"] = it->entries;
      if (it->lines_added >= 0) m["lines_added"] = it->lines_added;
      if (it->lines_removed >= 0) m["lines_removed"] = it->lines_removed;
      auto v = validation_of.find(it->execution_id);
      if (v != validation_of.end() && v->second->path == it->path)
        m["validation"] = ValidationJson(*v->second, workspace);
      list.push_back(m);
    }
    out["changes"] = list;
  } else if (query == "reflections") {
    // The reflections that closed strict runs, this session's and earlier
    // ones' in this workspace, newest first.
    ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEventsOfKind("reflection", limit));
    json list = json::array();
    for (const GateEvent& e : events) {
      json d = ParseJson(e.detail_json);
      if (!d.is_object()) continue;
      list.push_back({{"session_id", e.session_id},
                      {"this_session", e.session_id == session_id},
                      {"created_at_ms", e.created_at_ms},
                      {"status", d.value("status", "")},
                      {"reflection", d.contains("answer") ? d["answer"] : json(d.value("text", ""))}});
    }
    out["reflections"] = list;
  } else {
    return Status::InvalidArgument(
        "memory_query",
        "query must be last_edit, last_validation, failed_attempts, executions, changes or reflections");
  }
  return out.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace odin
