#include "gates/file_cache.h"

#include <sys/stat.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "tools/edit_apply.h"
#include "workspace/workspace_files.h"

namespace odin {

std::vector<std::pair<uint32_t, uint32_t>> CachedFile::ReadRanges() const {
  if (full) return {{1, total_lines}};
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& [start, seg] : segments) out.push_back({seg.start_line, seg.end_line});
  return out;
}

uint64_t CachedFile::Bytes() const {
  uint64_t n = content.size();
  for (const auto& [start, seg] : segments) n += seg.content.size();
  return n;
}

uint64_t FileCache::total_bytes() const {
  uint64_t n = 0;
  for (const auto& [path, f] : files_) n += f.Bytes();
  return n;
}

void FileCache::MakeRoom(uint64_t incoming, const std::string& keep) {
  for (;;) {
    bool too_many = files_.size() > o_.max_entries || (files_.size() == o_.max_entries && files_.count(keep) == 0);
    uint64_t total = total_bytes();
    if (!too_many && total + incoming <= o_.max_total_bytes) return;
    // Pick the victim by policy; never the entry being filled.
    auto victim = files_.end();
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (it->first == keep) continue;
      if (victim == files_.end()) {
        victim = it;
        continue;
      }
      const CachedFile& a = it->second;
      const CachedFile& b = victim->second;
      bool better = false;
      switch (o_.policy) {
        case EvictionPolicy::kLru: better = a.last_accessed < b.last_accessed; break;
        case EvictionPolicy::kLfu:
          better = a.access_count < b.access_count ||
                   (a.access_count == b.access_count && a.last_accessed < b.last_accessed);
          break;
        case EvictionPolicy::kHybrid:
          better = a.is_modified != b.is_modified ? !a.is_modified : a.last_accessed < b.last_accessed;
          break;
      }
      if (better) victim = it;
    }
    if (victim == files_.end()) return;  // only `keep` is left
    files_.erase(victim);
  }
}

CachedFile* FileCache::Entry(const std::string& path, const std::string& sha256) {
  auto it = files_.find(path);
  if (it != files_.end() && it->second.sha256 != sha256) {
    // The file changed since: what we knew of it is void.
    bool modified = it->second.is_modified;
    std::string original = it->second.original_hash;
    files_.erase(it);
    it = files_.end();
    CachedFile& f = files_[path];
    f.is_modified = modified;
    f.original_hash = original;
  }
  if (it == files_.end()) it = files_.find(path);
  if (it != files_.end()) it->second.changed_by.clear();  // known again, as it is now
  if (it == files_.end()) it = files_.emplace(path, CachedFile()).first;
  CachedFile& f = it->second;
  SteadyTime now = clock_->Now();
  if (f.path.empty()) {
    f.path = path;
    f.cached_at = now;
    if (f.original_hash.empty()) f.original_hash = sha256;
  }
  f.sha256 = sha256;
  f.last_accessed = now;
  ++f.access_count;
  return &f;
}

namespace {

// The bytes of lines [from, to] of seg. REQUIRES: inside the segment.
std::string SliceLines(const CachedSegment& seg, uint32_t from, uint32_t to) {
  size_t pos = 0;
  uint32_t n = seg.start_line;
  auto next = [&seg](size_t p) {
    size_t nl = seg.content.find('\n', p);
    return nl == std::string::npos ? seg.content.size() : nl + 1;
  };
  while (n < from && pos < seg.content.size()) {
    pos = next(pos);
    ++n;
  }
  size_t begin = pos;
  while (n <= to && pos < seg.content.size()) {
    pos = next(pos);
    ++n;
  }
  return seg.content.substr(begin, pos - begin);
}

}  // namespace

void FileCache::AddSegment(CachedFile* f, uint32_t start, uint32_t end, std::string content) {
  // Segments stay disjoint and non-adjacent: the new one absorbs every
  // segment it overlaps or touches, keeping their lines outside [start, end]
  // and its own (fresher) lines inside.
  std::string before, after;
  uint32_t lo = start, hi = end;
  for (auto it = f->segments.begin(); it != f->segments.end();) {
    const CachedSegment& old = it->second;
    if (old.end_line + 1 < start || old.start_line > end + 1) {
      ++it;
      continue;
    }
    if (old.start_line < start) {
      before = SliceLines(old, old.start_line, start - 1);
      lo = old.start_line;
    }
    if (old.end_line > end) {
      after = SliceLines(old, end + 1, old.end_line);
      hi = old.end_line;
    }
    it = f->segments.erase(it);
  }
  f->segments[lo] = {lo, hi, before + content + after, clock_->Now()};
  while (f->segments.size() > o_.max_segments) {
    auto oldest = f->segments.begin();
    for (auto it = f->segments.begin(); it != f->segments.end(); ++it) {
      if (it->second.cached_at < oldest->second.cached_at) oldest = it;
    }
    f->segments.erase(oldest);
  }
  // Segments that grew to cover the whole file make it a full entry.
  if (f->segments.size() == 1 && lo <= 1 && hi >= f->total_lines) {
    f->full = true;
    f->content = std::move(f->segments.begin()->second.content);
    f->segments.clear();
  }
}

