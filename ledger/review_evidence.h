#pragma once
// The evidence a reviewer reads (planner/reviewers.h), assembled from the
// ledger, never from the planner's own words alone: the user's messages
// verbatim, the plan, the calls (with exit codes and output tails), the
// changes they made with their diffs, the validations of those changes and
// the backpressure checks. Every item carries the id a reviewer cites.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

class Ledger;

struct ReviewEvidenceInput {
  std::string session_id;
  std::string workspace;
  std::vector<std::string> user_messages;  // verbatim, oldest first
  std::string plan_json;                   // "" when there is none
  std::vector<std::string> execution_ids;  // the calls to show, oldest first
  std::string extra_json;                  // a JSON object merged in ("" for none)
  size_t max_bytes = 96 * 1024;
};

struct ReviewEvidence {
  std::string json;              // the document the reviewer reads
  std::vector<std::string> ids;  // every id in it a reviewer may cite
};

StatusOr<ReviewEvidence> AssembleReviewEvidence(Ledger* ledger, const ReviewEvidenceInput& in);

}  // namespace odin
