#pragma once
// Reviewers (seeds 003 and 002): model calls around the planner's work that
// judge it independently.
//
//   hydrator    the user's message -> a plan (intent, acceptance criteria,
//               steps) and a workflow
//   critic      the plan -> PROCEED, REVISE (reasons) or HALT (reason)
//   drift       the recent calls against the plan -> OK, WARN or BLOCK
//   qa          the change against the user's words and the criteria, with
//               the ledger's evidence -> VERIFIED or ISSUES (findings)
//   reflection  the end of a strict run -> asked, done, failed and fixed,
//               open risks
//   spec        validation.validate_specs: the plan -> READY or VAGUE
//   progress    validation.validate_progress: the recent turns ->
//               PROGRESSING or NO_PROGRESS
//
// Each is one call to the utility model (or reviewers.ROLE.model) with Odin's
// own prompt for the role (reviewers.ROLE.prompt replaces it: a trusted-only
// setting, so a repository cannot make its QA verifier always say VERIFIED),
// the evidence the coordinator assembled from the ledger, and the role's JSON
// schema. An answer that does not match is asked for once more; then the
// verdict is cannot_assess. The loop's side is agent_review.cc.
//
// Pure functions; thread-safety: none needed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "llm/llm.h"
#include "planner/checks.h"

namespace odin {

enum class ReviewRole { kHydrator, kCritic, kDrift, kQa, kReflection, kSpec, kProgress };
constexpr ReviewRole kReviewRoles[] = {ReviewRole::kHydrator, ReviewRole::kCritic,     ReviewRole::kDrift,
                                       ReviewRole::kQa,       ReviewRole::kReflection, ReviewRole::kSpec,
                                       ReviewRole::kProgress};
// "hydrator", "critic", "drift", "qa", "reflection", "spec", "progress".
const char* ReviewRoleName(ReviewRole role);
std::optional<ReviewRole> ParseReviewRole(std::string_view name);

// Odin's verdict when a reviewer gave no valid answer (after one retry), or
// its model call failed (after the retry policy's retries).
constexpr char kCannotAssess[] = "cannot_assess";

struct ReviewerSettings {
  std::optional<bool> enabled;  // unset: the profile decides
  std::string model;            // "": the utility model
  std::string prompt;           // "": Odin's own
};

// reviewers.* and the validation.validate_* settings.
struct ReviewConfig {
  ReviewerSettings roles[7];  // by ReviewRole
  int critic_max_rounds = 2;  // REVISEs the planner may answer before the run halts
  int drift_every = 10;       // an audit every N-th mutating call
  double drift_probability = 0.15;
  std::optional<uint64_t> drift_seed;      // unset: drawn per session, and recorded
  int progress_every = 5;                  // validate_progress: every N model turns
  std::vector<std::string> test_patterns;  // workflows.tdd.test_patterns; empty: the defaults

  ReviewerSettings& of(ReviewRole r) { return roles[static_cast<int>(r)]; }
  const ReviewerSettings& of(ReviewRole r) const { return roles[static_cast<int>(r)]; }
};

// Whether a reviewer runs: its setting, else the profile's table (strict:
// all; safe: hydrator, critic, qa; auto, fast: none). spec and progress only
// when set (validation.validate_specs, validation.validate_progress).
bool ReviewerOn(const ReviewConfig& config, Profile profile, ReviewRole role);

// Odin's own prompt for the role; each begins "You are Odin's <title>".
std::string DefaultReviewPrompt(ReviewRole role);
// The role's answer schema (JSON Schema).
const char* ReviewSchema(ReviewRole role);

// The request: the prompt (settings' or Odin's), the schema, the evidence
// (a JSON document); `problem` is what was wrong with the previous answer,
// when asking again.
ChatRequest ReviewRequest(ReviewRole role, const std::string& model, const std::string& prompt,
                          const std::string& evidence_json, const std::string& problem);

struct ReviewAnswer {
  std::string verdict;      // the schema's verdict ("plan" for the hydrator, "recorded" for a reflection)
  std::string answer_json;  // the whole answer as parsed
  std::string text;         // what the planner reads: reasons, findings, questions
};

// Validates an answer against the role's schema (and, for qa, that every
// criterion cites evidence ids among evidence_ids and that VERIFIED has no
// criterion unmet). InvalidArgument naming the first problem.
StatusOr<ReviewAnswer> ParseReviewAnswer(ReviewRole role, const std::string& text,
                                         const std::vector<std::string>& evidence_ids);

// Validates `value_json` against `schema_json`: the subset of JSON Schema the
// reviewers' schemas use (type, properties, required, additionalProperties
// false, enum, items, minItems, minLength). InvalidArgument naming the first
// problem and where.
Status ValidateJsonSchema(const std::string& schema_json, const std::string& value_json);

// The drift audit's points: whether the n-th mutating call (1-based) of a
// session is audited, every `every`-th and at random with `probability`,
// drawn from `seed` (the same seed gives the same points).
bool DriftAuditDue(uint64_t seed, int64_t n, int every, double probability);

}  // namespace odin
