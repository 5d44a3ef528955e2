#pragma once
// Read-only binds that keep what their mount already says: a remount must
// repeat the flags a user namespace locks (nosuid, nodev, noexec, the atime
// ones), or it fails; bubblewrap's own read-only binds add nodev, which
// makes a device unusable.

#include "base/status.h"

namespace odin {

// Remounts the bind at path read-only, with the flags its mount has.
// Returns 0 or an errno. System calls only (statfs, unlike statvfs, never
// reads /proc/mounts): safe in a child that shares its parent's memory.
int RemountReadOnly(const char* path);

// For odin-sandbox run as root for a root-owned workspace, before it starts
// bubblewrap. bubblewrap binds the host's own device nodes into the
// sandbox's /dev, where the sandbox's root is the host's uid 0 and so their
// owner: it could chmod the host's /dev/null (chmod 000 breaks the host) or
// touch it. A read-only mount refuses both, and still reads and writes the
// devices; bubblewrap keeps the flags a bind's source has. So this enters a
// mount namespace of the calling process's own (a slave of the host's:
// nothing goes back to it) and makes /dev/null, zero, full, random, urandom
// and tty read-only binds of themselves there.
Status MakeHostDevicesReadOnly();

}  // namespace odin
