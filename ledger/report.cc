#include "ledger/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/money.h"
#include "base/terminal_text.h"
#include "tools/file_tool_args.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.rfind("- ", 0) == 0) line = line.substr(2);
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

// The last lines of a failed check's output (up to 15 lines, 2,000 bytes),
// control characters made visible.
std::string FailedOutputTail(Ledger* ledger, const std::string& execution_id) {
  constexpr size_t kMaxLines = 15;
  constexpr size_t kMaxBytes = 2000;
  StatusOr<ExecutionRow> row = ledger->FindExecution(execution_id);
  if (!row.ok() || !row->end) return "";
  std::string out = row->end->output_tail.empty() ? row->end->output_head : row->end->output_tail;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.size() > kMaxBytes) out = out.substr(out.size() - kMaxBytes);
  size_t lines = 0;
  for (size_t i = out.size(); i-- > 0;) {
    if (out[i] == '\n' && ++lines == kMaxLines) {
      out = out.substr(i + 1);
      break;
    }
  }
  return VisibleControls(out);
}

// The reviewers' and workflows' events (planner/agent_review.cc): true if
// `e` was one.
bool AddReviewEvent(const GateEvent& e, Report* report) {
  if (e.kind != "review" && e.kind != "plan" && e.kind != "workflow" && e.kind != "batch_item" &&
      e.kind != "reflection") {
    return false;
  }
  json d = ParseJson(e.detail_json);
  if (!d.is_object()) return true;
  if (e.kind == "workflow") {
    report->workflow = d.value("workflow", "") + " (chosen by " + d.value("chosen_by", "?") + ")";
  } else if (e.kind == "plan") {
    report->plan_revision = d.value("revision", 0);
    if (d.contains("plan") && d["plan"].is_object()) report->plan_intent = d["plan"].value("intent", "");
  } else if (e.kind == "reflection") {
    report->reflection = d.value("text", "");
  } else if (e.kind == "batch_item") {
    ReportBatchItem item;
    item.step = d.value("step", 0);
    item.text = d.value("text", "");
    item.verdict = d.value("verdict", "");
    std::string check = d.value("check_status", "");
    if (!check.empty()) item.why = "check " + check;
    if (d.contains("files") && d["files"].is_array()) {
      for (const json& f : d["files"]) {
        std::string v = f.is_object() ? f.value("verdict", "") : "";
        if (v != "changed" && v != "unchanged") {
          item.why += (item.why.empty() ? "" : "; ") + f.value("path", std::string()) + " " + v;
        }
      }
    }
    // A later verification of the same step replaces the earlier one.
    auto same = std::find_if(report->batch.begin(), report->batch.end(),
                             [&](const ReportBatchItem& b) { return b.step == item.step; });
    if (same != report->batch.end()) {
      *same = item;
    } else {
      report->batch.push_back(item);
    }
  } else {
    ReportReview v;
    v.role = d.value("role", "");
    v.verdict = d.value("verdict", "");
    if (d.contains("problem") && d["problem"].is_string()) {
      v.note = FirstLine(d["problem"].get<std::string>());
    } else if (d.contains("answer") && d["answer"].is_object()) {
      const json& a = d["answer"];
      for (const char* key : {"reasons", "findings", "questions"}) {
        if (a.contains(key) && a[key].is_array() && !a[key].empty() && a[key][0].is_string()) {
          v.note = FirstLine(a[key][0].get<std::string>());
          break;
        }
      }
      if (v.note.empty() && a.contains("reason") && a["reason"].is_string()) v.note = FirstLine(a["reason"]);
    }
    report->reviews.push_back(v);
  }
  return true;
}

}  // namespace

