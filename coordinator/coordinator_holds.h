#pragma once
// What the coordinator holds while a call's validation runs: a write waiting
// for its file's verdict, a command waiting for the verdicts on the files it
// changed. Private to the coordinator's own files.

#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"

namespace odin {

struct Coordinator::Held {
  Call write;
  v1::ToolResult result;
  Status recorded;
};

struct Coordinator::CommandHold {
  Call command;
  v1::ToolResult result;
  Status recorded;
  size_t outstanding = 0;  // checks not yet finished
};

}  // namespace odin
