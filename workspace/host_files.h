#pragma once
// The user's own files, by path: the config and state directories (the
// user config, the trust store, the history, the hooks' transcripts),
// files the user names on the command line (TLS keys), a toolchain's
// credentials to mask. A user's dotfiles may be symlinks of their own, so
// these follow them, as any program of the user's would. Never a path in a
// workspace or in Odin's state directory: those go through WorkspaceFiles
// (workspace_files.h), and scripts/check-layering.py refuses the raw calls
// these wrap anywhere on the host side.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

// The regular file at path, of at most max_bytes; nullopt when there is
// none. A FIFO, a device or a larger file is an error, not a hang.
StatusOr<std::optional<std::string>> ReadUserFile(const std::string& path, uint64_t max_bytes);
// Writes path atomically (0600), making its directories (0700).
Status WriteUserFile(const std::string& path, std::string_view contents);
// mkdir -p with mode.
Status MakeUserDirs(const std::string& path, int mode = 0700);
// Whether something is at path (not following a last symlink).
bool UserPathExists(const std::string& path);
// An fd to append to path (created 0600; its directory made 0700), not
// through a last symlink; emptied first when larger than truncate_over.
StatusOr<UniqueFd> OpenUserLog(const std::string& path, uint64_t truncate_over = UINT64_MAX);

}  // namespace odin