StatusOr<Report> BuildReport(Ledger* ledger, const ReportInput& in) {
  Report report;
  report.session_id = in.session_id;
  report.status = in.status;
  report.profile = in.profile;
  report.wall_ms = in.wall_ms;
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(in.session_id));
  // The message's calls, and what they caused: validations, rollbacks.
  std::set<std::string> mine(in.call_ids.begin(), in.call_ids.end());
  mine.insert(in.inherited_call_ids.begin(), in.inherited_call_ids.end());
  report.tool_calls = static_cast<int64_t>(in.call_ids.size());
  for (const ExecutionRow& row : rows) {  // oldest first: children follow parents
    if (!row.start.parent_id.empty() && mine.count(row.start.parent_id)) mine.insert(row.start.execution_id);
  }
  std::map<std::string, ReportFile> files;  // by absolute path
  // What changed: the mutation records of the message's calls, file tools'
  // and commands' alike.
  ASSIGN_OR_RETURN(std::vector<MutationRecord> mutations, ledger->ListMutations(in.session_id));
  std::set<std::string> recorded;  // executions with mutation records
  for (const MutationRecord& m : mutations) {
    if (m.execution_id.empty() || !mine.count(m.execution_id)) continue;
    recorded.insert(m.execution_id);
    if (m.change == "ignored") {
      report.ignored.push_back({DisplayPath(m.path, in.workspace), m.entries, m.execution_id});
      continue;
    }
    if (m.file_type == "directory") continue;
    ReportFile& f = files[m.path];
    f.path = DisplayPath(m.path, in.workspace);
    if (m.lines_added >= 0 && m.lines_removed >= 0) {
      f.added += m.lines_added;
      f.removed += m.lines_removed;
    } else {
      f.lines_known = false;
    }
    if (f.change.empty()) f.change = m.change;  // the first change says whether it was there before
    if (m.change == "deleted") f.change = f.change == "created" ? "created and deleted" : "deleted";
    if (std::find(f.change_ids.begin(), f.change_ids.end(), m.execution_id) == f.change_ids.end()) {
      f.change_ids.push_back(m.execution_id);
    }
    if (m.source == "command" || m.source == "hook") f.by_command = true;
  }
  // A ledger from before mutation records: the file tools' writes, from
  // their arguments.
  for (const ExecutionRow& row : rows) {
    if (!mine.count(row.start.execution_id) || !row.end || row.end->status != "ok") continue;
    const std::string& tool = row.start.tool;
    const ToolHandler handler = HandlerOf(tool);
    if (handler == ToolHandler::kLspCheck) ++report.validations;
    if (handler != ToolHandler::kFileWrite) continue;
    if (recorded.count(row.start.execution_id)) continue;
    StatusOr<std::string> path = ResolveWorkspacePath(TargetFileOf(tool, row.start.args_json), in.workspace);
    if (!path.ok()) continue;
    ReportFile& f = files[*path];
    f.path = DisplayPath(*path, in.workspace);
    json result = ParseJson(row.end->result_json);
    if (result.is_object()) {
      f.added += result.value("lines_added", 0);
      f.removed += result.value("lines_removed", 0);
    }
    f.change_ids.push_back(row.start.execution_id);
  }
  ASSIGN_OR_RETURN(std::vector<ValidationRecord> validations, ledger->ListValidations(in.session_id));
  std::map<std::string, const ValidationRecord*> validation_of;  // by lsp_check id
  for (const ValidationRecord& v : validations) validation_of[v.execution_id] = &v;
  for (const ExecutionRow& row : rows) {  // in order: the latest word on each file wins
    if (!row.end || row.end->status != "ok") continue;
    auto v = validation_of.find(row.start.execution_id);
    if (v != validation_of.end()) {
      auto f = files.find(v->second->path);
      if (f == files.end()) continue;
      f->second.validation = v->second->status;
      f->second.check_id = v->second->execution_id;
      f->second.validator = v->second->validator;
      f->second.new_errors = v->second->new_errors;
      f->second.detail = v->second->status == "errors" ? v->second->summary : v->second->reason;
      continue;
    }
    // A rollback: a write made for an lsp_check that found new errors.
    auto check = validation_of.find(row.start.parent_id);
    if (WriteFormOf(row.start.tool) == WriteForm::kWhole && check != validation_of.end()) {
      auto f = files.find(check->second->path);
      if (f == files.end()) continue;
      f->second.validation = "rolled_back";
      f->second.check_id = check->second->execution_id;
      f->second.new_errors = 0;
      f->second.detail = "the change was undone by " + row.start.execution_id + " after its validation found " +
                         std::to_string(check->second->new_errors) + " new errors";
    }
  }
  ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(in.session_id));
  // The evidence each write was let through on.
  std::map<std::string, std::vector<std::string>> cited;  // by write
  for (const GateEvent& e : events) {
    if (e.kind != "evidence") continue;
    json d = ParseJson(e.detail_json);
    if (!d.is_object() || d.value("decision", "") != "allow" || !d.contains("evidence") || !d["evidence"].is_array()) {
      continue;
    }
    for (const json& id : d["evidence"]) {
      if (id.is_string()) cited[e.execution_id].push_back(id.get<std::string>());
    }
  }
  for (auto& [path, f] : files) {
    for (const std::string& id : f.change_ids) {
      auto c = cited.find(id);
      if (c == cited.end()) continue;
      for (const std::string& e : c->second) {
        if (std::find(f.evidence.begin(), f.evidence.end(), e) == f.evidence.end()) f.evidence.push_back(e);
      }
    }
    report.files.push_back(std::move(f));
  }

  for (const GateEvent& e : events) {
    if (e.kind != "overlay_conflict" || mine.count(e.execution_id) == 0) continue;
    json d = ParseJson(e.detail_json);
    if (!d.is_object() || !d.contains("paths") || !d["paths"].is_array()) continue;
    json by = d.contains("by") && d["by"].is_object() ? d["by"] : json::object();
    for (const json& p : d["paths"]) {
      if (!p.is_string()) continue;
      ReportConflict c{p.get<std::string>(), e.execution_id, d.value("kept_in", ""), "", ""};
      if (by.contains(c.path) && by[c.path].is_object()) {
        c.by_session = by[c.path].value("session_id", "");
        c.by_execution = by[c.path].value("execution_id", "");
      }
      report.conflicts.push_back(std::move(c));
    }
  }

  std::map<std::string, ReportCheck> last;  // by check name, the latest
  std::vector<std::string> order;
  for (const GateEvent& e : events) {
    if (e.kind == "external_changes_unwatched") {
      json d = ParseJson(e.detail_json);
      report.unwatched = d.is_object() ? d.value("why", "") : "";
      continue;
    }
    if (e.kind == "hook" && e.message_id == in.message_id) {
      json d = ParseJson(e.detail_json);
      if (d.is_object() && d.contains("report") && d["report"].is_string()) report.hooks.push_back(d["report"]);
      continue;
    }
    if (e.message_id == in.message_id && AddReviewEvent(e, &report)) continue;
    if (e.kind != "check" || e.message_id != in.message_id) continue;
    json d = ParseJson(e.detail_json);
    if (!d.is_object()) continue;
    std::string name = d.value("name", "");
    if (!last.count(name)) order.push_back(name);
    last[name] = {name, d.value("status", ""), d.value("command", ""), e.execution_id, d.value("exit_code", -1)};
  }
  for (const std::string& name : order) {
    ReportCheck& c = last[name];
    if (c.status == "failed" && !c.execution_id.empty()) c.output_tail = FailedOutputTail(ledger, c.execution_id);
    report.checks.push_back(c);
  }
  ASSIGN_OR_RETURN(SessionUsage usage, ledger->UsageOf(in.session_id, in.started_at_ms, in.usage_agent));
  report.llm_calls = usage.llm_calls;
  report.input_tokens = usage.input_tokens;
  report.output_tokens = usage.output_tokens;
  report.cost_microusd = usage.cost_microusd;
  report.unpriced_calls = usage.unpriced_calls;
  report.cache_read_tokens = usage.cache_read_tokens;
  report.cache_write_tokens = usage.cache_write_tokens;
  return report;
}

