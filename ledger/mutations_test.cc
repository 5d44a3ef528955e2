// The ledger's mutation records and before-images, and the upgrade of a
// ledger from before them.
#include <sqlite3.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "ledger/ledger.h"
#include "ledger/memory_query.h"

namespace odin {
namespace {

class MutationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *MakeTempDir("odin-mutations-test");
    path_ = dir_ + "/odin.db";
    options_.anchor_dir = dir_ + "/anchors";
  }
  void TearDown() override { RemoveTree(dir_); }

  std::unique_ptr<Ledger> Open() {
    auto l = Ledger::Open(path_, Redactor(), options_);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? std::move(*l) : nullptr;
  }
  MutationRecord Modified(const std::string& id, const std::string& execution, const std::string& path,
                          const std::string& before) {
    MutationRecord m;
    m.id = id;
    m.session_id = "ses_1";
    m.agent_id = "main";
    m.execution_id = execution;
    m.source = "command";
    m.path = path;
    m.change = "modified";
    m.file_type = "file";
    m.before_sha256 = Sha256Hex(before);
    m.before_size = static_cast<int64_t>(before.size());
    m.before_mode = 0644;
    m.after_sha256 = Sha256Hex("after");
    m.after_size = 5;
    m.after_mode = 0644;
    m.undoable = true;
    m.created_at_ms = 1000;
    return m;
  }
  void Sql(const std::string& sql) {
    sqlite3* db;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  std::string dir_, path_;
  LedgerOptions options_;
};

TEST_F(MutationsTest, RecordsAreChainedListedAndLinkedToTheirBeforeImage) {
  auto l = Open();
  ASSERT_TRUE(l->AddMutations(
                   {Modified("mut_1", "ex_1", "/w/a.c", "int a;\n"), Modified("mut_2", "ex_1", "/w/b.c", "int b;\n")},
                   {{Sha256Hex("int a;\n"), "int a;\n"}, {Sha256Hex("int b;\n"), "int b;\n"}})
                  .ok());
  StatusOr<std::vector<MutationRecord>> all = l->ListMutations("ses_1");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].path, "/w/a.c");
  EXPECT_EQ((*all)[0].change, "modified");
  EXPECT_EQ((*all)[0].before_mode, 0644);
  ASSERT_FALSE((*all)[0].before_artifact.empty());
  EXPECT_EQ(*l->ReadBeforeImage((*all)[0].before_artifact), "int a;\n");
  EXPECT_EQ(*l->ReadBeforeImage((*all)[1].before_artifact), "int b;\n");
  EXPECT_EQ(l->ListMutationsOf("ex_1")->size(), 2u);
  EXPECT_TRUE(l->ListMutationsOf("ex_2")->empty());
  StatusOr<VerifyReport> v = l->Verify();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_EQ(v->records, 4);  // two images, two mutations
}

TEST_F(MutationsTest, AnImageIsStoredOncePerContent) {
  auto l = Open();
  std::string same = "int x;\n";
  ASSERT_TRUE(l->AddMutations({Modified("mut_1", "ex_1", "/w/a.c", same)}, {{Sha256Hex(same), same}}).ok());
  ASSERT_TRUE(l->AddMutations({Modified("mut_2", "ex_2", "/w/b.c", same)}, {{Sha256Hex(same), same}}).ok());
  StatusOr<std::vector<MutationRecord>> all = l->ListMutations("ses_1");
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].before_artifact, (*all)[1].before_artifact);
  EXPECT_EQ(l->ListArtifacts("ex_1")->size(), 1u);
  EXPECT_TRUE(l->ListArtifacts("ex_2")->empty());
}

TEST_F(MutationsTest, ImagesAreKeptVerbatimWhileNotesAreRedacted) {
  Redactor r;
  r.AddSecret("API_TOKEN", "hunter2-secret-value");
  auto opened = Ledger::Open(path_, std::move(r), options_);
  ASSERT_TRUE(opened.ok());
  auto& l = *opened;
  std::string before = "token = hunter2-secret-value\n";
  MutationRecord m = Modified("mut_1", "ex_1", "/w/.env", before);
  m.note = "saw hunter2-secret-value";
  ASSERT_TRUE(l->AddMutations({m}, {{Sha256Hex(before), before}}).ok());
  StatusOr<std::vector<MutationRecord>> all = l->ListMutations("ses_1");
  EXPECT_EQ(*l->ReadBeforeImage((*all)[0].before_artifact), before);  // undo restores the bytes
  EXPECT_EQ((*all)[0].note.find("hunter2"), std::string::npos);
}

