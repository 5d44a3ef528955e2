// odin log, odin show, odin sessions, odin ledger verify, odin ledger reset:
// reading the ledger, checking it, starting over.
//
// Recorded output and arguments are printed with their control characters
// made visible (base/terminal_text.h): a command's bytes do not get to drive
// the user's terminal.

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/money.h"
#include "base/terminal_text.h"
#include "cli/cli.h"
#include "ledger/forks.h"
#include "ledger/ledger.h"
#include "session/resume.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

using nlohmann::json;

std::string FormatTime(int64_t ms, bool with_millis) {
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  localtime_r(&secs, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  std::string out = buf;
  if (with_millis) {
    char frac[8];
    snprintf(frac, sizeof frac, ".%03d", static_cast<int>(ms % 1000));
    out += frac;
  }
  return out;
}

std::string FormatDuration(int64_t us) {
  char buf[32];
  if (us < 1000)
    snprintf(buf, sizeof buf, "%lld us", static_cast<long long>(us));
  else if (us < 10'000'000)
    snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1000.0);
  else
    snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(us) / 1e6);
  return buf;
}

// A one-line rendering of a call's arguments: the command for ExecuteCommand,
// else the JSON, cut to width.
std::string ArgsSummary(const ExecutionStart& s, size_t width) {
  std::string text = s.args_json;
  json args = ParseJson(s.args_json);
  if (args.is_object() && args.contains("argv") && args["argv"].is_array()) {
    text.clear();
    for (const json& a : args["argv"]) {
      if (!text.empty()) text += ' ';
      text += a.is_string() ? a.get<std::string>() : a.dump();
    }
  } else if (args.is_object()) {
    // The argument a reader recognizes the call by.
    for (const char* key : {"command", "file_path", "pattern", "path"}) {
      if (args.contains(key) && args[key].is_string()) {
        text = args[key].get<std::string>();
        if (std::string(key) == "pattern" && args.contains("path") && args["path"].is_string()) {
          text += "  in " + args["path"].get<std::string>();
        }
        break;
      }
    }
  }
  text = VisibleControls(text, Layout::kOneLine);
  if (text.size() > width) text = std::string(CutAtCharacter(text, width - 3)) + "...";
  return text;
}

// A recorded string as the terminal may show it.
std::string Shown(const std::string& s) { return VisibleControls(s); }

json Bytes(const std::string& b) {
  // Output need not be UTF-8; JSON gets it with invalid bytes replaced.
  return ParseJson(json(b).dump(-1, ' ', false, json::error_handler_t::replace));
}

json ExecutionJson(const ExecutionRow& row) {
  json j = {{"execution_id", row.start.execution_id},
            {"session_id", row.start.session_id},
            {"agent_id", row.start.agent_id},
            {"tool", row.start.tool},
            {"arguments", ParseJson(row.start.args_json)},
            {"mode", row.start.mode},
            {"worker_id", row.start.worker_id},
            {"started_at_ms", row.start.started_at_ms}};
  if (j["arguments"].is_discarded()) j["arguments"] = row.start.args_json;
  if (!row.end) {
    j["status"] = "started";
    return j;
  }
  const ExecutionEnd& e = *row.end;
  j["status"] = e.status;
  j["exit_code"] = e.exit_code ? json(*e.exit_code) : json();
  j["exit_reason"] = e.exit_reason;
  j["finished_at_ms"] = e.finished_at_ms;
  j["duration_us"] = e.duration_us;
  j["output_bytes"] = e.output_bytes;
  j["output_head"] = Bytes(e.output_head);
  j["output_tail"] = Bytes(e.output_tail);
  j["error"] = e.error.empty() ? json() : json(e.error);
  // The tool's structured result (a command's "network", a write's hashes).
  if (!e.result_json.empty()) {
    json result = ParseJson(e.result_json);
    if (result.is_object()) j["result"] = result;
  }
  return j;
}

// Opens the ledger of g's workspace for reading (writing nothing, so a
// read-only workspace is fine). Sets *missing iff there is none and its anchor
// says there never was one with records (not an error for read-only
// commands); a ledger that lost records is an error.
StatusOr<std::unique_ptr<Ledger>> OpenLedger(const GlobalFlags& g, bool* missing, const LedgerOptions& options = {}) {
  *missing = false;
  ASSIGN_OR_RETURN(Workspace ws, FindWorkspace(g.dir));
  StatusOr<std::unique_ptr<Ledger>> ledger = Ledger::OpenReadOnly(ws.ledger_path, options);
  if (!ledger.ok() && ledger.status().code() == StatusCode::kNotFound && !ExistsBelow(ws.state_dir, "odin.db")) {
    *missing = true;
    return Status::NotFound("ledger " + ws.ledger_path, "no executions recorded yet");
  }
  return ledger;
}

