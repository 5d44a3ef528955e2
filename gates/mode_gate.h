#pragma once
// Gate 1, the mode gate: a tool call must belong to the mode of the message
// it serves. Ask and plan offer only tools that leave files alone; edit adds
// the writing tools. (Their workers also see the workspace read-only, so the
// operating system enforces the same rule.)

#include <string_view>

#include "base/status.h"
#include "tools/tool_catalog.h"

namespace odin {

// OK iff tool is known and offered in mode. Else NotFound (no such tool) or
// PermissionDenied (not in this mode), with a message for the model.
Status CheckMode(std::string_view tool, Mode mode);

}  // namespace odin