TEST_F(MutationsTest, NoImageMeansNoArtifact) {
  auto l = Open();
  MutationRecord m = Modified("mut_1", "ex_1", "/w/a.c", "unknown");
  m.undoable = false;
  ASSERT_TRUE(l->AddMutations({m}).ok());
  EXPECT_TRUE((*l->ListMutations("ses_1"))[0].before_artifact.empty());
  EXPECT_EQ(l->ReadBeforeImage("art_none").status().code(), StatusCode::kNotFound);
}

TEST_F(MutationsTest, AVersion4LedgerIsUpgradedInPlaceKeepingItsChain) {
  {
    auto l = Open();
    ASSERT_TRUE(l->AddSession({"ses_1", "agent", "/w", 1}).ok());
  }
  // What a ledger written before mutations and conversations looks like.
  Sql("DROP TABLE mutations; DROP TABLE conversation; DROP TABLE llm_cache; UPDATE meta SET value = '4' WHERE key = "
      "'schema_version';");
  {
    // A reader of it sees no mutations and a sound chain, and writes nothing.
    auto ro = Ledger::OpenReadOnly(path_, options_);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_TRUE((*ro)->ListMutations("ses_1")->empty());
    EXPECT_TRUE((*ro)->ListConversation("ses_1", "main")->empty());
    EXPECT_TRUE((*ro)->Verify()->ok);
  }
  auto l = Open();
  ASSERT_TRUE(l->AddMutations({Modified("mut_1", "ex_1", "/w/a.c", "x")}).ok());
  EXPECT_EQ(l->ListMutations("ses_1")->size(), 1u);
  StatusOr<VerifyReport> v = l->Verify();
  EXPECT_TRUE(v->ok) << v->problem;
  EXPECT_EQ(v->records, 2);
  l.reset();
  sqlite3* db;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "7");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(MutationsTest, AnEditedMutationBreaksTheChain) {
  auto l = Open();
  ASSERT_TRUE(l->AddMutations({Modified("mut_1", "ex_1", "/w/a.c", "x")}).ok());
  l.reset();
  Sql("DROP TRIGGER mutations_no_UPDATE; UPDATE mutations SET path = '/w/other.c';");
  l = Open();
  StatusOr<VerifyReport> v = l->Verify();
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->ok);
  EXPECT_NE(v->problem.find("1"), std::string::npos) << v->problem;
}

TEST_F(MutationsTest, MemoryQueryListsChangesNewestFirst) {
  auto l = Open();
  MutationRecord a = Modified("mut_1", "ex_1", "/w/a.c", "x");
  MutationRecord b = Modified("mut_2", "ex_2", "/w/b.c", "y");
  b.source = "external";
  b.execution_id = "";
  MutationRecord ignored = Modified("mut_3", "ex_2", "/w/node_modules", "z");
  ignored.change = "ignored";
  ignored.entries = 20000;
  ASSERT_TRUE(l->AddMutations({a, b, ignored}).ok());
  StatusOr<std::string> out = RunMemoryQuery(l.get(), "ses_1", "/w", R"({"query":"changes"})");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  nlohmann::json j = nlohmann::json::parse(*out);
  ASSERT_EQ(j["changes"].size(), 3u);
  EXPECT_EQ(j["changes"][0]["path"], "node_modules");
  EXPECT_EQ(j["changes"][0]["entries"], 20000);
  EXPECT_EQ(j["changes"][1]["source"], "external");
  EXPECT_TRUE(j["changes"][1]["execution_id"].is_null());
  EXPECT_EQ(j["changes"][2]["path"], "a.c");
  out = RunMemoryQuery(l.get(), "ses_1", "/w", R"({"query":"changes","file_path":"a.c"})");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(nlohmann::json::parse(*out)["changes"].size(), 1u);
}

}  // namespace
}  // namespace odin
