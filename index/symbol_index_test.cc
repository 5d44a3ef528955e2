#include "index/symbol_index.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

class SymbolIndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = *MakeTempDir("symbol-indexer-test");
    ASSERT_TRUE(MakeDirs(ws_ + "/.odin", 0700).ok());  // Odin's state directory, as the runtime makes it
    indexer_ = std::make_unique<SymbolIndexer>(ws_, ws_ + "/.odin/index.db");
    std::string note;
    ASSERT_TRUE(indexer_->Open(&note).ok());
  }
  void TearDown() override {
    indexer_.reset();
    RemoveTree(ws_);
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_ + "/" + rel)).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, content).ok());
  }
  std::vector<std::string> Planned(bool full) {
    StatusOr<std::vector<std::vector<std::string>>> batches = indexer_->Plan(full);
    EXPECT_TRUE(batches.ok()) << batches.status().ToString();
    std::vector<std::string> out;
    if (batches.ok()) {
      for (const auto& b : *batches) out.insert(out.end(), b.begin(), b.end());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // What a worker would answer for path: one function named fn.
  void Parsed(const std::string& path, const std::string& fn, int64_t mtime_ns = 1) {
    auto out = std::make_unique<v1::IndexParseOutput>();
    v1::IndexedFile* f = out->add_files();
    f->set_path(path);
    f->set_language("python");
    f->set_sha256(std::string(64, fn[0]));
    f->set_size_bytes(10);
    f->set_mtime_ns(mtime_ns);
    f->set_lines(2);
    v1::IndexedSymbol* s = f->add_symbols();
    s->set_kind(0);
    s->set_name(fn);
    s->set_qualified_name(fn);
    s->set_parent(-1);
    s->set_end_byte(5);
    indexer_->Apply(std::move(out));
  }

  std::string ws_;
  std::unique_ptr<SymbolIndexer> indexer_;
};

TEST_F(SymbolIndexerTest, TheFirstPlanWalksThenOnlyDirtyPathsAreParsed) {
  Put("a.py", "def a(): pass\n");
  Put("src/b.go", "package b\n");
  Put("notes.txt", "not source\n");
  Put(".odin/x.py", "def hidden(): pass\n");
  Put("node_modules/m/i.js", "function dep() {}\n");
  EXPECT_EQ(Planned(false), (std::vector<std::string>{"a.py", "src/b.go"}));
  EXPECT_TRUE(indexer_->walked());
  // Nothing marked: nothing to parse, whatever changed (the caller's
  // tracker would have said).
  EXPECT_TRUE(Planned(false).empty());
  indexer_->MarkDirty("a.py");
  indexer_->MarkDirty("notes.txt");  // not a language the index parses
  EXPECT_TRUE(indexer_->has_dirty());
  EXPECT_EQ(Planned(false), std::vector<std::string>{"a.py"});
  EXPECT_FALSE(indexer_->has_dirty());
}

TEST_F(SymbolIndexerTest, AppliedFilesAreNotParsedAgainUntilTheirStampChanges) {
  Put("a.py", "def a(): pass\n");
  ASSERT_EQ(Planned(true), std::vector<std::string>{"a.py"});
  struct stat st {};
  ASSERT_EQ(stat((ws_ + "/a.py").c_str(), &st), 0);
  auto out = std::make_unique<v1::IndexParseOutput>();
  v1::IndexedFile* f = out->add_files();
  f->set_path("a.py");
  f->set_language("python");
  f->set_sha256(std::string(64, 'a'));
  f->set_size_bytes(static_cast<uint64_t>(st.st_size));
  f->set_mtime_ns(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  indexer_->Apply(std::move(out));
  ASSERT_TRUE(indexer_->Finish().ok());
  EXPECT_TRUE(Planned(true).empty()) << "same size and mtime";
  Put("a.py", "def a(): return 1\n");
  EXPECT_EQ(Planned(true), std::vector<std::string>{"a.py"});
}

TEST_F(SymbolIndexerTest, AFileThatIsGoneLeavesTheIndex) {
  Put("a.py", "def a(): pass\n");
  Planned(true);
  Parsed("a.py", "alpha");
  ASSERT_TRUE(indexer_->Finish().ok());
  ASSERT_EQ(indexer_->db()->FindSymbols("alpha", false, std::nullopt, "", 10)->size(), 1u);
  ASSERT_EQ(unlink((ws_ + "/a.py").c_str()), 0);
  indexer_->MarkDirty("a.py");
  EXPECT_TRUE(Planned(false).empty());
  EXPECT_TRUE(indexer_->db()->FindSymbols("alpha", false, std::nullopt, "", 10)->empty());
}

TEST_F(SymbolIndexerTest, AParseErrorRemovesTheFileAndTheWriterKeepsGoing) {
  Put("a.py", "x\n");
  Put("b.py", "y\n");
  Planned(true);
  Parsed("a.py", "alpha");
  auto gone = std::make_unique<v1::IndexParseOutput>();
  gone->add_files()->set_path("a.py");
  gone->mutable_files(0)->set_error("a.py: No such file or directory");
  indexer_->Apply(std::move(gone));
  Parsed("b.py", "beta");
  ASSERT_TRUE(indexer_->Finish().ok());
  EXPECT_TRUE(indexer_->db()->FindSymbols("alpha", false, std::nullopt, "", 10)->empty());
  EXPECT_EQ(indexer_->db()->FindSymbols("beta", false, std::nullopt, "", 10)->size(), 1u);
}

TEST_F(SymbolIndexerTest, ManyFilesAreLoadedInBulkAndTheIndexesComeBack) {
  for (int i = 0; i < 300; ++i) Put("m/f" + std::to_string(i) + ".py", "def f(): pass\n");
  std::vector<std::string> planned = Planned(true);
  ASSERT_EQ(planned.size(), 300u);
  for (int i = 0; i < 300; ++i) Parsed("m/f" + std::to_string(i) + ".py", "fn" + std::to_string(i));
  ASSERT_TRUE(indexer_->Finish().ok());
  EXPECT_EQ(indexer_->db()->FindSymbols("fn42", false, std::nullopt, "", 10)->size(), 1u);
  StatusOr<index::IndexStats> st = indexer_->db()->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->files, 300);
}

}  // namespace
}  // namespace odin
