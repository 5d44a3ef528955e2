#include "gates/file_cache.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

v1::FileSnapshot Full(const std::string& path, const std::string& content) {
  v1::FileSnapshot s;
  s.set_path(path);
  s.set_sha256(Sha256Hex(content));
  s.set_size_bytes(content.size());
  s.set_total_lines(static_cast<uint32_t>(std::count(content.begin(), content.end(), '\n')));
  s.set_full(true);
  s.set_content(content);
  return s;
}

v1::FileSnapshot Part(const std::string& path, const std::string& hash, uint32_t total, uint32_t a, uint32_t b,
                      const std::string& content) {
  v1::FileSnapshot s;
  s.set_path(path);
  s.set_sha256(hash);
  s.set_size_bytes(1000);
  s.set_total_lines(total);
  v1::Segment* seg = s.add_segments();
  seg->set_start_line(a);
  seg->set_end_line(b);
  seg->set_content(content);
  return s;
}

class FileCacheTest : public ::testing::Test {
 protected:
  FileCache Cache(FileCacheOptions o = {}) { return FileCache(o, &clock_); }
  FakeClock clock_;
};

TEST_F(FileCacheTest, FullReadIsOneEntry) {
  FileCache c = Cache();
  c.RecordRead(Full("/w/a", "x\ny\n"));
  const CachedFile* f = c.Find("/w/a");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->full);
  EXPECT_EQ(f->content, "x\ny\n");
  EXPECT_FALSE(f->is_modified);
  EXPECT_EQ(f->ReadRanges(), (std::vector<std::pair<uint32_t, uint32_t>>{{1, 2}}));
}

TEST_F(FileCacheTest, SegmentsMergeWhenTheyOverlapOrTouch) {
  FileCache c = Cache();
  c.RecordRead(Part("/w/a", "h", 100, 10, 12, "l10\nl11\nl12\n"));
  c.RecordRead(Part("/w/a", "h", 100, 13, 14, "l13\nl14\n"));
  c.RecordRead(Part("/w/a", "h", 100, 30, 31, "l30\nl31\n"));
  c.RecordRead(Part("/w/a", "h", 100, 11, 11, "l11\n"));
  const CachedFile* f = c.Find("/w/a");
  EXPECT_EQ(f->ReadRanges(), (std::vector<std::pair<uint32_t, uint32_t>>{{10, 14}, {30, 31}}));
  EXPECT_EQ(f->segments.at(10).content, "l10\nl11\nl12\nl13\nl14\n");
}

TEST_F(FileCacheTest, SegmentsCoveringTheFileMakeItFull) {
  FileCache c = Cache();
  c.RecordRead(Part("/w/a", "h", 3, 1, 1, "a\n"));
  c.RecordRead(Part("/w/a", "h", 3, 2, 3, "b\nc\n"));
  const CachedFile* f = c.Find("/w/a");
  EXPECT_TRUE(f->full);
  EXPECT_EQ(f->content, "a\nb\nc\n");
}

TEST_F(FileCacheTest, AtMostMaxSegmentsOldestGoFirst) {
  FileCacheOptions o;
  o.max_segments = 3;
  FileCache c = Cache(o);
  for (uint32_t i = 0; i < 5; ++i) {
    clock_.Advance(seconds(1));
    c.RecordRead(Part("/w/a", "h", 100, 10 * i + 1, 10 * i + 1, "x\n"));
  }
  EXPECT_EQ(c.Find("/w/a")->ReadRanges(), (std::vector<std::pair<uint32_t, uint32_t>>{{21, 21}, {31, 31}, {41, 41}}));
}

TEST_F(FileCacheTest, ANewHashStartsOver) {
  FileCache c = Cache();
  c.RecordRead(Part("/w/a", "old", 100, 1, 5, "1\n2\n3\n4\n5\n"));
  c.RecordRead(Part("/w/a", "new", 100, 50, 51, "x\ny\n"));
  EXPECT_EQ(c.Find("/w/a")->ReadRanges(), (std::vector<std::pair<uint32_t, uint32_t>>{{50, 51}}));
}