int Fail(const std::string& cmd, const Status& s) {
  std::cerr << "odin " << cmd << ": " << s.message() << "\n";
  return kError;
}

void PrintJson(const json& j) {
  std::cout << JsonForTerminal(j.dump(2, ' ', false, json::error_handler_t::replace)) << "\n";
}

// The circuit breakers of a session as its last transitions left them.
void PrintBreakers(Ledger* ledger, const std::string& session_id) {
  StatusOr<std::vector<GateEvent>> events = ledger->ListGateEvents(session_id);
  if (!events.ok()) return;
  std::map<std::string, std::pair<json, int64_t>> last;  // breaker -> detail, when
  for (const GateEvent& e : *events) {
    if (e.kind != "breaker") continue;
    json d = ParseJson(e.detail_json);
    if (d.is_object() && d.contains("breaker")) last[d["breaker"].get<std::string>()] = {d, e.created_at_ms};
  }
  if (last.empty()) return;
  printf("\nCircuit breakers of session %s:\n", session_id.c_str());
  for (const auto& [name, entry] : last) {
    const json& d = entry.first;
    printf("  %-24s  %-9s  since %s  (%s)\n", Shown(name).c_str(), Shown(d.value("to", "?")).c_str(),
           FormatTime(entry.second, false).c_str(), Shown(d.value("reason", "")).c_str());
  }
}

// A workspace with no ledger yet: an empty JSON list, or one line saying so.
// Returns true iff it printed.
bool PrintNothingYet(bool missing, bool as_json, const char* message) {
  if (!missing) return false;
  if (as_json) {
    std::cout << "[]\n";
  } else {
    std::cerr << message << "\n";
  }
  return true;
}

}  // namespace

int RunLog(const GlobalFlags& g, bool as_json, int limit) {
  bool missing = false;
  StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(g, &missing);
  if (PrintNothingYet(missing, as_json, "odin log: no executions recorded yet")) return 0;
  if (!ledger.ok()) return Fail("log", ledger.status());
  StatusOr<std::vector<ExecutionRow>> rows = (*ledger)->ListExecutions(limit);
  if (!rows.ok()) return Fail("log", rows.status());
  if (as_json) {
    json out = json::array();
    for (const ExecutionRow& r : *rows) out.push_back(ExecutionJson(r));
    PrintJson(out);
    return 0;
  }
  printf("%-16s  %-19s  %-9s  %4s  %9s  %-15s  %s\n", "EXECUTION", "STARTED", "STATUS", "EXIT", "DURATION", "TOOL",
         "ARGUMENTS");
  for (const ExecutionRow& r : *rows) {
    std::string status = r.end ? r.end->status : "started";
    std::string exit = r.end && r.end->exit_code ? std::to_string(*r.end->exit_code) : "-";
    std::string duration = r.end ? FormatDuration(r.end->duration_us) : "-";
    printf("%-16s  %-19s  %-9s  %4s  %9s  %-15s  %s\n", Shown(r.start.execution_id).c_str(),
           FormatTime(r.start.started_at_ms, false).c_str(), Shown(status).c_str(), exit.c_str(), duration.c_str(),
           Shown(r.start.tool).c_str(), ArgsSummary(r.start, 60).c_str());
  }
  if (!rows->empty()) PrintBreakers(ledger->get(), rows->front().start.session_id);
  return 0;
}

