#pragma once
// The file a writing call names, judged once, when the call is taken
// (RunCallGates' last step for WriteFile, EditTool, MultiEditTool and
// InitTool; for EditSymbol once the index has found its span): resolved in
// the workspace and never outside it, not a protected path (only InitTool,
// which /init alone offers, may write ODIN.md), allowed by the agent's
// mutation hold, and, in the strict profile, covered by the evidence the
// call cites. Read-before-edit waits for the write's turn (RunTurnGates):
// it judges the file as the earlier writes to it left it.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gates/safeguards.h"

namespace odin {
namespace v1 {
class ToolInput;
}  // namespace v1

struct WriteTargetContext {
  std::string workspace;  // absolute, symlinks resolved
  bool init = false;      // InitTool: ODIN.md is its to write, and no hold applies
  bool grounded_edits = false;
  // The agent's mutation hold on the resolved path (Coordinator::CheckHold,
  // which records its own refusal).
  std::function<Status(const std::string& path)> hold;
  // The strict profile: the analysis ids the call cites, and whether they
  // cover the path (Coordinator::CheckEvidence).
  std::vector<std::string> cited;
  std::function<Status(const std::string& path, const std::vector<std::string>& cited)> covered;
};

struct WriteTargetVerdict {
  Status status;         // OK: the write may queue for its turn on `path`
  bool rejected = true;  // a refusal, else the tool's error (a path that does not resolve)
  std::string path;      // absolute
  std::optional<GateFinding> event;
};

WriteTargetVerdict JudgeWriteTarget(const std::string& tool, const v1::ToolInput& input,
                                    const WriteTargetContext& context);

}  // namespace odin
