#pragma once
// The file tools that run to completion inside a tool worker without a
// subprocess: Read, WriteFile, EditTool and MultiEditTool.
//
// Each fills the ToolResult (status, error, the file as seen or written, the
// diff, a structured output_json) and returns the text the model sees. Bad
// input (a missing file, a directory, a binary file, a file over the size cap,
// malformed arguments) ends as an error result and changes nothing.

#include <string>

namespace odin {
namespace v1 {
class ToolRequest;
class ToolResult;
}  // namespace v1

// Runs the file tool request.input() is for (Read, WriteFile, EditTool,
// MultiEditTool, a resolved EditSymbol); an error result for any other
// input. workspace is absolute with symlinks resolved.
std::string RunFileTool(const v1::ToolRequest& request, const std::string& workspace, v1::ToolResult* result);

}  // namespace odin
