#pragma once
// Small file-system helpers that return Status.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace odin {

StatusOr<std::string> ReadFileToString(const std::string& path);
// Hands the file's bytes to take, a piece at a time. Non-blocking: a path
// swapped for a FIFO must not stall the caller.
Status ReadInPieces(const std::string& path, const std::function<void(std::string_view)>& take);
// The contents of a regular file of at most max_bytes. FIFOs, devices and
// directories are refused without blocking on them (InvalidArgument), and so
// is a larger file, before it is read.
StatusOr<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes);
// Writes through a temporary file in the same directory, fsync, rename: readers
// see the old contents or the new, never a mix. The file is created 0600
// (mkostemp), so it may hold a secret.
Status WriteFileAtomic(const std::string& path, std::string_view contents);
// Writes all of contents to fd (retrying short writes and EINTR).
Status WriteAll(int fd, std::string_view contents, const std::string& what);
// Odin's per-user state directory: $XDG_STATE_HOME/odin, else
// $HOME/.local/state/odin (relative values are ignored, as the XDG
// specification says); "" when neither names one.
std::string OdinStateDir();
// Where Odin keeps the user's credentials (MCP servers' OAuth tokens):
// OdinStateDir()/auth, which no sandbox sees; "" when there is no state
// directory.
std::string OdinAuthDir();
// mkdir -p with the given mode for created directories.
Status MakeDirs(const std::string& path, int mode = 0755);
bool IsDirectory(const std::string& path);
// The target of the symlink at path.
StatusOr<std::string> ReadSymlink(const std::string& path);
bool PathExists(const std::string& path);
// realpath(3).
StatusOr<std::string> RealPath(const std::string& path);
// Joins with exactly one '/' between the parts.
std::string JoinPath(std::string_view a, std::string_view b);
// The directory part of path ("/a/b" -> "/a").
std::string DirName(std::string_view path);
// Whether path lies below dir (not dir itself), compared as text: /a/b is
// below /a, /ab is not.
bool PathIsBelow(std::string_view path, std::string_view dir);
// The directory holding the running executable.
std::string ExecutableDir();
// Creates a private (0700) temporary directory, from $TMPDIR or /tmp.
StatusOr<std::string> MakeTempDir(std::string_view prefix);
// Removes a directory tree; errors are ignored.
void RemoveTree(const std::string& path);

}  // namespace odin
