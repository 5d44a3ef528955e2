#include "index/index_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "index/extract.h"
#include "index/index_query.h"

namespace odin::index {
namespace {

using nlohmann::json;

class IndexDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("index-db-test");
    path_ = dir_ + "/index.db";
    std::string note;
    auto db = IndexDb::Open(path_, &note);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(note, "");
    db_ = std::move(*db);
  }
  void TearDown() override {
    db_.reset();
    RemoveTree(dir_);
  }

  void Add(const std::string& path, const std::string& content) {
    files_[path] = content;
    FileSymbols s = extractor_.Extract(LanguageForPath(path), content);
    FileRecord f{path,    LanguageForPath(path), Sha256Hex(content), static_cast<int64_t>(content.size()), 1,
                 s.lines, s.has_errors};
    ASSERT_TRUE(db_->Begin().ok());
    ASSERT_TRUE(db_->Put(f, s).ok());
    ASSERT_TRUE(db_->Commit().ok());
  }

  json Query(const std::string& tool, const json& args) {
    ReadWorkspaceFile read = [this](const std::string& p) -> StatusOr<std::string> {
      auto it = files_.find(p);
      if (it == files_.end()) return Status::NotFound(p);
      return it->second;
    };
    StatusOr<QueryAnswer> a = RunIndexQuery(tool, args, db_.get(), read);
    if (!a.ok()) return {{"error", a.status().ToString()}};
    covered_ = a->covered;
    return json::parse(a->text);
  }

  std::string dir_, path_;
  std::unique_ptr<IndexDb> db_;
  Extractor extractor_;
  std::map<std::string, std::string> files_;
  std::vector<std::string> covered_;
};

TEST_F(IndexDbTest, SymbolsByNameQualifiedNameAndPrefix) {
  Add("src/server.cc", "namespace app {\nclass Server { void Start(); };\nvoid Server::Start() {}\n}\n");
  Add("src/client.py", "class Client:\n    def start(self):\n        pass\n");
  json exact = Query("symbols", {{"query", "Start"}});
  ASSERT_EQ(exact["matches"].size(), 2u) << exact.dump();
  EXPECT_EQ(exact["note"], "several symbols match: choose one by its id; none was picked for you");
  json qualified = Query("symbols", {{"query", "Server::Start"}, {"kind", "method"}});
  EXPECT_EQ(qualified["matches"].size(), 2u) << qualified.dump();
  json full = Query("symbols", {{"query", "app::Server"}});
  ASSERT_EQ(full["matches"].size(), 1u);
  EXPECT_EQ(full["matches"][0]["kind"], "class");
  EXPECT_EQ(full["matches"][0]["span_sha256"].get<std::string>().size(), 64u);
  json prefix = Query("symbols", {{"query", "Ser"}, {"prefix", true}});
  ASSERT_EQ(prefix["matches"].size(), 1u);
  json in_path = Query("symbols", {{"query", "start"}, {"path", "src/client.py"}});
  ASSERT_EQ(in_path["matches"].size(), 1u);
  EXPECT_EQ(in_path["matches"][0]["qualified_name"], "Client.start");
  EXPECT_EQ(covered_, std::vector<std::string>{"src/client.py"});
}

TEST_F(IndexDbTest, UnknownNameListsTheClosest) {
  Add("a.py", "def parse_config():\n    pass\ndef parse_args():\n    pass\n");
  json j = Query("symbols", {{"query", "parse_confg"}});
  EXPECT_TRUE(j["matches"].empty());
  ASSERT_FALSE(j["closest_names"].empty());
  EXPECT_EQ(j["closest_names"][0], "parse_config");
}

TEST_F(IndexDbTest, AnIdFromBeforeARenameIsNotFound) {
  Add("a.py", "def old_name():\n    pass\n");
  std::string id = Query("symbols", {{"query", "old_name"}})["matches"][0]["id"];
  Add("a.py", "def new_name():\n    pass\n");
  json j = Query("references", {{"symbol_id", id}});
  ASSERT_TRUE(j.contains("error"));
  EXPECT_NE(j["error"].get<std::string>().find("is not in the index"), std::string::npos) << j.dump();
}

