#pragma once
// The record a fork starts with (session/rewind.h): a gate event
// "session_forked" in the new session naming the session it was copied from
// and when. The one place its detail is written and read.

#include <cstdint>
#include <optional>
#include <string>

#include "ledger/ledger.h"

namespace odin {

// The gate event's kind.
inline constexpr char kForkRecordKind[] = "session_forked";

struct ForkOrigin {
  std::string session_id;  // the session copied
  int64_t at_ms = 0;       // when
};

// The gate event recording that session fork_id was copied from origin.
GateEvent ForkRecord(const std::string& fork_id, const ForkOrigin& origin);
// What a gate event says of a fork: nullopt unless it is a well-formed
// "session_forked" record.
std::optional<ForkOrigin> ForkOriginIn(const GateEvent& event);

}  // namespace odin
