#pragma once
// FileCache: what one agent has read of which files, kept by the coordinator
// (the seed's file cache). It feeds the read-before-edit gate (which bytes did
// this agent see, and at which content hash?) and the planner's context (the
// list of cached files).
//
// An entry is full (the whole file) or partial (line segments, "start-end",
// at most max_segments per file; overlapping and adjacent segments merge).
// Limits: max_total_bytes over all entries, max_file_bytes per file,
// max_entries files; when full, entries are evicted by the policy (LRU, LFU,
// or hybrid: unmodified files first, then LRU). Freshness is checked by mtime
// and, when the mtime moved, by SHA-256 of the file on disk.
//
// Thread-safety: none; the coordinator loop owns it. Time comes from a Clock.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "planner/tool_host.h"

namespace odin {
namespace v1 {
class FileSnapshot;
}

enum class EvictionPolicy { kLru, kLfu, kHybrid };

struct FileCacheOptions {
  uint64_t max_total_bytes = 100u << 20;
  uint64_t max_file_bytes = 10u << 20;
  size_t max_entries = 500;
  size_t max_segments = 50;
  EvictionPolicy policy = EvictionPolicy::kHybrid;
  // The workspace: a cached file is looked at again through the safe file
  // layer rooted there ("": the cache never looks, nothing is fresh).
  std::string root;
};

struct CachedSegment {
  uint32_t start_line;
  uint32_t end_line;
  std::string content;
  SteadyTime cached_at;
};

struct CachedFile {
  std::string path;                            // absolute; the key
  bool full = false;                           // the whole file was read
  bool content_known = true;                   // false when rebuilt from the ledger (ranges and hash only)
  std::string content;                         // when full
  std::map<uint32_t, CachedSegment> segments;  // when partial, by start line
  std::string sha256;                          // of the whole file at the read (or write)
  uint64_t size = 0;
  uint32_t total_lines = 0;
  int64_t mtime_ns = 0;
  SteadyTime cached_at{};
  SteadyTime last_accessed{};
  uint64_t access_count = 0;
  bool is_modified = false;   // this agent wrote it
  std::string changed_by;     // a command changed the file since: its execution id (stale until read again)
  std::string original_hash;  // hash at the first read

  // The line ranges read, in order; one range 1-total_lines when full.
  std::vector<std::pair<uint32_t, uint32_t>> ReadRanges() const;
  // Bytes this entry holds, for the size limits.
  uint64_t Bytes() const;
};

class FileCache {
 public:
  FileCache(FileCacheOptions options, Clock* clock) : o_(options), clock_(clock) {}

  // Records a read. A snapshot with a different hash than the entry replaces
  // it (the old segments belong to an older file).
  void RecordRead(const v1::FileSnapshot& snapshot);
  // Records what was read (or, if modified, written) without the bytes: a
  // cache rebuilt from the ledger.
  void RecordReadRanges(const std::string& path, const std::string& sha256, uint64_t size, uint32_t total_lines,
                        int64_t mtime_ns, bool full, const std::vector<std::pair<uint32_t, uint32_t>>& ranges,
                        bool modified = false);
  // Records a write by this agent: the new full content, IsModified.
  void RecordWrite(const v1::FileSnapshot& snapshot);
  void Invalidate(const std::string& path);
  // A command (execution `by`) changed the file: what this cache holds of
  // it is stale until the agent reads it again, even if the bytes came back.
  void MarkChanged(const std::string& path, const std::string& by);
  // The execution that changed the file since it was read, or "".
  std::string ChangedBy(const std::string& path) const;

  // The entry for path, or null. Counts as an access.
  const CachedFile* Find(const std::string& path);
  // Returns true iff the entry for path still describes the file on disk:
  // same mtime and size (for a file not modified in the last 2 s), else the
  // same SHA-256.
  bool IsFresh(const std::string& path);

  std::vector<CachedFileInfo> List() const;
  // Every entry, in no particular order.
  std::vector<const CachedFile*> Entries() const;
  size_t entries() const { return files_.size(); }
  uint64_t total_bytes() const;

 private:
  CachedFile* Entry(const std::string& path, const std::string& sha256);
  void MakeRoom(uint64_t incoming, const std::string& keep);
  void AddSegment(CachedFile* f, uint32_t start, uint32_t end, std::string content);

  FileCacheOptions o_;
  Clock* clock_;
  std::map<std::string, CachedFile> files_;
};

}  // namespace odin
