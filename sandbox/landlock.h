#pragma once
// The Landlock layer: the fallback that keeps a program's writes inside the
// workspace when bubblewrap cannot make namespaces (no user namespaces, say).
// Reads stay as they were; writes (creating, changing, removing, renaming)
// are allowed only below the given directories. Needs no_new_privs (the
// seccomp layer sets it first). Inherited by everything the program starts.
//
// Landlock allows, it cannot subtract: below a writable workspace, .odin and
// the protected paths are writable in this fallback; the coordinator's gates
// still refuse the file tools' writes to them.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

// The kernel's Landlock ABI version; 0 when it has none (or it is disabled).
int LandlockAbi();

// Restricts the calling process's writes to what is below the directories
// in writable, and to the files in it (devices such as /dev/null); those that
// do not exist are skipped. FailedPrecondition when the kernel has no Landlock.
Status RestrictWritesTo(const std::vector<std::string>& writable);

}  // namespace odin