std::string RenderReport(const Report& r) {
  std::string out = "── Odin report (from the ledger, session " + r.session_id + ") ──\n";
  if (r.files.empty()) {
    out += "Changed files: none\n";
  } else {
    out += "Changed files:\n";
    for (const ReportFile& f : r.files) {
      std::string ids;
      for (const std::string& id : f.change_ids) ids += (ids.empty() ? "" : ", ") + id;
      std::string lines = f.lines_known ? "+" + std::to_string(f.added) + " -" + std::to_string(f.removed) : "+? -?";
      std::string what = f.change.empty() || f.change == "modified" ? "" : f.change + ", ";
      out += "  " + f.path + "  " + lines + "  (" + what + (f.by_command ? "by command, " : "") + ids + ")\n";
      if (!f.evidence.empty()) {
        std::string why;
        for (const std::string& id : f.evidence) why += (why.empty() ? "" : ", ") + id;
        out += "    why: the analysis it cited (" + why + ")\n";
      }
      if (f.validation.empty()) {
        out += "    validation: not validated\n";
      } else {
        out += "    validation: " + f.validation + " (lsp_check " + f.check_id +
               (f.validator.empty() ? "" : ", " + f.validator) + ")";
        if (f.validation == "errors") out += ", " + std::to_string(f.new_errors) + " new errors";
        out += "\n";
        std::string detail = f.detail;
        while (!detail.empty() && detail.back() == '\n') detail.pop_back();
        for (size_t start = 0, lines = 0; start < detail.size() && lines < 5; ++lines) {
          size_t end = detail.find('\n', start);
          if (end == std::string::npos) end = detail.size();
          out += "      " + detail.substr(start, end - start) + "\n";
          start = end + 1;
        }
      }
    }
  }
  for (const ReportIgnored& i : r.ignored) {
    out += "  " + i.path + ": " + std::to_string(i.entries) + (i.entries == 1 ? " change" : " changes") +
           " git ignores (" + i.execution_id + "; not validated, not undoable)\n";
  }
  if (!r.conflicts.empty()) {
    out += "Conflicts (a command's changes that did not land):\n";
    for (const ReportConflict& c : r.conflicts) {
      std::string who = c.by_session.empty() ? "something else"
                                             : "Odin session " + c.by_session +
                                                   (c.by_execution.empty() ? "" : " (" + c.by_execution + ")");
      out += "  " + c.path + ": changed by " + who + " while " + c.execution_id + " ran; its version is in " +
             c.kept_in + "\n";
    }
  }
  if (!r.checks.empty()) {
    out += "Checks (profile " + r.profile + "):\n";
    for (const ReportCheck& c : r.checks) {
      out += "  " + c.name + ": " + c.status;
      if (!c.command.empty()) out += "  `" + c.command + "`";
      if (c.exit_code >= 0 && c.status != "passed") out += " exit " + std::to_string(c.exit_code);
      if (!c.execution_id.empty()) out += " (" + c.execution_id + ")";
      out += "\n";
      size_t start = 0;
      while (start < c.output_tail.size()) {
        size_t end = c.output_tail.find('\n', start);
        if (end == std::string::npos) end = c.output_tail.size();
        out += "    | " + c.output_tail.substr(start, end - start) + "\n";
        start = end + 1;
      }
    }
  } else if (!r.profile.empty()) {
    out += "Checks (profile " + r.profile + "): none run\n";
  }
  if (!r.workflow.empty() || r.plan_revision >= 0) {
    out += "Workflow: " + (r.workflow.empty() ? std::string("none") : r.workflow);
    if (r.plan_revision >= 0) out += "; plan revision " + std::to_string(r.plan_revision) + ": " + r.plan_intent;
    out += "\n";
  }
  if (!r.reviews.empty()) {
    out += "Reviews:\n";
    for (const ReportReview& v : r.reviews) {
      out += "  " + v.role + ": " + v.verdict + (v.note.empty() ? "" : " (" + v.note + ")") + "\n";
    }
  }
  if (!r.batch.empty()) {
    out += "Batch items:\n";
    for (const ReportBatchItem& b : r.batch) {
      out += "  " + std::to_string(b.step) + ". " + b.text + ": " + b.verdict +
             (b.why.empty() ? "" : " (" + b.why + ")") + "\n";
    }
  }
  if (!r.reflection.empty()) {
    out += "Reflection:\n";
    std::string text = r.reflection;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out += "  " + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  if (!r.unwatched.empty()) {
    out += "External changes: not watched (" + r.unwatched + "); the whole tree was looked at between calls instead\n";
  }
  if (!r.hooks.empty()) {
    out += "Hooks:\n";
    for (const std::string& h : r.hooks) out += "  " + h + "\n";
  }
  char seconds[32];
  snprintf(seconds, sizeof seconds, "%.1f s", static_cast<double>(r.wall_ms) / 1000.0);
  out += "Used: " + std::to_string(r.tool_calls) + " tool calls, " + std::to_string(r.validations) + " validations, " +
         std::to_string(r.llm_calls) + " model calls, " + std::to_string(r.input_tokens) + " tokens in" +
         CacheUseText(r.cache_read_tokens, r.cache_write_tokens) + ", " + std::to_string(r.output_tokens) + " out, " +
         CostText(r.cost_microusd, r.llm_calls, r.unpriced_calls) + ", " + seconds + "\n";
  out += "Status: " + r.status + "\n";
  return out;
}

std::string ReportJson(const Report& r) {
  json files = json::array();
  for (const ReportFile& f : r.files) {
    json v = nullptr;
    if (!f.validation.empty()) {
      v = {{"status", f.validation},
           {"execution_id", f.check_id},
           {"validator", f.validator},
           {"new_errors", f.new_errors},
           {"detail", f.detail}};
    }
    files.push_back({{"path", f.path},
                     {"change", f.change.empty() ? "modified" : f.change},
                     {"lines_added", f.lines_known ? json(f.added) : json()},
                     {"lines_removed", f.lines_known ? json(f.removed) : json()},
                     {"by_command", f.by_command},
                     {"execution_ids", f.change_ids},
                     {"evidence", f.evidence},
                     {"validation", v}});
  }
  json ignored = json::array();
  for (const ReportIgnored& i : r.ignored) {
    ignored.push_back({{"path", i.path}, {"entries", i.entries}, {"execution_id", i.execution_id}});
  }
  json conflicts = json::array();
  for (const ReportConflict& c : r.conflicts) {
    conflicts.push_back({{"path", c.path},
                         {"execution_id", c.execution_id},
                         {"kept_in", c.kept_in},
                         {"by_session", c.by_session.empty() ? json() : json(c.by_session)},
                         {"by_execution", c.by_execution.empty() ? json() : json(c.by_execution)}});
  }
  json checks = json::array();
  for (const ReportCheck& c : r.checks) {
    json check = {{"name", c.name}, {"status", c.status}, {"command", c.command}, {"execution_id", c.execution_id}};
    if (c.exit_code >= 0) check["exit_code"] = c.exit_code;
    if (!c.output_tail.empty()) check["output_tail"] = c.output_tail;
    checks.push_back(check);
  }
  json reviews = json::array();
  for (const ReportReview& v : r.reviews)
    reviews.push_back({{"role", v.role}, {"verdict", v.verdict}, {"note", v.note}});
  json batch = json::array();
  for (const ReportBatchItem& b : r.batch) {
    batch.push_back({{"step", b.step}, {"text", b.text}, {"verdict", b.verdict}, {"why", b.why}});
  }
  json out = {{"session_id", r.session_id},
              {"status", r.status},
              {"profile", r.profile},
              {"files", files},
              {"ignored_changes", ignored},
              {"conflicts", conflicts},
              {"checks", checks},
              {"hooks", r.hooks},
              {"external_changes_unwatched", r.unwatched.empty() ? json() : json(r.unwatched)},
              {"workflow", r.workflow},
              {"plan_revision", r.plan_revision >= 0 ? json(r.plan_revision) : json()},
              {"reviews", reviews},
              {"batch", batch},
              {"reflection", r.reflection},
              {"tool_calls", r.tool_calls},
              {"validations", r.validations},
              {"llm_calls", r.llm_calls},
              {"input_tokens", r.input_tokens},
              {"output_tokens", r.output_tokens},
              {"cache_read_tokens", r.cache_read_tokens},
              {"cache_write_tokens", r.cache_write_tokens},
              // null when no call had a price; else the priced calls' cost
              {"cost_usd",
               CostUnknown(r.llm_calls, r.unpriced_calls) ? json() : json(static_cast<double>(r.cost_microusd) / 1e6)},
              {"unpriced_calls", r.unpriced_calls},
              {"wall_ms", r.wall_ms}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace odin
