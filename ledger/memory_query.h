#pragma once
// memory_query: the model's read-only window on its own session in the
// ledger, so it reasons over recorded facts rather than its recollection.
//
// Arguments: {"query": Q, "file_path"?: F, "execution_id"?: ID, "tool"?: T,
//             "status"?: S, "limit"?: N}
//   last_edit        the newest successful write (of F), with its diff and
//                    its validation
//   last_validation  the newest validation (of F), with its diagnostics
//   failed_attempts  writes (of F) that were refused, failed, or left new
//                    errors, newest first
//   executions       calls by id, or filtered by tool and status, newest first
//
// The answer is JSON; every record carries its execution id.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "tools/tool_catalog.h"
#include "ledger/ledger.h"

namespace odin {

// Runs a query against session_id's records. InvalidArgument for bad
// arguments (naming the problem); the ledger's error if it cannot be read.
StatusOr<std::string> RunMemoryQuery(Ledger* ledger, const std::string& session_id, const std::string& workspace,
                                     const std::string& args_json);
// The same on arguments already parsed (a call's, once, at Submit).
StatusOr<std::string> AnswerMemoryQuery(Ledger* ledger, const std::string& session_id, const std::string& workspace,
                                        const nlohmann::json& args);

}  // namespace odin
