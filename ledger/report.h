#pragma once
// The report that ends every answer, built from the ledger and never from
// the model: the files changed (with +/- lines and the executions behind each
// change), each file's validation with its lsp_check execution, the
// backpressure checks, and what the work cost.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ledger/ledger.h"

namespace odin {

struct ReportFile {
  std::string path;    // relative to the workspace
  std::string change;  // created, modified, deleted, "created and deleted" ("" : modified)
  int64_t added = 0;
  int64_t removed = 0;
  bool lines_known = true;              // false when a change's bytes before were not known (+? -?)
  bool by_command = false;              // a command changed it (not only file tools)
  std::vector<std::string> change_ids;  // the writes, oldest first (rollbacks included)
  // Why (the strict profile): the analysis executions the writes cited as
  // their evidence, from the evidence gate's events.
  std::vector<std::string> evidence;
  std::string validation;  // clean, errors, timed_out, no_validator; "" if never validated
  std::string check_id;    // the latest lsp_check
  std::string validator;
  int64_t new_errors = 0;
  std::string detail;  // summary or reason
};

// Changes under a path git ignores: counted, never listed.
struct ReportIgnored {
  std::string path;  // relative to the workspace
  int64_t entries = 0;
  std::string execution_id;
};

// A command's change that did not land: something else (another Odin
// session, when the ledger says so) changed the path while it ran. What it
// wrote is kept in kept_in.
struct ReportConflict {
  std::string path;  // relative to the workspace
  std::string execution_id;
  std::string kept_in;
  std::string by_session;    // "" when not another Odin session
  std::string by_execution;  // that session's call, if known
};

struct ReportCheck {
  std::string name;    // build, lint, tests
  std::string status;  // passed, failed, not_applicable, not_run
  std::string command;
  std::string execution_id;
  int exit_code = -1;  // -1: none
  // A failed check's last lines of output (what the user needs to see why),
  // "" otherwise.
  std::string output_tail;
};

// A reviewer's verdict (planner/reviewers.h), from its "review" gate event.
struct ReportReview {
  std::string role;     // hydrator, critic, drift, qa, reflection, spec, progress
  std::string verdict;  // PROCEED, ISSUES, ..., cannot_assess
  std::string note;     // its first reason or finding, or why cannot_assess
};

// One step of a batch workflow: its files' verdicts and its check.
struct ReportBatchItem {
  int step = 0;
  std::string text;
  std::string verdict;  // passed, failed
  std::string why;
};

struct Report {
  std::string session_id;
  std::string status;  // the message's: done, not_converged, ...
  std::string profile;
  std::vector<ReportFile> files;
  std::vector<ReportIgnored> ignored;
  std::vector<ReportConflict> conflicts;
  std::vector<ReportCheck> checks;  // the last run of each check
  std::vector<std::string> hooks;   // what hooks decided that the user must see (a Stop hook's last block)
  // Why changes made outside Odin were not watched this session ("" when
  // they were): then each command looked at the whole tree.
  std::string unwatched;
  // The workflow and the plan's last revision, the reviewers' verdicts in
  // order, a batch's items, and the reflection of a strict run.
  std::string workflow;
  std::string plan_intent;
  int plan_revision = -1;  // -1: no plan
  std::vector<ReportReview> reviews;
  std::vector<ReportBatchItem> batch;
  std::string reflection;
  int64_t tool_calls = 0;  // the model's
  int64_t validations = 0;
  int64_t llm_calls = 0;
  int64_t input_tokens = 0;  // the cache's included
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
  int64_t cost_microusd = 0;   // of the calls with a price
  int64_t unpriced_calls = 0;  // calls whose model has no price
  int64_t wall_ms = 0;
};

struct ReportInput {
  std::string session_id;
  std::string agent_id;
  std::string message_id;
  std::string workspace;
  std::string status;
  std::string profile;
  std::vector<std::string> call_ids;  // the model's calls during the message
  // Calls of an earlier process whose changes the message answers for (what
  // a command cut off by a crash wrote, applied on resume): their changes
  // and conflicts are reported, they are not counted as the message's calls.
  std::vector<std::string> inherited_call_ids;
  int64_t started_at_ms = 0;
  int64_t wall_ms = 0;
  // Count only this agent's model calls ("" : every agent's, subagents
  // included, since they spend the parent's budget).
  std::string usage_agent;
};

StatusOr<Report> BuildReport(Ledger* ledger, const ReportInput& input);
// Plain text, a few lines.
std::string RenderReport(const Report& report);
// The report as a JSON object (text).
std::string ReportJson(const Report& report);

}  // namespace odin