TEST_F(FileCacheTest, WriteHoldsTheNewContentAsModified) {
  FileCache c = Cache();
  c.RecordRead(Part("/w/a", "old", 10, 1, 2, "1\n2\n"));
  c.RecordWrite(Full("/w/a", "new\n"));
  const CachedFile* f = c.Find("/w/a");
  EXPECT_TRUE(f->full);
  EXPECT_TRUE(f->is_modified);
  EXPECT_EQ(f->content, "new\n");
  EXPECT_EQ(f->original_hash, "old");
}

TEST_F(FileCacheTest, EntryLimitEvictsLeastRecentlyUsed) {
  FileCacheOptions o;
  o.max_entries = 2;
  o.policy = EvictionPolicy::kLru;
  FileCache c = Cache(o);
  c.RecordRead(Full("/w/a", "a\n"));
  clock_.Advance(seconds(1));
  c.RecordRead(Full("/w/b", "b\n"));
  clock_.Advance(seconds(1));
  c.Find("/w/a");  // a is now the more recent
  clock_.Advance(seconds(1));
  c.RecordRead(Full("/w/c", "c\n"));
  EXPECT_NE(c.Find("/w/a"), nullptr);
  EXPECT_EQ(c.Find("/w/b"), nullptr);
  EXPECT_EQ(c.entries(), 2u);
}

TEST_F(FileCacheTest, LfuEvictsTheLeastUsed) {
  FileCacheOptions o;
  o.max_entries = 2;
  o.policy = EvictionPolicy::kLfu;
  FileCache c = Cache(o);
  c.RecordRead(Full("/w/a", "a\n"));
  c.RecordRead(Full("/w/b", "b\n"));
  for (int i = 0; i < 3; ++i) c.Find("/w/a");
  c.RecordRead(Full("/w/c", "c\n"));
  EXPECT_NE(c.Find("/w/a"), nullptr);
  EXPECT_EQ(c.Find("/w/b"), nullptr);
}

TEST_F(FileCacheTest, HybridEvictsUnmodifiedFilesFirst) {
  FileCacheOptions o;
  o.max_entries = 2;
  FileCache c = Cache(o);
  c.RecordWrite(Full("/w/modified", "m\n"));  // oldest, but modified
  clock_.Advance(seconds(1));
  c.RecordRead(Full("/w/plain", "p\n"));
  clock_.Advance(seconds(1));
  c.RecordRead(Full("/w/new", "n\n"));
  EXPECT_NE(c.Find("/w/modified"), nullptr);
  EXPECT_EQ(c.Find("/w/plain"), nullptr);
}

TEST_F(FileCacheTest, ByteLimitsHold) {
  FileCacheOptions o;
  o.max_total_bytes = 10;
  o.max_file_bytes = 8;
  FileCache c = Cache(o);
  c.RecordRead(Full("/w/big", std::string(9, 'x')));  // over the per-file limit
  EXPECT_EQ(c.Find("/w/big"), nullptr);
  c.RecordRead(Full("/w/a", std::string(6, 'a')));
  c.RecordRead(Full("/w/b", std::string(6, 'b')));  // 12 > 10: a goes
  EXPECT_EQ(c.Find("/w/a"), nullptr);
  EXPECT_LE(c.total_bytes(), 10u);
}

TEST_F(FileCacheTest, FreshnessByMtimeThenHash) {
  std::string dir = *MakeTempDir("odin-cache");
  std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomic(path, "one\n").ok());
  FileCacheOptions o;
  o.root = dir;
  FileCache c = Cache(o);
  v1::FileSnapshot s = Full(path, "one\n");
  s.set_mtime_ns(1);  // not the file's: forces the hash check
  c.RecordRead(s);
  EXPECT_TRUE(c.IsFresh(path));  // same content
  ASSERT_TRUE(WriteFileAtomic(path, "two\n").ok());
  EXPECT_FALSE(c.IsFresh(path));
  // A file swapped for a symlink to one with the cached bytes is not it.
  ASSERT_TRUE(WriteFileAtomic(dir + "/g", "one\n").ok());
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink("g", path.c_str()), 0);
  EXPECT_FALSE(c.IsFresh(path));
  RemoveTree(dir);
}

TEST_F(FileCacheTest, ListShowsWhatIsCached) {
  FileCache c = Cache();
  c.RecordRead(Part("/w/a", "h", 100, 5, 9, "5\n6\n7\n8\n9\n"));
  auto list = c.List();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].ranges, "lines 5-9");
  EXPECT_FALSE(list[0].full);
}

}  // namespace
}  // namespace odin
