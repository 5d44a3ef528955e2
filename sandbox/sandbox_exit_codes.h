#pragma once
// Exit codes of odin-sandbox that mean something to the process that ran it.
// Any other exit code is the sandboxed program's own.

namespace odin {

// The sandbox was required (--policy=require) but could not be set up. The
// program never started.
constexpr int kSandboxSetupFailedExit = 71;
// odin-sandbox was called wrongly (bad options).
constexpr int kSandboxUsageExit = 64;

}  // namespace odin
