#pragma once
// What the ledger says an agent has done in a session, for the handoff that
// replaces compacted turns: the files it changed (file tools and commands
// alike, from the mutation records) and its failed attempts (failed, refused,
// timed-out or crashed calls, validations that found new errors, refused
// completions), each with its execution id. From the records, never from the
// model's words.

#include <string>

#include "base/status.h"

namespace odin {

class Ledger;

// The facts as text, at most about max_bytes of it (the newest failures
// kept). "" when the agent has done nothing worth listing.
StatusOr<std::string> HandoffFacts(Ledger* ledger, const std::string& session_id, const std::string& agent_id,
                                   const std::string& workspace, size_t max_bytes = 12000);

}  // namespace odin
