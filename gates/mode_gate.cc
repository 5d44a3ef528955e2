#include "gates/mode_gate.h"

#include <string>

namespace odin {

Status CheckMode(std::string_view tool, Mode mode) {
  const ToolInfo* info = FindTool(tool);
  if (info == nullptr) {
    std::string known;
    for (const std::string& t : ToolsForMode(Mode::kEdit)) known += (known.empty() ? "" : ", ") + t;
    return Status::NotFound("unknown tool '" + std::string(tool) + "'", "the tools are " + known);
  }
  if (info->writes_files() && mode != Mode::kEdit) {
    return Status::PermissionDenied(std::string(tool), std::string("not available in ") + ModeName(mode) +
                                                           " mode, which does not change files; it needs edit mode");
  }
  return Status::OK();
}

}  // namespace odin