void FileCache::RecordRead(const v1::FileSnapshot& s) {
  if (s.size_bytes() > o_.max_file_bytes) return;
  uint64_t incoming = s.content().size();
  for (const v1::Segment& seg : s.segments()) incoming += seg.content().size();
  MakeRoom(incoming, s.path());
  CachedFile* f = Entry(s.path(), s.sha256());
  f->size = s.size_bytes();
  f->total_lines = s.total_lines();
  f->mtime_ns = s.mtime_ns();
  if (s.full()) {
    f->full = true;
    f->content_known = true;
    f->content = s.content();
    f->segments.clear();
    return;
  }
  if (f->full) return;  // a partial read adds nothing to a full one
  for (const v1::Segment& seg : s.segments()) AddSegment(f, seg.start_line(), seg.end_line(), seg.content());
}

void FileCache::RecordReadRanges(const std::string& path, const std::string& sha256, uint64_t size,
                                 uint32_t total_lines, int64_t mtime_ns, bool full,
                                 const std::vector<std::pair<uint32_t, uint32_t>>& ranges, bool modified) {
  if (size > o_.max_file_bytes) return;
  MakeRoom(0, path);
  CachedFile* f = Entry(path, sha256);
  f->is_modified = f->is_modified || modified;
  f->size = size;
  f->total_lines = total_lines;
  f->mtime_ns = mtime_ns;
  f->content_known = false;
  if (full) {
    f->full = true;
    f->segments.clear();
    return;
  }
  if (f->full) return;
  for (auto [a, b] : ranges) AddSegment(f, a, b, "");
}

void FileCache::RecordWrite(const v1::FileSnapshot& s) {
  MakeRoom(s.content().size(), s.path());
  CachedFile* f = Entry(s.path(), s.sha256());
  f->full = true;
  f->content_known = true;
  f->content = s.content();
  f->segments.clear();
  f->size = s.size_bytes();
  f->total_lines = s.total_lines();
  f->mtime_ns = s.mtime_ns();
  f->is_modified = true;
}

void FileCache::Invalidate(const std::string& path) { files_.erase(path); }

std::vector<const CachedFile*> FileCache::Entries() const {
  std::vector<const CachedFile*> out;
  out.reserve(files_.size());
  for (const auto& [path, f] : files_) out.push_back(&f);
  return out;
}

void FileCache::MarkChanged(const std::string& path, const std::string& by) {
  auto it = files_.find(path);
  if (it != files_.end()) it->second.changed_by = by;
}

std::string FileCache::ChangedBy(const std::string& path) const {
  auto it = files_.find(path);
  return it == files_.end() ? "" : it->second.changed_by;
}

const CachedFile* FileCache::Find(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) return nullptr;
  it->second.last_accessed = clock_->Now();
  ++it->second.access_count;
  return &it->second;
}

bool FileCache::IsFresh(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) return false;
  CachedFile& f = it->second;
  if (!f.changed_by.empty()) return false;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(o_.root);
  if (o_.root.empty() || !files.ok()) return false;
  FileEntry st = files->Look(path);
  if (!st.is_file()) return false;
  int64_t mtime = st.mtime_ns;
  // File times tick coarsely (milliseconds): two writes in one tick share an
  // mtime. So an unchanged mtime and size are trusted only for a file last
  // modified well in the past ("racy git"); otherwise the content decides.
  int64_t now_ns = clock_->WallMillis() * 1'000'000;
  bool settled = now_ns - mtime > 2'000'000'000;
  if (settled && mtime == f.mtime_ns && st.size == f.size) return true;
  if (st.size > o_.max_file_bytes) return false;
  StatusOr<std::string> content = files->ReadFile(path, o_.max_file_bytes, WorkspaceFiles::Links::kNone);
  if (!content.ok() || Sha256Hex(*content) != f.sha256) return false;
  f.mtime_ns = mtime;
  return true;
}

std::vector<CachedFileInfo> FileCache::List() const {
  std::vector<CachedFileInfo> out;
  for (const auto& [path, f] : files_) {
    out.push_back({path, f.size, f.full, f.is_modified, f.full ? "" : DescribeRanges(f.ReadRanges())});
  }
  return out;
}

}  // namespace odin
