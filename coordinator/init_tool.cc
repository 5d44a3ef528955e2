// InitTool: /init's one write, ODIN.md. The gates it meets are a write's
// (edit mode, read-before-edit on ODIN.md, the file's write queue, the
// mutation record, undo); the write itself happens here, through the file
// tools' own code (tools/file_tools.cc: the lock, the compare-and-swap, the
// diff), because every worker sees ODIN.md read-only.

#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/file_tools.h"
#include "tools/tool_input.h"

namespace odin {

void Coordinator::RunInitTool(Call& c) {
  // Its typed input (parsed at Submit) with the file resolved.
  WriteArgs args = ArgsOf(Typed(c.request).input().write());
  args.file_path = c.write_path;
  v1::ToolRequest req;
  req.set_execution_id(c.call.execution_id);
  req.set_tool(kWriteFileTool);
  SetInput(args, req.mutable_input());
  const FileExpectation& e = c.request.expect;
  v1::FileExpectation* expect = req.mutable_expect();
  expect->set_must_not_exist(e.must_not_exist);
  expect->set_sha256(e.sha256);
  expect->set_full_read(e.full_read);
  v1::ToolResult r;
  std::string text = RunFileTool(req, o_.workspace, &r);
  r.set_execution_id(c.call.execution_id);
  r.set_output_head(text);
  r.set_output_total_bytes(text.size());
  OnResult(r);  // recorded, cached, validated and delivered like a worker's write
}

}  // namespace odin
