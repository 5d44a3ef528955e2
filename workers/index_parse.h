#pragma once
// IndexParse: a read-only tool worker parses a batch of workspace files for
// the symbol index (index/extract.h) and returns what they define and use.
// Odin's own call, never the model's: the coordinator sends it, and writes
// the answer to .odin/index.db itself (the worker never sees .odin/).

#include <functional>
#include <string>

#include "index/extract.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_catalog.h"

namespace odin {

// Arguments: {"paths": [relative path, ...]}. Fills r->index_parse() with
// one entry per path (an entry with an error for a path that is gone, not a
// regular file, a symlink, outside the workspace or too large). Returns the
// text output ("parsed N files, M lines"), or an error's text with r's
// status set.
// tick is called after each file (the worker's heartbeat: a batch may take
// longer than the liveness window).
std::string RunIndexParse(const v1::ToolRequest& req, const std::string& workspace, index::Extractor* extractor,
                          const std::function<void()>& tick, v1::ToolResult* r);

}  // namespace odin
