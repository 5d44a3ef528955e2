#pragma once
// What the change tracker and the overlay's applier both read of a
// workspace entry: its state from lstat, and a regular file's hash and
// bytes (within a cap), read without following a symlink.

#include <sys/stat.h>

#include <optional>
#include <string>

#include "workspace/change_tracker.h"

namespace odin {

EntryState EntryStateOf(const struct stat& st);

// Sets state->sha256 from the file name in dir_fd (opened O_NOFOLLOW); its
// bytes go to *content when they fit in cap_bytes. Nothing is set if the
// file cannot be read.
void HashEntryAt(int dir_fd, const char* name, int64_t cap_bytes, EntryState* state,
                 std::optional<std::string>* content);

}  // namespace odin