int RunSessions(const GlobalFlags& g, bool as_json) {
  bool missing = false;
  StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(g, &missing);
  if (PrintNothingYet(missing, as_json, "odin sessions: no sessions recorded yet")) return 0;
  if (!ledger.ok()) return Fail("sessions", ledger.status());
  StatusOr<std::vector<SessionRecord>> sessions = (*ledger)->ListSessions();
  if (!sessions.ok()) return Fail("sessions", sessions.status());
  // Forks name their originals (session/rewind.h).
  StatusOr<std::vector<GateEvent>> forks = (*ledger)->ListGateEventsOfKind(kForkRecordKind, 1 << 30);
  if (!forks.ok()) return Fail("sessions", forks.status());
  std::map<std::string, std::string> forked_from;
  for (const GateEvent& e : *forks) {
    if (std::optional<ForkOrigin> origin = ForkOriginIn(e)) forked_from[e.session_id] = origin->session_id;
  }
  json out = json::array();
  // Newest first: agent sessions, and the MCP clients' (odin exec and
  // odin tool have no conversation to show).
  for (auto it = sessions->rbegin(); it != sessions->rend(); ++it) {
    if (!ResumableKind(it->kind) && it->kind != "mcp") continue;
    StatusOr<std::vector<MessageRecord>> messages = (*ledger)->ListMessages(it->id);
    StatusOr<std::vector<ExecutionRow>> calls = (*ledger)->ListSessionExecutions(it->id);
    StatusOr<SessionUsage> usage = (*ledger)->UsageOf(it->id);
    if (!messages.ok()) return Fail("sessions", messages.status());
    if (!calls.ok()) return Fail("sessions", calls.status());
    if (!usage.ok()) return Fail("sessions", usage.status());
    std::string prompt, status = "started";
    for (const MessageRecord& m : *messages) {
      if (m.agent_id != "main") continue;
      if (m.role == "user" && prompt.empty()) prompt = m.text;
      if (m.role == "assistant") status = m.status;
      if (m.role == "user") status = "started";  // a message after the last answer
    }
    int64_t interrupted = 0;
    for (const ExecutionRow& r : *calls) interrupted += r.end && r.end->status == "interrupted" ? 1 : 0;
    json j = {{"id", it->id},
              {"kind", it->kind},
              {"resumable", ResumableKind(it->kind)},
              {"started_at_ms", it->created_at_ms},
              {"first_prompt", prompt},
              {"status", status},
              {"calls", calls->size()},
              {"interrupted_calls", interrupted},
              {"forked_from", forked_from.count(it->id) ? json(forked_from[it->id]) : json()},
              // null: no call had a price (unknown, not $0)
              {"cost_usd", CostUnknown(usage->llm_calls, usage->unpriced_calls)
                               ? json()
                               : json(static_cast<double>(usage->cost_microusd) / 1e6)},
              {"unpriced_calls", usage->unpriced_calls}};
    out.push_back(j);
  }
  if (as_json) {
    PrintJson(out);
    return 0;
  }
  printf("%-16s  %-19s  %-15s  %5s  %9s  %s\n", "SESSION", "STARTED", "STATUS", "CALLS", "COST", "FIRST PROMPT");
  for (const json& j : out) {
    char cost[32] = "unknown";
    if (!j["cost_usd"].is_null()) {
      snprintf(cost, sizeof cost, j["unpriced_calls"].get<int64_t>() > 0 ? "$%.4f+?" : "$%.4f",
               j["cost_usd"].get<double>());
    }
    std::string prompt = j["first_prompt"].get<std::string>();
    if (prompt.size() > 60) prompt = prompt.substr(0, 57) + "...";
    printf("%-16s  %-19s  %-15s  %5lld  %9s  %s\n", Shown(j["id"].get<std::string>()).c_str(),
           FormatTime(j["started_at_ms"].get<int64_t>(), false).c_str(), Shown(j["status"].get<std::string>()).c_str(),
           static_cast<long long>(j["calls"].get<int64_t>()), cost, Shown(prompt).c_str());
  }
  return 0;
}

int RunShow(const GlobalFlags& g, const std::string& id, bool as_json, bool output_only) {
  bool missing = false;
  StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(g, &missing);
  if (!ledger.ok()) return Fail("show", ledger.status());
  StatusOr<ExecutionRow> row = (*ledger)->FindExecution(id);
  if (!row.ok()) return Fail("show", row.status());
  StatusOr<std::vector<Artifact>> artifacts = (*ledger)->ListArtifacts(row->start.execution_id);
  if (!artifacts.ok()) return Fail("show", artifacts.status());

  if (output_only) {
    // The fullest record of the output: the artifact if there is one, else
    // head and tail (which then hold all of it, or say what is missing).
    // Raw into a pipe or file; on a terminal, with controls made visible.
    bool terminal = isatty(STDOUT_FILENO) == 1;
    auto put = [terminal](const std::string& bytes) {
      std::string shown = terminal ? VisibleControls(bytes) : bytes;
      fwrite(shown.data(), 1, shown.size(), stdout);
    };
    for (const Artifact& a : *artifacts) {
      if (a.kind == "output") {
        put(a.content);
        return 0;
      }
    }
    if (row->end) {
      put(row->end->output_head);
      put(row->end->output_tail);
    }
    return 0;
  }
  if (as_json) {
    json j = ExecutionJson(*row);
    j["artifacts"] = json::array();
    for (const Artifact& a : *artifacts) {
      j["artifacts"].push_back({{"id", a.id},
                                {"kind", a.kind},
                                {"size", a.size},
                                {"stored_bytes", a.content.size()},
                                {"truncated", a.truncated},
                                {"sha256", a.sha256}});
    }
    PrintJson(j);
    return 0;
  }
  const ExecutionStart& s = row->start;
  printf(
      "execution  %s\nsession    %s\nagent      %s\ntool       %s\narguments  %s\nmode       %s\n"
      "worker     %s\nstarted    %s\n",
      Shown(s.execution_id).c_str(), Shown(s.session_id).c_str(), Shown(s.agent_id).c_str(), Shown(s.tool).c_str(),
      VisibleControls(s.args_json, Layout::kOneLine).c_str(), Shown(s.mode).c_str(),
      s.worker_id.empty() ? "-" : Shown(s.worker_id).c_str(), FormatTime(s.started_at_ms, true).c_str());
  if (!row->end) {
    printf("status     started (no end recorded: the call was interrupted)\n");
  } else {
    const ExecutionEnd& e = *row->end;
    printf("finished   %s\nstatus     %s\nexit code  %s\nreason     %s\nduration   %s\noutput     %lld bytes\n",
           FormatTime(e.finished_at_ms, true).c_str(), Shown(e.status).c_str(),
           e.exit_code ? std::to_string(*e.exit_code).c_str() : "-", Shown(e.exit_reason).c_str(),
           FormatDuration(e.duration_us).c_str(), static_cast<long long>(e.output_bytes));
    if (!e.error.empty()) printf("error      %s\n", Shown(e.error).c_str());
    if (!e.output_head.empty()) {
      printf("--- output (first %zu bytes) ---\n", e.output_head.size());
      std::string shown = Shown(e.output_head);
      fwrite(shown.data(), 1, shown.size(), stdout);
      if (e.output_head.back() != '\n') printf("\n");
    }
    if (!e.output_tail.empty()) {
      int64_t skipped = e.output_bytes - static_cast<int64_t>(e.output_head.size() + e.output_tail.size());
      if (skipped > 0) printf("--- %lld bytes not shown ---\n", static_cast<long long>(skipped));
      printf("--- output (last %zu bytes) ---\n", e.output_tail.size());
      std::string shown = Shown(e.output_tail);
      fwrite(shown.data(), 1, shown.size(), stdout);
      if (e.output_tail.back() != '\n') printf("\n");
    }
  }
  if (!artifacts->empty()) printf("artifacts\n");
  for (const Artifact& a : *artifacts) {
    printf("  %s  %s  %lld bytes, %zu stored%s  sha256 %s\n", Shown(a.id).c_str(), Shown(a.kind).c_str(),
           static_cast<long long>(a.size), a.content.size(), a.truncated ? " (truncated)" : "",
           Shown(a.sha256).c_str());
  }
  return 0;
}

