#pragma once
// Read-only commands: which commands the coordinator runs in a worker's
// read-only view of the workspace (sandbox/workspace_overlay.h,
// ReadOnlyView) instead of over an overlay of their own. A command that can
// write pays for its overlay (made, read, applied, removed: about a
// millisecond of CPU); one that only reads (cat, rg, ls, git status, sed -n)
// has nothing to track, and most of an agent's commands are such.
//
// This is a judgement of speed, not of safety: the view is read-only by the
// kernel (a read-only bind of the workspace, in a mount namespace the
// command holds no power over), so a command judged wrongly fails to write
// (EROFS) and changes nothing. The judgement is narrow on purpose, so that
// does not happen: every simple command of it (command_parser.h) must be a
// program of a fixed list, called without the options that make it write
// (sort -o, find -delete, sed -i, git diff --output, ...), by its bare name,
// with every word known before it runs; no redirection may write a file,
// no PATH be set, nothing be computed when it runs, and it must parse.
//
// Pure functions: no state, thread-compatible.

#include "gates/command_parser.h"

namespace odin {

// Whether parsed only reads the workspace (see above). False for anything
// it cannot be sure of.
bool CommandOnlyReads(const ParsedCommand& parsed);

}  // namespace odin
