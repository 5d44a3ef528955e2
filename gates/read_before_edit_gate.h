#pragma once
// Gate 2, read-before-edit (DESIGN.md section 3), the coordinator's half. It
// replaces the seed's LLM "is the cache sufficient" check with rules:
//   - creating a file needs nothing, but the file must still not exist when
//     the worker writes it;
//   - changing an existing file (WriteFile, EditTool, MultiEditTool) needs a
//     read of it by this agent (all of it, for WriteFile, which replaces it all), and the file must still have the
//     content hash of that read (checked on disk here by mtime then SHA-256, and again by the worker under the file's
//     lock: compare-and-swap);
//   - after a partial read, the worker only accepts matches inside the lines
//     read; the expectation this gate returns carries those ranges.
// A refusal says why and what to read. Pure apart from stat/read of the file.

#include <string>

#include "base/status.h"
#include "gates/file_cache.h"

namespace odin {
namespace v1 {
class FileExpectation;
class ToolInput;
}  // namespace v1

// Resolves the file a writing tool's typed input (parsed at Submit) writes
// in workspace. *given is the path as the model wrote it. Returns
// InvalidArgument for an input that writes no file or a path outside the
// workspace (IsOutsideWorkspace(*given) tells which), NotFound and the like
// from the resolution.
StatusOr<std::string> ResolveWriteTarget(const v1::ToolInput& input, const std::string& workspace, std::string* given);

// Checks a writing tool's call on the resolved file `path` against this
// agent's cache. On success fills *expect for the worker. Returns NotFound /
// InvalidArgument for bad input (an error result) and FailedPrecondition
// for a refusal by the gate (a rejected result).
Status CheckReadBeforeEdit(const std::string& tool, const std::string& path, const std::string& workspace,
                           FileCache* cache, v1::FileExpectation* expect);

}  // namespace odin
