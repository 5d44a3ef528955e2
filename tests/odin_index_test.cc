// The symbol index end to end (issue 20): `odin index` and the query tools
// through the real odin, the read-only workers that parse, and the ledger.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/ledger_rows.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinIndexTest : public ::testing::Test {
 protected:
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_.Join(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  json Tool(const std::string& name, const json& args, const std::string& mode = "ask") {
    last_ = RunOdin(ws_.path(), {"tool", name, args.dump(), "--json", "--mode", mode});
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << last_.out << last_.err;
    return j;
  }
  // The tool's answer (its output is the JSON text).
  json Answer(const std::string& name, const json& args) {
    json j = Tool(name, args);
    EXPECT_EQ(j.value("status", ""), "ok") << last_.out << last_.err;
    json a = json::parse(j.value("output", ""), nullptr, false);
    EXPECT_FALSE(a.is_discarded()) << j.dump();
    return a;
  }
  json Index(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {"index", "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    last_ = RunOdin(ws_.path(), argv);
    EXPECT_EQ(last_.exit_code, 0) << last_.out << last_.err;
    return json::parse(last_.out, nullptr, false);
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  void PutProject() {
    Put("src/server.cc",
        "#include \"server.h\"\nnamespace app {\nvoid Server::Start() { Listen(port_); }\n"
        "int Listen(int port) { return port; }\n}  // namespace app\n");
    Put("src/server.h",
        "namespace app {\nclass Server {\n public:\n  void Start();\n  int port_ = 0;\n};\n"
        "int Listen(int port);\n}\n");
    Put("tools/report.py",
        "def render(rows):\n    return format_rows(rows)\n\ndef format_rows(rows):\n    return rows\n");
    Put("web/app.ts", "export function boot(): void { render(); }\nfunction render(): void {}\n");
    Put("cmd/main.go", "package main\nfunc main() { run() }\nfunc run() {}\n");
    Put("lib/lib.rs", "pub fn parse() -> u32 { helper() }\nfn helper() -> u32 { 1 }\n");
    Put("ui/menu.js", "export const open = () => close();\nfunction close() {}\n");
    Put("README.md", "# not source\n");
  }

  TempWorkspace ws_;
  Ran last_;
};

TEST_F(OdinIndexTest, IndexesEverySupportedLanguageInReadOnlyWorkersAndRecordsIt) {
  PutProject();
  json s = Index({"--stats"});
  EXPECT_EQ(s["files"], 7) << s.dump();
  EXPECT_EQ(s["parsed_files"], 7);
  for (const char* lang : {"cpp", "python", "typescript", "go", "rust", "javascript"}) {
    EXPECT_TRUE(s["by_language"].contains(lang)) << lang << " " << s.dump();
  }
  EXPECT_GT(s["symbols"].get<int>(), 12);
  // The parse is an execution in the ledger, run by a worker.
  EXPECT_EQ(Rows("SELECT count(*) FROM execution_starts WHERE tool = 'IndexParse'"), std::vector<std::string>{"1"});
  EXPECT_EQ(Rows("SELECT e.status FROM execution_ends e JOIN execution_starts s USING (execution_id) "
                 "WHERE s.tool = 'IndexParse'"),
            std::vector<std::string>{"ok"});
  // A second run parses nothing: the stamps match.
  json again = Index();
  EXPECT_EQ(again["parsed_files"], 0) << again.dump();
  EXPECT_EQ(again["files"], 7);
  // The text form says the same in one line.
  Ran text = RunOdin(ws_.path(), {"index"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("indexed 7 files (0 parsed now)"), std::string::npos) << text.out;
}

TEST_F(OdinIndexTest, QueryToolsAnswerFromTheIndexAsExecutions) {
  PutProject();
  json sym = Answer("symbols", {{"query", "Server::Start"}});
  ASSERT_EQ(sym["matches"].size(), 2u) << sym.dump();  // the declaration and the definition
  EXPECT_EQ(sym["note"], "several symbols match: choose one by its id; none was picked for you");
  std::string id;
  for (const json& m : sym["matches"]) {
    if (m["path"] == "src/server.cc") id = m["id"];
  }
  ASSERT_FALSE(id.empty());
  json outline = Answer("outline", {{"path", "tools/report.py"}});
  ASSERT_EQ(outline["symbols"].size(), 2u);
  EXPECT_EQ(outline["symbols"][0]["qualified_name"], "render");
  json listen = Answer("symbols", {{"query", "Listen"}, {"path", "src/server.cc"}});
  ASSERT_EQ(listen["matches"].size(), 1u);
  json refs = Answer("references", {{"symbol_id", listen["matches"][0]["id"]}});
  EXPECT_EQ(refs["source"], "syntactic");
  ASSERT_EQ(refs["references"].size(), 1u) << refs.dump();
  EXPECT_EQ(refs["references"][0]["in"], "app::Server::Start");
  json impact = Answer("impact", {{"path", "lib/lib.rs"}});
  EXPECT_EQ(impact["file"]["path"], "lib/lib.rs");
  EXPECT_EQ(impact["file"]["file_sha256"].get<std::string>().size(), 64u);
  // Each query is an execution, its answer recorded as its output.
  EXPECT_EQ(Rows("SELECT count(*) FROM execution_starts WHERE tool IN ('symbols','outline','references','impact')"),
            std::vector<std::string>{"5"});
  // An unknown name gets the closest names, never a guess.
  json none = Answer("symbols", {{"query", "format_row"}});
  EXPECT_TRUE(none["matches"].empty());
  EXPECT_EQ(none["closest_names"][0], "format_rows") << none.dump();
}

TEST_F(OdinIndexTest, AWriteIsSeenByTheNextQueryAndARenamedSymbolsIdIsNotFound) {
  PutProject();
  json before = Answer("symbols", {{"query", "format_rows"}});
  ASSERT_EQ(before["matches"].size(), 1u);
  std::string old_id = before["matches"][0]["id"];
  // Changed outside Odin (an editor): the next query's look finds it.
  Put("tools/report.py", "def render(rows):\n    return shape_rows(rows)\n\ndef shape_rows(rows):\n    return rows\n");
  json after = Answer("symbols", {{"query", "shape_rows"}});
  ASSERT_EQ(after["matches"].size(), 1u) << after.dump();
  json gone = Tool("references", {{"symbol_id", old_id}});
  EXPECT_EQ(gone["status"], "error");
  EXPECT_NE(gone["error"].get<std::string>().find("is not in the index"), std::string::npos) << gone.dump();
  // Through a file tool in edit mode, the same.
  json read = Tool("Read", {{"file_path", "cmd/main.go"}}, "edit");
  ASSERT_EQ(read["status"], "ok");
  std::string session = read["session_id"];
  last_ = RunOdin(ws_.path(), {"tool", "EditTool",
                               json({{"file_path", "cmd/main.go"},
                                     {"old_string", "func run() {}"},
                                     {"new_string", "func run() {}\nfunc stop() {}"}})
                                   .dump(),
                               "--json", "--session", session});
  ASSERT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  json stop = Answer("symbols", {{"query", "stop"}});
  EXPECT_EQ(stop["matches"].size(), 1u) << stop.dump();
}

TEST_F(OdinIndexTest, ABrokenFileKeepsWhatWasRecoveredAndIsFlagged) {
  Put("bad.py", "def good():\n    return 1\n\ndef broken(:\n    pass\n");
  json good = Answer("symbols", {{"query", "good"}});
  ASSERT_EQ(good["matches"].size(), 1u) << good.dump();
  EXPECT_EQ(good["matches"][0]["file_has_syntax_errors"], true);
  json outline = Answer("outline", {{"path", "bad.py"}});
  EXPECT_TRUE(outline.contains("has_syntax_errors")) << outline.dump();
}

TEST_F(OdinIndexTest, ACorruptOrForeignIndexFileIsRebuiltWithOneLine) {
  PutProject();
  Index();
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".odin/index.db"), std::string(4096, 'z')).ok());
  unlink(ws_.Join(".odin/index.db-wal").c_str());
  unlink(ws_.Join(".odin/index.db-shm").c_str());
  Ran r = RunOdin(ws_.path(), {"index", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("could not be read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rebuilding it"), std::string::npos) << r.err;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["files"], 7) << r.out;
  EXPECT_EQ(j["parsed_files"], 7);
}