int RunLedgerVerify(const GlobalFlags& g, bool as_json) {
  bool missing = false;
  LedgerOptions options;
  options.allow_short = true;  // opened all the same, to say what is missing
  StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(g, &missing, options);
  if (missing) {
    // Nothing recorded yet (a fresh workspace, or just after a reset), and
    // the anchor agrees.
    if (as_json)
      PrintJson({{"ok", true}, {"records", 0}, {"problem", json()}});
    else
      printf("ledger ok: no records yet\n");
    return 0;
  }
  if (!ledger.ok()) return Fail("ledger verify", ledger.status());
  StatusOr<VerifyReport> report = (*ledger)->Verify();
  if (!report.ok()) return Fail("ledger verify", report.status());
  if (as_json) {
    PrintJson({{"ledger", (*ledger)->path()},
               {"ok", report->ok},
               {"records", report->records},
               {"anchor", report->anchor},
               {"problem", report->ok ? json() : json(report->problem)}});
  } else if (report->ok) {
    printf("ledger ok: %lld records verified (%s)\nanchor: %s\n", static_cast<long long>(report->records),
           (*ledger)->path().c_str(), report->anchor.c_str());
  } else if (report->short_of_anchor) {
    std::cerr << "odin ledger verify: " << report->problem << "\n";
  } else {
    std::cerr << "odin ledger verify: ledger " << (*ledger)->path() << " was altered: " << report->problem << "\n";
  }
  return report->ok ? 0 : kError;
}

int RunLedgerReset(const GlobalFlags& g, bool as_json) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail("ledger reset", ws.status());
  int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  StatusOr<LedgerResetReport> r = Ledger::Reset(ws->ledger_path, now_ms);
  if (!r.ok()) return Fail("ledger reset", r.status());
  if (as_json) {
    PrintJson({{"ledger", ws->ledger_path},
               {"generation", r->generation},
               {"anchored_records", r->anchored_seq},
               {"found_records", r->found_seq},
               {"moved_to", r->moved_to.empty() ? json() : json(r->moved_to)},
               {"anchor", r->anchor_path}});
    return 0;
  }
  std::string found = r->found_seq < 0 ? "unreadable" : std::to_string(r->found_seq) + " records";
  if (r->moved_to.empty()) {
    printf("ledger reset: there was no ledger to move (the anchor held %lld records)\n",
           static_cast<long long>(r->anchored_seq));
  } else {
    printf("ledger reset: the old ledger (%s; the anchor held %lld) is now %s\n", found.c_str(),
           static_cast<long long>(r->anchored_seq), r->moved_to.c_str());
  }
  printf("a new chain starts with the next record (reset %lld, anchor %s)\n", static_cast<long long>(r->generation),
         r->anchor_path.c_str());
  return 0;
}

}  // namespace odin
