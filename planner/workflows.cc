#include "planner/workflows.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>
#include "base/json_input.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr size_t kMaxPlanBytes = 32 * 1024;
constexpr size_t kMaxItems = 50;

Status StringList(const json& j, const char* key, bool required, std::vector<std::string>* out) {
  if (!j.contains(key)) {
    if (required) return Status::InvalidArgument("plan", std::string("\"") + key + "\" is missing");
    return Status::OK();
  }
  const json& list = j[key];
  if (!list.is_array()) return Status::InvalidArgument("plan", std::string("\"") + key + "\" must be a list");
  if (list.size() > kMaxItems) return Status::InvalidArgument("plan", std::string("\"") + key + "\" is too long");
  out->clear();
  for (const json& item : list) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return Status::InvalidArgument("plan", std::string("\"") + key + "\" must hold non-empty strings");
    }
    out->push_back(item.get<std::string>());
  }
  return Status::OK();
}

}  // namespace

const char* WorkflowName(Workflow w) {
  switch (w) {
    case Workflow::kNone: return "";
    case Workflow::kQuestion: return "question";
    case Workflow::kMinorEdit: return "minor-edit";
    case Workflow::kTdd: return "tdd";
    case Workflow::kBatch: return "batch";
    case Workflow::kQaProof: return "qa-proof";
  }
  return "";
}

std::optional<Workflow> ParseWorkflow(std::string_view name) {
  for (Workflow w : {Workflow::kNone, Workflow::kQuestion, Workflow::kMinorEdit, Workflow::kTdd, Workflow::kBatch,
                     Workflow::kQaProof}) {
    if (name == WorkflowName(w)) return w;
  }
  return std::nullopt;
}

const char* WorkflowNames() { return "question, minor-edit, tdd, batch, qa-proof"; }

std::string WorkflowRules(Workflow w) {
  switch (w) {
    case Workflow::kNone: return "";
    case Workflow::kQuestion: return "question: answer only; nothing may be changed (the message runs in ask mode).";
    case Workflow::kMinorEdit:
      return "minor-edit: change at most " + std::to_string(kMinorEditMaxFiles) +
             " files; a change to another one is refused.";
    case Workflow::kTdd:
      return "tdd: first write or change a test and run it, and see it fail (a command that exits non-zero and names "
             "the test file or test); until then only test files may change. At the end the same test must pass: "
             "Odin runs it again before accepting completion.";
    case Workflow::kBatch:
      return "batch: the plan's steps are verified one by one at completion (each step's files validated and its "
             "check run); the report lists each step's verdict.";
    case Workflow::kQaProof:
      return "qa-proof: completion needs an independent QA verifier's VERIFIED, judged against the user's request "
             "and the acceptance criteria with the ledger's evidence.";
  }
  return "";
}

StatusOr<Plan> ParsePlan(const std::string& text, const Plan* base) {
  if (text.size() > kMaxPlanBytes) return Status::InvalidArgument("plan", "over 32 KiB");
  return PlanOf(ParseJson(text), base);
}

