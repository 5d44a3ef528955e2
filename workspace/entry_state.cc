#include "workspace/entry_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"

namespace odin {

const char* EntryTypeName(EntryType type) {
  switch (type) {
    case EntryType::kFile: return "file";
    case EntryType::kSymlink: return "symlink";
    case EntryType::kDirectory: return "directory";
    case EntryType::kOther: return "other";
  }
  return "other";
}

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kCreated: return "created";
    case ChangeKind::kModified: return "modified";
    case ChangeKind::kDeleted: return "deleted";
  }
  return "modified";
}

EntryState EntryStateOf(const struct stat& st) {
  EntryState s;
  s.type = S_ISREG(st.st_mode)   ? EntryType::kFile
           : S_ISLNK(st.st_mode) ? EntryType::kSymlink
           : S_ISDIR(st.st_mode) ? EntryType::kDirectory
                                 : EntryType::kOther;
  s.size = s.type == EntryType::kDirectory ? 0 : static_cast<int64_t>(st.st_size);
  s.mode = st.st_mode & 07777;
  s.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  s.ino = st.st_ino;
  return s;
}

void HashEntryAt(int dir_fd, const char* name, int64_t cap_bytes, EntryState* state,
                 std::optional<std::string>* content) {
  int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  Sha256 h;
  std::string kept;
  bool keep = state->size <= cap_bytes;
  char buf[64 * 1024];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    std::string_view piece(buf, static_cast<size_t>(n));
    h.Update(piece);
    if (keep) kept.append(piece);
    if (static_cast<int64_t>(kept.size()) > cap_bytes) {
      keep = false;
      kept.clear();
    }
  }
  close(fd);
  if (n < 0) return;
  state->sha256 = HexDigest(h.Finish());
  if (keep && content != nullptr) *content = std::move(kept);
}

}  // namespace odin
