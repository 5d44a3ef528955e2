#include "planner/convergence_gate.h"

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "tools/text_file.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Fingerprint(const std::string& text) { return Sha256Hex(text).substr(0, 16); }

}  // namespace

std::optional<Refusal> RefuseWhileBlocked(const std::vector<FileVerdict>& blocking, const std::string& workspace,
                                          std::string* event) {
  if (blocking.empty()) return std::nullopt;
  std::string text = "[runtime] Completion refused: the validation gate has the session blocked.\n";
  std::string key = "blocked";
  json ids = json::array();
  for (const FileVerdict& v : blocking) {
    text += "- " + DisplayPath(v.path, workspace) + ": " + VerdictName(v.status) + " after " + v.mutation_id +
            " (lsp_check " + v.check_id + ")\n";
    if (!v.summary.empty()) text += v.summary;
    if (!v.reason.empty()) text += "  " + v.reason + "\n";
    key += "|" + v.path + "|" + VerdictName(v.status) + "|" + v.summary;
    ids.push_back(v.check_id);
  }
  text += "Fix these (memory_query has the details), or run lsp_check to re-validate a file, then finish.";
  *event = json({{"reason", "blocked"}, {"lsp_checks", ids}}).dump();
  return Refusal{Fingerprint(key), text};
}

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPassed: return "passed";
    case CheckStatus::kFailed: return "failed";
    case CheckStatus::kNotRun: return "not_run";
  }
  return "not_run";
}

CheckVerdict JudgeCheck(const CheckSpec& spec, const std::string& id, const v1::ToolResult& r, int timeout_seconds,
                        bool fail_open) {
  CheckVerdict v;
  // A check's own failure (an exit code, its timeout) is the project's; one
  // that could not run at all (crash, sandbox) is the infrastructure's.
  bool ran = r.has_exit_code() && (r.status() == v1::TOOL_STATUS_OK || r.status() == v1::TOOL_STATUS_ERROR);
  if (ran && r.exit_code() == 0) {
    v.status = CheckStatus::kPassed;
  } else if (ran || r.status() == v1::TOOL_STATUS_TIMED_OUT) {
    v.status = CheckStatus::kFailed;
  } else {
    v.status = CheckStatus::kNotRun;
  }
  json detail = {
      {"name", spec.name}, {"status", CheckStatusName(v.status)}, {"command", spec.command}, {"origin", spec.origin}};
  if (r.has_exit_code()) detail["exit_code"] = r.exit_code();
  v.event = detail.dump();
  std::string output = r.output_head();
  if (r.output_total_bytes() > r.output_head().size() + r.output_tail().size()) output += "\n[...]\n";
  output += r.output_tail();
  std::string tail = ToDisplayText(OutputTail(output, 3000));
  if (v.status == CheckStatus::kFailed) {
    std::string how = r.status() == v1::TOOL_STATUS_TIMED_OUT
                          ? "timed out after " + std::to_string(timeout_seconds) + " s"
                          : "exited with " + std::to_string(r.exit_code());
    v.failure =
        Refusal{Fingerprint(spec.name + "\n" + tail), "The " + spec.name + " check (`" + spec.command + "`, " + id +
                                                          ") " + how + ". The end of its output:\n" + tail + "\n"};
  } else if (v.status == CheckStatus::kNotRun && !fail_open) {
    std::string why = r.has_error() ? r.error().message() : ToolStatusName(r.status());
    v.failure = Refusal{Fingerprint(spec.name + "\nnot_run\n" + why), "The " + spec.name + " check (`" + spec.command +
                                                                          "`, " + id + ") could not run: " + why +
                                                                          ". Completion waits until it runs.\n"};
  }
  return v;
}

Refusal RefuseForChecks(const std::vector<Refusal>& failures) {
  Refusal r;
  r.text = "[runtime] Completion refused: ";
  r.text += failures.size() == 1 ? "a check failed.\n" : "checks failed.\n";
  for (const Refusal& f : failures) {
    r.fingerprint += f.fingerprint;
    r.text += f.text;
  }
  r.text += "Fix the cause, then finish again (the checks run again).";
  return r;
}

}  // namespace odin