TEST_F(OdinIndexTest, NeverIndexesSymlinksOutOfTheWorkspaceOdinsStateOrIgnoredFiles) {
  TempWorkspace outside;
  ASSERT_TRUE(WriteFileAtomic(outside.Join("secret.py"), "def leaked_secret():\n    pass\n").ok());
  ASSERT_EQ(symlink(outside.Join("secret.py").c_str(), ws_.Join("link.py").c_str()), 0);
  ASSERT_EQ(symlink(outside.path().c_str(), ws_.Join("linked_dir").c_str()), 0);
  Put(".odin/planted.py", "def planted():\n    pass\n");
  Put("node_modules/dep/index.js", "function from_dependency() {}\n");
  Put("gen/out.py", "def generated():\n    pass\n");
  Put(".gitignore", "gen/\n");
  ASSERT_EQ(RunOdin(ws_.path(), {"exec", "--", "git", "init", "-q"}).exit_code, 0);
  Put("real.py", "def real():\n    pass\n");
  json s = Index();
  EXPECT_EQ(s["files"], 1) << s.dump();
  for (const char* name : {"leaked_secret", "planted", "from_dependency", "generated"}) {
    json a = Answer("symbols", {{"query", name}});
    EXPECT_TRUE(a["matches"].empty()) << name << " " << a.dump();
  }
  EXPECT_EQ(Answer("symbols", {{"query", "real"}})["matches"].size(), 1u);
}