StatusOr<Plan> PlanOf(const json& j, const Plan* base) {
  if (j.dump(-1, ' ', false, json::error_handler_t::replace).size() > kMaxPlanBytes) {
    return Status::InvalidArgument("plan", "over 32 KiB");
  }
  if (!j.is_object()) return Status::InvalidArgument("plan", "not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "intent" && key != "acceptance_criteria" && key != "steps" && key != "workflow" && key != "reason") {
      return Status::InvalidArgument("plan", "unknown field \"" + key + "\"");
    }
  }
  Plan plan = base != nullptr ? *base : Plan();
  bool required = base == nullptr;
  if (j.contains("intent")) {
    if (!j["intent"].is_string() || j["intent"].get<std::string>().empty()) {
      return Status::InvalidArgument("plan", "\"intent\" must be a non-empty string");
    }
    plan.intent = j["intent"];
  } else if (required) {
    return Status::InvalidArgument("plan", "\"intent\" is missing");
  }
  RETURN_IF_ERROR(StringList(j, "acceptance_criteria", required, &plan.criteria));
  if (required && plan.criteria.empty()) return Status::InvalidArgument("plan", "no acceptance criteria");
  if (j.contains("steps")) {
    const json& steps = j["steps"];
    if (!steps.is_array() || steps.size() > kMaxItems) {
      return Status::InvalidArgument("plan", "\"steps\" must be a list of at most 50");
    }
    plan.steps.clear();
    for (const json& s : steps) {
      PlanStep step;
      if (s.is_string()) {
        step.text = s;
      } else if (s.is_object() && s.contains("text") && s["text"].is_string()) {
        step.text = s["text"];
        RETURN_IF_ERROR(StringList(s, "files", false, &step.files));
        if (s.contains("check")) {
          if (!s["check"].is_string()) return Status::InvalidArgument("plan", "a step's \"check\" must be a string");
          step.check = s["check"];
        }
      } else {
        return Status::InvalidArgument("plan", "each step needs a \"text\"");
      }
      if (step.text.empty()) return Status::InvalidArgument("plan", "a step's text is empty");
      plan.steps.push_back(std::move(step));
    }
  } else if (required) {
    return Status::InvalidArgument("plan", "\"steps\" is missing");
  }
  if (required && plan.steps.empty()) return Status::InvalidArgument("plan", "no steps");
  if (j.contains("workflow")) {
    std::optional<Workflow> w =
        j["workflow"].is_string() ? ParseWorkflow(j["workflow"].get<std::string>()) : std::nullopt;
    if (!w || *w == Workflow::kNone) {
      return Status::InvalidArgument("plan", std::string("\"workflow\" must be one of ") + WorkflowNames());
    }
    plan.workflow = *w;
  }
  return plan;
}

std::string PlanJson(const Plan& plan) {
  json steps = json::array();
  for (const PlanStep& s : plan.steps) {
    json step = {{"text", s.text}};
    if (!s.files.empty()) step["files"] = s.files;
    if (!s.check.empty()) step["check"] = s.check;
    steps.push_back(step);
  }
  return json({{"intent", plan.intent},
               {"acceptance_criteria", plan.criteria},
               {"steps", steps},
               {"workflow", WorkflowName(plan.workflow)},
               {"revision", plan.revision}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string RenderPlan(const Plan& plan) {
  std::string out = "Intent: " + plan.intent + "\nAcceptance criteria:\n";
  for (size_t i = 0; i < plan.criteria.size(); ++i)
    out += "  " + std::to_string(i + 1) + ". " + plan.criteria[i] + "\n";
  out += "Steps:\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    out += "  " + std::to_string(i + 1) + ". " + s.text;
    if (!s.files.empty()) {
      out += " (files:";
      for (const std::string& f : s.files) out += " " + f;
      out += ")";
    }
    if (!s.check.empty()) out += " [check: " + s.check + "]";
    out += "\n";
  }
  return out;
}

std::vector<std::string> DefaultTestPatterns() {
  return {"test_*.py", "*_test.py", "*_test.go", "*_test.cc",  "*_test.cpp",  "*_test.c",      "test_*.c",
          "*_test.rs", "*.test.ts", "*.test.js", "*.test.tsx", "*.spec.ts",   "*.spec.js",     "*Test.java",
          "tests/*",   "test/*",    "*/tests/*", "*/test/*",   "__tests__/*", "*/__tests__/*", "spec/*"};
}

bool IsTestPath(const std::string& path, const std::vector<std::string>& patterns) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  for (const std::string& p : patterns) {
    bool has_slash = p.find('/') != std::string::npos;
    // FNM_PATHNAME off: "tests/*" covers tests/a/b.py too.
    if (fnmatch(p.c_str(), has_slash ? path.c_str() : name.c_str(), 0) == 0) return true;
  }
  return false;
}

}  // namespace odin
