#include "workspace/git_index_file.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace odin {

namespace {

uint32_t Be32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The file through a window of pread()s: at most kWindow bytes held.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}
  // At least n bytes from the current offset, or null at the end.
  const unsigned char* Need(size_t n) {
    if (end_ - start_ < n) {
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(start_));
      end_ -= start_;
      start_ = 0;
      buf_.resize(std::max(n, kWindow));
      while (end_ < n) {
        ssize_t got = pread(fd_, buf_.data() + end_, buf_.size() - end_, static_cast<off_t>(offset_ + end_));
        if (got <= 0) return nullptr;
        end_ += static_cast<size_t>(got);
      }
    }
    return buf_.data() + start_;
  }
  void Skip(size_t n) {
    start_ += n;
    offset_ += n;
  }

 private:
  static constexpr size_t kWindow = 1 << 20;
  int fd_;
  std::vector<unsigned char> buf_;
  size_t start_ = 0, end_ = 0;  // the unread bytes held
  uint64_t offset_ = 0;         // of buf_[start_] in the file
};

constexpr size_t kMaxPath = 4096;

}  // namespace

std::optional<GitIndexEntry> FindGitIndexEntry(int fd, std::string_view path) {
  return FindGitIndexEntries(fd, {std::string(path)})[0];
}

std::vector<std::optional<GitIndexEntry>> FindGitIndexEntries(int fd, const std::vector<std::string>& paths) {
  std::vector<std::optional<GitIndexEntry>> found(paths.size());
  size_t next = 0;  // the first path not yet passed
  Reader r(fd);
  const unsigned char* h = r.Need(12);
  if (paths.empty() || h == nullptr || memcmp(h, "DIRC", 4) != 0) return found;
  uint32_t version = Be32(h + 4), count = Be32(h + 8);
  if (version < 2 || version > 4) return found;
  r.Skip(12);
  std::string name;  // the entry's path (v4: the previous one's, then this one's)
  for (uint32_t i = 0; i < count; ++i) {
    const unsigned char* e = r.Need(62);
    if (e == nullptr) return found;
    GitIndexEntry out;
    uint32_t* fields[] = {&out.ctime_s, &out.ctime_ns, &out.mtime_s, &out.mtime_ns, &out.dev,
                          &out.ino,     &out.mode,     &out.uid,     &out.gid,      &out.size};
    for (size_t f = 0; f < 10; ++f) *fields[f] = Be32(e + 4 * f);
    memcpy(out.oid, e + 40, 20);
    uint16_t flags = static_cast<uint16_t>(e[60] << 8 | e[61]);
    out.assume_valid = (flags & 0x8000) != 0;
    int stage = (flags >> 12) & 3;
    size_t fixed = 62;
    if ((flags & 0x4000) != 0) {
      if (version < 3) return found;
      const unsigned char* x = r.Need(64);
      if (x == nullptr) return found;
      out.skip_worktree = (x[62] & 0x40) != 0;
      fixed = 64;
    }
    r.Skip(fixed);
    if (version == 4) {
      // How much of the previous path to drop (git's offset varint), then
      // the rest, NUL-terminated.
      const unsigned char* v = r.Need(1);
      if (v == nullptr) return found;
      uint64_t drop = *v & 127;
      size_t used = 1;
      while ((v[used - 1] & 128) != 0) {
        if (used > 8 || (v = r.Need(used + 1)) == nullptr) return found;
        drop = ((drop + 1) << 7) | (v[used] & 127);
        ++used;
      }
      r.Skip(used);
      if (drop > name.size()) return found;
      name.resize(name.size() - drop);
    } else {
      name.clear();
    }
    // The (rest of the) path: up to its NUL.
    for (;;) {
      const unsigned char* p = r.Need(1);
      if (p == nullptr) return found;
      if (*p == 0) break;
      if (name.size() >= kMaxPath) return found;
      name.push_back(static_cast<char>(*p));
      r.Skip(1);
    }
    r.Skip(1);  // the NUL
    if (version < 4) {
      // Padded with NULs to a multiple of 8 (the one above included).
      size_t length = fixed + name.size() + 1;
      size_t padded = (fixed + name.size() + 8) & ~size_t{7};
      if (padded > length) {
        if (r.Need(padded - length) == nullptr) return found;
        r.Skip(padded - length);
      }
    }
    // Sorted: the paths this entry is past are not there.
    while (next < paths.size() && std::string_view(name).compare(paths[next]) > 0) ++next;
    if (next == paths.size()) return found;
    if (stage == 0 && name == paths[next]) found[next] = out;
  }
  return found;
}

}  // namespace odin