TEST_F(IndexDbTest, ReferencesAndImpact) {
  Add("lib/util.c", "int helper(int x) { return x + 1; }\n");
  Add("src/main.c", "int helper(int x);\nint run(void) { return helper(2); }\nint main(void) { return run(); }\n");
  Add("tests/run_test.c", "int run(void);\nint test_run(void) { return run() == 3; }\n");
  std::string id;
  json in_lib = Query("symbols", {{"query", "helper"}, {"path", "lib"}});
  for (const json& m : in_lib["matches"]) id = m["id"];
  ASSERT_FALSE(id.empty());
  json refs = Query("references", {{"symbol_id", id}});
  EXPECT_EQ(refs["source"], "syntactic");
  EXPECT_EQ(refs["complete"], false);
  ASSERT_EQ(refs["references"].size(), 1u) << refs.dump();
  EXPECT_EQ(refs["references"][0]["path"], "src/main.c");
  EXPECT_EQ(refs["references"][0]["in"], "run");
  EXPECT_EQ(refs["references"][0]["lines"], json::array({2}));

  json impact = Query("impact", {{"symbol_id", id}});
  ASSERT_EQ(impact["targets"].size(), 1u);
  EXPECT_EQ(impact["targets"][0]["span_sha256"], Sha256Hex("int helper(int x) { return x + 1; }"));
  std::map<std::string, size_t> reached;
  for (const json& s : impact["symbols"]) reached[s["qualified_name"]] = s["distance"];
  EXPECT_EQ(reached["run"], 1u);
  EXPECT_EQ(reached["main"], 2u);
  EXPECT_EQ(reached["test_run"], 2u);
  EXPECT_EQ(impact["test_files"], json::array({"tests/run_test.c"}));
  json shallow = Query("impact", {{"symbol_id", id}, {"depth", 1}});
  EXPECT_EQ(shallow["symbols"].size(), 1u);
  json bad = Query("impact", {{"symbol_id", id}, {"path", "src/main.c"}});
  EXPECT_NE(bad["error"].get<std::string>().find("exactly one"), std::string::npos);
}

TEST_F(IndexDbTest, OutlineAndStaleChecksums) {
  Add("m.go", "package m\ntype S struct{}\nfunc (s *S) Run() {}\n");
  json o = Query("outline", {{"path", "./m.go"}});
  ASSERT_EQ(o["symbols"].size(), 2u) << o.dump();
  EXPECT_EQ(o["symbols"][1]["qualified_name"], "S.Run");
  EXPECT_TRUE(o["symbols"][1].contains("span_sha256"));
  files_["m.go"] += "// changed on disk\n";
  json stale = Query("outline", {{"path", "m.go"}});
  EXPECT_EQ(stale["symbols"][0]["stale"], true);
  EXPECT_TRUE(Query("outline", {{"path", "nope.go"}}).contains("error"));
}

TEST_F(IndexDbTest, BadArgumentsAreNamed) {
  EXPECT_NE(Query("symbols", {{"query", "x"}, {"kind", "widget"}})["error"].get<std::string>().find("\"kind\""),
            std::string::npos);
  EXPECT_NE(Query("symbols", {{"nope", 1}})["error"].get<std::string>().find("unknown argument"), std::string::npos);
  EXPECT_NE(Query("impact", {{"path", "a"}, {"depth", 99}})["error"].get<std::string>().find("between"),
            std::string::npos);
}

TEST_F(IndexDbTest, AnotherVersionIsRebuilt) {
  Add("a.py", "def f():\n    pass\n");
  db_.reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value='0' WHERE key='schema'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  std::string note;
  auto db = IndexDb::Open(path_, &note);
  ASSERT_TRUE(db.ok());
  EXPECT_NE(note.find("is of another version (0): rebuilding it"), std::string::npos) << note;
  EXPECT_TRUE((*db)->Stamps()->empty());
}

TEST_F(IndexDbTest, ACorruptFileIsRebuilt) {
  db_.reset();
  ASSERT_TRUE(WriteFileAtomic(path_, std::string(8192, 'x')).ok());
  std::string note;
  auto db = IndexDb::Open(path_, &note);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_NE(note.find("could not be read"), std::string::npos) << note;
  EXPECT_TRUE((*db)->Stamps()->empty());
}

TEST_F(IndexDbTest, RepoMapRanksWhatOtherFilesUse) {
  Add("core.py", "def used_everywhere():\n    pass\ndef unused():\n    pass\n");
  Add("a.py", "def a():\n    used_everywhere()\n");
  Add("b.py", "def b():\n    used_everywhere()\n");
  StatusOr<std::string> map = RepoMap(db_.get(), 1000);
  ASSERT_TRUE(map.ok());
  EXPECT_NE(map->find("core.py:\n  function used_everywhere (line 1)"), std::string::npos) << *map;
  EXPECT_EQ(map->find("unused"), std::string::npos);
  EXPECT_LE(RepoMap(db_.get(), 2)->size(), 8u);
}

}  // namespace
}  // namespace odin::index
