#include "ledger/review_evidence.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "ledger/ledger.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Cut(const std::string& s, size_t max, bool tail = false) {
  std::string t = ToDisplayText(s);
  if (t.size() <= max) return t;
  return tail ? "[...] " + t.substr(t.size() - max) : t.substr(0, max) + " [...]";
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

StatusOr<ReviewEvidence> AssembleReviewEvidence(Ledger* ledger, const ReviewEvidenceInput& in) {
  ReviewEvidence out;
  std::set<std::string> wanted(in.execution_ids.begin(), in.execution_ids.end());
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(in.session_id));
  std::map<std::string, const ExecutionRow*> by_id;
  for (const ExecutionRow& r : rows) by_id[r.start.execution_id] = &r;

  json calls = json::array();
  for (const std::string& id : in.execution_ids) {
    auto it = by_id.find(id);
    if (it == by_id.end()) continue;
    const ExecutionRow& r = *it->second;
    json call = {{"id", id}, {"tool", r.start.tool}, {"args", Cut(r.start.args_json, 600)}};
    if (r.end) {
      call["status"] = r.end->status;
      if (r.end->exit_code) call["exit_code"] = *r.end->exit_code;
      if (!r.end->error.empty()) call["error"] = Cut(r.end->error, 400);
      std::string output = r.end->output_tail.empty() ? r.end->output_head : r.end->output_tail;
      if (!output.empty()) call["output_tail"] = Cut(output, 1200, true);
    } else {
      call["status"] = "running";
    }
    calls.push_back(call);
    out.ids.push_back(id);
  }

  // The changes the calls made, with the diffs the ledger kept.
  json changes = json::array();
  std::set<std::string> mutation_ids;
  ASSIGN_OR_RETURN(std::vector<MutationRecord> mutations, ledger->ListMutations(in.session_id));
  std::map<std::string, std::string> diffs;  // execution id -> its diff artifact
  for (const MutationRecord& m : mutations) {
    if (wanted.count(m.execution_id) == 0 || m.change == "ignored") continue;
    json change = {{"id", m.id},
                   {"execution_id", m.execution_id},
                   {"path", DisplayPath(m.path, in.workspace)},
                   {"change", m.change},
                   {"source", m.source}};
    if (m.lines_added >= 0)
      change["lines"] = "+" + std::to_string(m.lines_added) + " -" + std::to_string(m.lines_removed);
    if (!m.note.empty()) change["note"] = Cut(m.note, 300);
    if (diffs.count(m.execution_id) == 0) {
      diffs[m.execution_id] = "";
      StatusOr<std::vector<Artifact>> artifacts = ledger->ListArtifacts(m.execution_id);
      if (artifacts.ok()) {
        for (const Artifact& a : *artifacts) {
          if (a.kind == "diff") diffs[m.execution_id] += a.content;
        }
      }
      if (!diffs[m.execution_id].empty()) change["diff"] = Cut(diffs[m.execution_id], 4000);
    }
    changes.push_back(change);
    mutation_ids.insert(m.id);
    out.ids.push_back(m.id);
  }

  // Their validations, and the checks run for the message.
  json validations = json::array();
  ASSIGN_OR_RETURN(std::vector<ValidationRecord> vs, ledger->ListValidations(in.session_id));
  for (const ValidationRecord& v : vs) {
    auto it = by_id.find(v.execution_id);
    std::string parent = it == by_id.end() ? "" : it->second->start.parent_id;
    if (wanted.count(v.execution_id) == 0 && wanted.count(parent) == 0 && mutation_ids.count(v.mutation_id) == 0) {
      continue;
    }
    json one = {{"id", v.execution_id},
                {"path", DisplayPath(v.path, in.workspace)},
                {"verdict", v.status},
                {"validator", v.validator},
                {"new_errors", v.new_errors}};
    if (!v.summary.empty()) one["summary"] = Cut(v.summary, 800);
    validations.push_back(one);
    out.ids.push_back(v.execution_id);
  }
  json checks = json::array();
  ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(in.session_id));
  for (const GateEvent& e : events) {
    if (e.kind != "check" || e.execution_id.empty() || wanted.count(e.execution_id) == 0) continue;
    json detail = ParseJson(e.detail_json);
    json one = {{"id", e.execution_id}};
    if (detail.is_object()) {
      for (const char* key : {"name", "status", "command", "exit_code"}) {
        if (detail.contains(key)) one[key] = detail[key];
      }
    }
    checks.push_back(one);
  }

  json doc = {{"user_messages", in.user_messages}};
  if (!in.plan_json.empty()) doc["plan"] = ParseJson(in.plan_json);
  doc["calls"] = calls;
  doc["changes"] = changes;
  doc["validations"] = validations;
  doc["checks"] = checks;
  if (!in.extra_json.empty()) {
    json extra = ParseJson(in.extra_json);
    if (extra.is_object()) doc.update(extra);
  }
  // Too big: the oldest calls' outputs go first, then the oldest calls.
  std::string text = Dump(doc);
  for (size_t i = 0; text.size() > in.max_bytes && i < doc["calls"].size(); ++i) {
    doc["calls"][i].erase("output_tail");
    doc["calls"][i]["args"] = Cut(doc["calls"][i].value("args", ""), 120);
    text = Dump(doc);
  }
  while (text.size() > in.max_bytes && !doc["calls"].empty()) {
    doc["calls"].erase(doc["calls"].begin());
    doc["calls_omitted"] = doc.value("calls_omitted", 0) + 1;
    text = Dump(doc);
  }
  out.json = text;
  return out;
}

}  // namespace odin