TEST_F(OdinIndexTest, BadArgumentsGetOneLineAndTheModelCannotCallIndexParse) {
  PutProject();
  json bad = Tool("symbols", {{"query", "x"}, {"kind", "widget"}});
  EXPECT_EQ(bad["status"], "error");
  EXPECT_NE(bad["error"].get<std::string>().find("\"kind\" must be one of"), std::string::npos) << bad.dump();
  json parse = Tool("IndexParse", {{"paths", {"src/server.cc"}}});
  EXPECT_EQ(parse["status"], "rejected") << parse.dump();
  EXPECT_NE(parse["error"].get<std::string>().find("unknown tool"), std::string::npos) << parse.dump();
}

// EditSymbol: a span edit with the span's checksum as its precondition,
// through the write gates, a worker, the ledger and the validation gate.
TEST_F(OdinIndexTest, EditSymbolReplacesASpanAndRefusesDrift) {
  Put("calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n");
  json add = Answer("symbols", {{"query", "add"}})["matches"][0];
  json sub = Answer("symbols", {{"query", "sub"}})["matches"][0];
  json edit = Tool("EditSymbol",
                   {{"symbol_id", add["id"]},
                    {"span_sha256", add["span_sha256"]},
                    {"operation", "replace"},
                    {"content", "def add(a, b):\n    return b + a"}},
                   "edit");
  ASSERT_EQ(edit["status"], "ok") << edit.dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("calc.py")),
            "def add(a, b):\n    return b + a\n\n\ndef sub(a, b):\n    return a - b\n");
  // The worker was given the span the index found, recorded as the call's arguments.
  EXPECT_EQ(Rows("SELECT json_extract(args_json, '$.file_path') FROM execution_starts WHERE tool = 'EditSymbol'"),
            std::vector<std::string>{"calc.py"});
  // It is a mutation like any write.
  EXPECT_EQ(Rows("SELECT m.source FROM mutations m JOIN execution_starts s USING (execution_id) "
                 "WHERE s.tool = 'EditSymbol'"),
            std::vector<std::string>{"file_tool"});
  // sub's span did not change: its old checksum still holds; insert after it.
  json after = Tool("EditSymbol",
                    {{"symbol_id", sub["id"]},
                     {"span_sha256", sub["span_sha256"]},
                     {"operation", "insert_after"},
                     {"content", "\n\n\ndef mul(a, b):\n    return a * b"}},
                    "edit");
  ASSERT_EQ(after["status"], "ok") << after.dump();
  EXPECT_EQ(Answer("symbols", {{"query", "mul"}})["matches"].size(), 1u);
  // add's old checksum no longer matches its span: refused, naming the drift.
  json stale = Tool("EditSymbol",
                    {{"symbol_id", add["id"]}, {"span_sha256", add["span_sha256"]}, {"operation", "delete"}}, "edit");
  EXPECT_EQ(stale["status"], "rejected") << stale.dump();
  EXPECT_NE(stale["error"].get<std::string>().find("its span changed since you queried it"), std::string::npos)
      << stale.dump();
  EXPECT_EQ(Rows("SELECT count(*) FROM gate_events WHERE kind = 'span_drift'"), std::vector<std::string>{"1"});
  // A deleted symbol is not found, never another one's span.
  Put("calc.py", "def only():\n    return 0\n");
  json gone = Tool("EditSymbol",
                   {{"symbol_id", sub["id"]}, {"span_sha256", sub["span_sha256"]}, {"operation", "delete"}}, "edit");
  EXPECT_EQ(gone["status"], "error") << gone.dump();
  EXPECT_NE(gone["error"].get<std::string>().find("is not in the index"), std::string::npos) << gone.dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("calc.py")), "def only():\n    return 0\n");
}

TEST_F(OdinIndexTest, EditSymbolTakesNoPathFromTheModelAndNeedsEditMode) {
  Put("a.py", "def f():\n    return 1\n");
  json f = Answer("symbols", {{"query", "f"}})["matches"][0];
  json planted = Tool("EditSymbol",
                      {{"symbol_id", f["id"]},
                       {"span_sha256", f["span_sha256"]},
                       {"operation", "delete"},
                       {"file_path", "../elsewhere.py"},
                       {"start_byte", 0},
                       {"end_byte", 1}},
                      "edit");
  EXPECT_EQ(planted["status"], "error") << planted.dump();
  // The model's arguments may not name the file or the span: only the index does.
  EXPECT_NE(planted["error"].get<std::string>().find("EditSymbol: unknown field"), std::string::npos) << planted.dump();
  json ask =
      Tool("EditSymbol", {{"symbol_id", f["id"]}, {"span_sha256", f["span_sha256"]}, {"operation", "delete"}}, "ask");
  EXPECT_EQ(ask["status"], "rejected") << ask.dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("a.py")), "def f():\n    return 1\n");
}

}  // namespace
}  // namespace odin::testing
