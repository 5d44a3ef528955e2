#pragma once
// Workflows (seed 003) and the plan they follow.
//
// The hydrator (planner/reviewers.h) turns a user's message into a plan
// (intent, acceptance criteria, steps) and routes it to a workflow; the
// planner revises the plan with the plan_update tool. Each workflow has
// guardrails the coordinator and the convergence gate enforce:
//
//   question    answer only: the message runs in ask mode whatever the
//               session's mode
//   minor-edit  at most two files change
//   tdd         a test is run and seen failing before the first change to
//               code that is not a test, and the same test passes at the end
//   batch       the plan's steps are verified one by one: each step's files
//               validated and its check run; the report lists each verdict
//   qa-proof    completion needs the QA verifier's VERIFIED
//
// Routing never raises the mode: a message in ask mode stays in ask mode.
// Pure functions; thread-safety: none needed.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace odin {

enum class Workflow { kNone, kQuestion, kMinorEdit, kTdd, kBatch, kQaProof };
// "", "question", "minor-edit", "tdd", "batch", "qa-proof".
const char* WorkflowName(Workflow workflow);
// nullopt for a name that is none of them ("" is kNone).
std::optional<Workflow> ParseWorkflow(std::string_view name);
// "question, minor-edit, tdd, batch, qa-proof": for errors and help.
const char* WorkflowNames();
// What the planner is told of the workflow's rules.
std::string WorkflowRules(Workflow workflow);

// minor-edit: the most files a message may change.
constexpr size_t kMinorEditMaxFiles = 2;

struct PlanStep {
  std::string text;
  std::vector<std::string> files;  // relative to the workspace; may be empty
  std::string check;               // batch: the command that verifies it ("": the profile's checks)
};

struct Plan {
  std::string intent;
  std::vector<std::string> criteria;  // acceptance criteria
  std::vector<PlanStep> steps;
  Workflow workflow = Workflow::kNone;
  int revision = 0;  // 0: the hydrator's; then each plan_update
};

// Parses a plan from JSON: {"intent", "acceptance_criteria": [..], "steps":
// [{"text", "files": [..], "check"}], "workflow"}. For plan_update (partial:
// a field left out keeps base's) and the hydrator's answer (base null: all
// required). InvalidArgument naming what is wrong.
StatusOr<Plan> ParsePlan(const std::string& json_text, const Plan* base);
// The same on a value already parsed (plan_update's arguments, at Submit).
StatusOr<Plan> PlanOf(const nlohmann::json& value, const Plan* base);
std::string PlanJson(const Plan& plan);
// For the planner: the plan as numbered lines.
std::string RenderPlan(const Plan& plan);

// Test files, by glob over the path relative to the workspace (a pattern
// without a slash matches the file's name): the common layouts' defaults.
std::vector<std::string> DefaultTestPatterns();
bool IsTestPath(const std::string& relative_path, const std::vector<std::string>& patterns);

}  // namespace odin
