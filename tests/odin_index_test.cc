// The symbol index end to end (issue 20): `odin index` and the query tools
// through the real odin, the read-only workers that parse, and the ledger.

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
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
    last_ = RunOdin(ws_.path(), {"tool", name, args.dump(), "--json", "--mode", mode}, env_);
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

  // One headless message in the strict profile against a scripted model.
  json Strict(const json& responses) {
    FakeLlm llm(json({{"responses", responses}, {"by_system", PassingReviewers()}}).dump());
    last_ = RunOdin(ws_.path(), {"-p", "change it", "--output-format", "json", "--profile", "strict"},
                    FakeModelEnv(llm, marker_, user_));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << last_.out << last_.err;
    results_.clear();
    std::vector<json> requests = ScriptRequestsOf(llm);
    if (!requests.empty()) {
      for (const json& m : requests.back()["body"]["messages"]) {
        if (m["role"] == "tool") results_.push_back(json::parse(m["content"].get<std::string>()));
      }
    }
    return j;
  }

  // The user's odinconfig.json (language servers are not a workspace's to
  // set until it is trusted); Tool() runs with it from then on.
  void Config(const json& config) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump(2)).ok());
    env_ = {{"XDG_CONFIG_HOME", user_.Join("config")}, {"XDG_STATE_HOME", user_.Join("state")}};
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::map<std::string, std::string> env_;
  std::string marker_ = UniqueMarker();
  Ran last_;
  std::vector<json> results_;  // the last Strict run's tool results, in order
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
  Config({{"validation", {{"enabled", false}}}});  // no language server: references come from the index
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

bool Installed(const std::string& name) {
  const char* path = getenv("PATH");
  if (!SearchPath(name, path ? path : "").empty()) return true;
  return access((BinDir() + "/../lsp/node_modules/.bin/" + name).c_str(), X_OK) == 0;
}

// Real language servers on a loaded 2-core machine can take far longer than
// the defaults allow to start.
json SlowServers() { return {{"validation", {{"start_timeout_ms", 240000}}}}; }

// references asks pyright, which sees the whole workspace: the method of
// another class with the same name is not a reference, the use through an
// import is, and the answer says it is complete.
TEST_F(OdinIndexTest, ReferencesComeFromPyrightWhenItServesTheFile) {
  if (!Installed("pyright-langserver"))
    GTEST_SKIP() << "pyright is not installed (scripts/install-deps.sh installs it)";
  Config(SlowServers());
  Put("shop/prices.py", "def total(xs):\n    return sum(xs)\n");
  Put("shop/cart.py", "from shop.prices import total\n\n\ndef checkout(items):\n    return total(items)\n");
  Put("shop/other.py", "class Bill:\n    def total(self):\n        return 0\n\n\ndef pay(b):\n    return b.total()\n");
  json sym = Answer("symbols", {{"query", "total"}, {"path", "shop/prices.py"}});
  ASSERT_EQ(sym["matches"].size(), 1u) << sym.dump();
  json refs = Answer("references", {{"symbol_id", sym["matches"][0]["id"]}});
  ASSERT_EQ(refs["source"], "semantic") << refs.dump();
  EXPECT_EQ(refs["server"], "pyright");
  EXPECT_EQ(refs["complete"], true);
  std::set<std::string> paths;
  for (const json& r : refs["references"]) paths.insert(r["path"]);
  EXPECT_TRUE(paths.count("shop/cart.py")) << refs.dump();
  EXPECT_FALSE(paths.count("shop/other.py")) << "Bill.total is another symbol: " << refs.dump();
  for (const json& r : refs["references"]) {
    if (r["path"] == "shop/cart.py" && r.contains("in")) {
      EXPECT_EQ(r["in"], "checkout") << refs.dump();
    }
  }
  // The syntactic answer would have named the method's use too.
  EXPECT_FALSE(refs.contains("name_matches_elsewhere")) << refs.dump();
  // The server's answer is an execution of its own, linked to the query.
  EXPECT_EQ(Rows("SELECT count(*) FROM execution_starts WHERE tool = 'lsp_references'"), std::vector<std::string>{"1"});
}

// clangd without a background index sees only what it has open: the answer
// says it is not complete and adds the index's name matches elsewhere.
TEST_F(OdinIndexTest, ClangdReferencesSayTheyAreIncompleteAndAddNameMatches) {
  if (!Installed("clangd")) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  Config(SlowServers());
  Put("calc.cc",
      "int twice(int x) { return x * 2; }\nint quad(int x) { return twice(twice(x)); }\n"
      "struct Other { int twice() { return 1; } };\nint use(Other o) { return o.twice(); }\n");
  Put("main.cc", "int twice(int x);\nint main() { return twice(3); }\n");
  json sym = Answer("symbols", {{"query", "twice"}, {"path", "calc.cc"}, {"kind", "function"}});
  ASSERT_EQ(sym["matches"].size(), 1u) << sym.dump();
  json refs = Answer("references", {{"symbol_id", sym["matches"][0]["id"]}});
  ASSERT_EQ(refs["source"], "semantic") << refs.dump();
  EXPECT_EQ(refs["server"], "clangd");
  EXPECT_EQ(refs["complete"], false);
  EXPECT_NE(refs["completeness"].get<std::string>().find("background index"), std::string::npos);
  // In calc.cc: the two calls in quad, not Other::twice's use in use().
  ASSERT_FALSE(refs["references"].empty()) << refs.dump();
  for (const json& r : refs["references"]) {
    EXPECT_EQ(r["path"], "calc.cc") << refs.dump();
    EXPECT_EQ(r["in"], "quad") << refs.dump();
    EXPECT_EQ(r["lines"], json::array({2, 2})) << refs.dump();
  }
  // main.cc, which clangd has not opened, comes from the index, marked so.
  ASSERT_TRUE(refs.contains("name_matches_elsewhere")) << refs.dump();
  EXPECT_EQ(refs["name_matches_elsewhere"][0]["path"], "main.cc");
}

// A server that cannot start: the index answers, and says why the server
// did not.
TEST_F(OdinIndexTest, ReferencesFallBackToTheIndexWhenTheServerFails) {
  Config({{"validation",
           {{"servers", {{"broken", {{"command", {"/bin/sh", "-c", "exit 7"}}, {"extensions", {".py"}}}}}}}}});
  Put("a.py", "def f():\n    return 1\n\n\ndef g():\n    return f()\n");
  json sym = Answer("symbols", {{"query", "f"}});
  ASSERT_EQ(sym["matches"].size(), 1u) << sym.dump();
  json refs = Answer("references", {{"symbol_id", sym["matches"][0]["id"]}});
  EXPECT_EQ(refs["source"], "syntactic") << refs.dump();
  EXPECT_EQ(refs["complete"], false);
  ASSERT_TRUE(refs.contains("semantic_unavailable")) << refs.dump();
  EXPECT_NE(refs["semantic_unavailable"].get<std::string>().find("broken"), std::string::npos) << refs.dump();
  ASSERT_EQ(refs["references"].size(), 1u) << refs.dump();
  EXPECT_EQ(refs["references"][0]["in"], "g");
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

// A repository that ships .odin/index.db (spans of its choosing for the
// model to edit) gets it replaced: the index must be one this user's Odin
// made, which a token kept outside the workspace says.
TEST_F(OdinIndexTest, AnIndexShippedWithTheRepositoryIsNotTrusted) {
  PutProject();
  TempWorkspace other;
  ASSERT_TRUE(WriteFileAtomic(other.Join("planted.py"), "def planted_by_repo():\n    pass\n").ok());
  ASSERT_EQ(RunOdin(other.path(), {"index"}).exit_code, 0);
  // The other workspace's index, with its symbol, copied in as if cloned.
  StatusOr<std::string> planted = ReadFileToString(other.Join(".odin/index.db"));
  ASSERT_TRUE(planted.ok());
  MakeOdinStateDir(ws_.path());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".odin/index.db"), *planted).ok());
  Ran r = RunOdin(ws_.path(), {"index", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("was not made by this user's Odin: rebuilding it"), std::string::npos) << r.err;
  EXPECT_TRUE(Answer("symbols", {{"query", "planted_by_repo"}})["matches"].empty());
  EXPECT_EQ(Answer("symbols", {{"query", "format_rows"}})["matches"].size(), 1u);
  // Its own index is kept from one run to the next.
  Ran again = RunOdin(ws_.path(), {"index", "--json"});
  EXPECT_EQ(again.err.find("rebuilding"), std::string::npos) << again.err;
  EXPECT_EQ(json::parse(again.out, nullptr, false)["parsed_files"], 0);
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

// EditSymbol's file is known only once the index names it: the Edit rules
// are judged there, a deny refuses and an ask (it cannot stop to ask) too.
TEST_F(OdinIndexTest, EditSymbolMeetsTheEditRulesOfTheFileItLandsIn) {
  Put(".claude/settings.json", R"json({"permissions":{"deny":["Edit(calc.py)"],"ask":["Edit(other.py)"]}})json");
  Put("calc.py", "def add(a, b):\n    return a + b\n");
  Put("other.py", "def sub(a, b):\n    return a - b\n");
  for (const char* name : {"add", "sub"}) {
    json sym = Answer("symbols", {{"query", name}})["matches"][0];
    json edit = Tool("EditSymbol",
                     {{"symbol_id", sym["id"]},
                      {"span_sha256", sym["span_sha256"]},
                      {"operation", "replace"},
                      {"content", "def x():\n    return 666"}},
                     "edit");
    EXPECT_EQ(edit["status"], "rejected") << name << ": " << edit.dump();
    EXPECT_NE(edit.dump().find(std::string("Edit(") + (name == std::string("add") ? "calc" : "other") + ".py)"),
              std::string::npos)
        << edit.dump();
  }
  EXPECT_EQ(*ReadFileToString(ws_.Join("calc.py")), "def add(a, b):\n    return a + b\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("other.py")), "def sub(a, b):\n    return a - b\n");
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

// The strict profile's grounded edits: a change to an existing file cites
// analysis of this message that covered it; a Read counts only for a file
// the index does not parse; new files need none.
TEST_F(OdinIndexTest, StrictRefusesEditsWithoutAnalysisOfTheFileAndAcceptsGroundedOnes) {
  Put("main.go", "package main\n\nfunc run() int { return 1 }\n");
  Put("notes.txt", "todo: nothing\n");
  auto edit = [](const std::string& file, const std::string& from, const std::string& to, json evidence) {
    json args = {{"file_path", file}, {"old_string", from}, {"new_string", to}};
    if (!evidence.is_null()) args["evidence"] = evidence;
    return Turn({Call("EditTool", args)});
  };
  json r = Strict(json::array({
      Turn({Call("Read", {{"file_path", "main.go"}})}),
      edit("main.go", "return 1", "return 2", nullptr),
      edit("main.go", "return 1", "return 2", {"@last_execution_id_of:Read"}),
      Turn({Call("outline", {{"path", "main.go"}})}),
      edit("main.go", "return 1", "return 2", {"@last_execution_id_of:outline"}),
      edit("main.go", "return 2", "return 3", {"ex_000000000000"}),
      Turn({Call("Read", {{"file_path", "notes.txt"}})}),
      edit("notes.txt", "nothing", "something", {"@last_execution_id_of:Read"}),
      Turn({Call("WriteFile", {{"file_path", "new.go"}, {"content", "package main\n"}})}),
      Text("Done."),
  }));
  ASSERT_EQ(results_.size(), 9u) << last_.out << last_.err;
  EXPECT_EQ(results_[1]["status"], "rejected");
  EXPECT_NE(results_[1]["summary"].get<std::string>().find("must cite its analysis"), std::string::npos)
      << results_[1].dump();
  EXPECT_EQ(results_[2]["status"], "rejected") << "a Read is not analysis of a file the index parses";
  EXPECT_NE(results_[2]["summary"].get<std::string>().find("none of the evidence cited covered it"), std::string::npos)
      << results_[2].dump();
  EXPECT_EQ(results_[4]["status"], "ok") << results_[4].dump();
  EXPECT_EQ(results_[5]["status"], "rejected");
  EXPECT_NE(results_[5]["summary"].get<std::string>().find("is not an analysis"), std::string::npos)
      << results_[5].dump();
  EXPECT_EQ(results_[7]["status"], "ok") << results_[7].dump();
  EXPECT_EQ(results_[8]["status"], "ok") << "a new file needs no evidence: " << results_[8].dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("main.go")), "package main\n\nfunc run() int { return 2 }\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("notes.txt")), "todo: something\n");
  // Every judgement is a gate event, with the ids the write cited.
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.decision') FROM gate_events WHERE kind = 'evidence' "
                 "ORDER BY rowid"),
            (std::vector<std::string>{"deny", "deny", "allow", "deny", "allow", "allow"}));

  // Evidence from another session is refused.
  std::vector<std::string> outline = Rows("SELECT execution_id FROM execution_starts WHERE tool = 'outline'");
  ASSERT_EQ(outline.size(), 1u);
  Strict(json::array({edit("main.go", "return 2", "return 3", {outline[0]}), Text("Done.")}));
  ASSERT_EQ(results_.size(), 1u) << last_.out << last_.err;
  EXPECT_EQ(results_[0]["status"], "rejected");
  EXPECT_NE(results_[0]["summary"].get<std::string>().find("in this session"), std::string::npos) << results_[0].dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("main.go")), "package main\n\nfunc run() int { return 2 }\n");
}

void Git(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"});
  StatusOr<CommandOutput> ran = RunCommand({.argv = args, .env = CurrentEnvironment()});
  ASSERT_TRUE(ran.ok() && ran->exit_code == 0) << (ran.ok() ? ran->output : ran.status().ToString());
}

// A command is held to the same rule as a file tool: what it changes in a
// file it cited no analysis of is put back, the result says so, and the
// report's "why" names the analysis behind what stayed.
TEST_F(OdinIndexTest, StrictPutsBackWhatACommandChangedWithoutEvidence) {
  Put("calc.py", "def f():\n    return 1\n");
  Put("other.py", "def g():\n    return 1\n");
  Git(ws_.path(), {"init", "-q"});
  Git(ws_.path(), {"add", "-A"});  // the index holds the files' bytes before
  json r = Strict(json::array({
      Turn({Call("outline", {{"path", "calc.py"}})}),
      Turn({Call("ExecuteCommand", {{"command", "sed -i s/1/2/ calc.py other.py && echo made > fresh.txt"},
                                    {"evidence", {"@last_execution_id_of:outline"}}})}),
      Turn({Call("ExecuteCommand", {{"command", "rm other.py"}})}),
      Text("Done."),
  }));
  ASSERT_EQ(results_.size(), 3u) << last_.out << last_.err;
  std::string sed = results_[1].dump();
  EXPECT_NE(sed.find("Put back as they were: other.py"), std::string::npos) << sed;
  EXPECT_EQ(*ReadFileToString(ws_.Join("calc.py")), "def f():\n    return 2\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("other.py")), "def g():\n    return 1\n");
  EXPECT_EQ(*ReadFileToString(ws_.Join("fresh.txt")), "made\n") << "a new file needs no evidence";
  // A deletion is a change too: the file comes back.
  EXPECT_NE(results_[2].dump().find("Put back as they were: other.py"), std::string::npos) << results_[2].dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("other.py")), "def g():\n    return 1\n");
  EXPECT_EQ(Rows("SELECT json_extract(detail_json, '$.decision') FROM gate_events WHERE kind = 'evidence' "
                 "ORDER BY rowid"),
            (std::vector<std::string>{"allow", "put_back", "put_back"}));
  // What was put back is no mutation of the command's; what stayed is.
  EXPECT_EQ(Rows("SELECT count(*) FROM mutations WHERE path LIKE '%other.py'"), std::vector<std::string>{"0"});
  std::vector<std::string> outline = Rows("SELECT execution_id FROM execution_starts WHERE tool = 'outline'");
  ASSERT_EQ(outline.size(), 1u);
  bool found = false;
  for (const json& f : r["report"]["files"]) {
    if (f["path"] != "calc.py") continue;
    found = true;
    EXPECT_EQ(f["evidence"], json::array({outline[0]})) << f.dump();
  }
  EXPECT_TRUE(found) << r["report"].dump();
}

// A command that swapped a directory for a symlink out of the workspace:
// nothing is put back through it, not even a directory.
TEST_F(OdinIndexTest, StrictPutsNothingBackThroughASymlinkTheCommandMade) {
  TempWorkspace outside;
  Put("sub/deeper/other.py", "def g():\n    return 1\n");
  Git(ws_.path(), {"init", "-q"});
  Git(ws_.path(), {"add", "-A"});
  Strict(json::array({
      Turn({Call("ExecuteCommand", {{"command", "rm -rf sub && ln -s " + outside.path() + " sub"}})}),
      Text("Done."),
  }));
  ASSERT_EQ(results_.size(), 1u) << last_.out << last_.err;
  std::string out = results_[0].dump();
  EXPECT_NE(out.find("Could not be put back: sub/deeper/other.py (sub: a symlink is on its way"), std::string::npos)
      << out;
  EXPECT_FALSE(PathExists(outside.Join("deeper"))) << "a directory was made outside the workspace";
}

// After a failed validation, one corrective change at a time: a second
// write in the same turn waits for the first's verdict.
TEST_F(OdinIndexTest, StrictAllowsOneCorrectiveWriteAfterAFailedValidation) {
  Config({{"validation",
           {{"servers", {{"fake", {{"command", {BinDir() + "/fake_lsp_server"}}, {"extensions", {".fake"}}}}}}}}});
  auto write = [](const std::string& file, const std::string& content) {
    return Call("WriteFile", {{"file_path", file}, {"content", content}});
  };
  json fix = write("a.fake", "fine\n");
  fix["arguments"]["evidence"] = {"@last_execution_id_of:Read"};
  Strict(json::array({
      Turn({write("a.fake", "ERROR broken\n")}),
      Turn({Call("memory_query", {{"query", "last_validation"}}), Call("Read", {{"file_path", "a.fake"}})}),
      Turn({fix, write("b.fake", "fine too\n")}),
      Turn({write("b.fake", "fine too\n")}),
      Text("Done."),
  }));
  ASSERT_EQ(results_.size(), 6u) << last_.out << last_.err;
  EXPECT_EQ(results_[3]["status"], "ok") << results_[3].dump();
  EXPECT_EQ(results_[3]["validation"]["status"], "clean") << results_[3].dump();
  EXPECT_EQ(results_[4]["status"], "rejected") << results_[4].dump();
  EXPECT_NE(results_[4].dump().find("one corrective change at a time"), std::string::npos) << results_[4].dump();
  EXPECT_EQ(results_[5]["status"], "ok") << "once validated, the next change may go: " << results_[5].dump();
  EXPECT_EQ(*ReadFileToString(ws_.Join("b.fake")), "fine too\n");
}

// The repository map (context.repo_map, on in strict): the symbols other
// files use most, in the system prompt once the index is built.
TEST_F(OdinIndexTest, TheRepositoryMapIsInTheSystemPromptWhenAskedFor) {
  Put("core.py", "def used_everywhere():\n    pass\n\ndef unused():\n    pass\n");
  Put("a.py", "def a():\n    used_everywhere()\n");
  Put("b.py", "def b():\n    used_everywhere()\n");
  Put("odinconfig.json", R"({"context": {"repo_map": true, "repo_map_tokens": 200}})");
  ASSERT_EQ(RunOdin(ws_.path(), {"trust"},
                    {{"XDG_CONFIG_HOME", user_.Join("config")}, {"XDG_STATE_HOME", user_.Join("state")}})
                .exit_code,
            0);
  FakeLlm llm(
      json({{"responses",
             {Turn({Call("Read", {{"file_path", "a.py"}})}), Turn({Call("LS", {{"path", "."}})}), Text("Done.")}}})
          .dump());
  last_ = RunOdin(ws_.path(), {"-p", "look", "--output-format", "json", "--mode", "ask"},
                  FakeModelEnv(llm, marker_, user_));
  ASSERT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  std::string system = requests.back()["body"]["messages"][0]["content"];
  EXPECT_NE(system.find("Repository map"), std::string::npos) << system;
  EXPECT_NE(system.find("core.py:\n  function used_everywhere (line 1)"), std::string::npos) << system;
  EXPECT_EQ(system.find("unused"), std::string::npos) << system;

  // Deleting its users (nothing parsed, only removed) makes the map again:
  // the request after the one that starts the refresh goes without it.
  FakeLlm deleting(json({{"responses",
                          {Turn({Call("ExecuteCommand", {{"command", "rm a.py b.py"}})}),
                           Turn({Call("LS", {{"path", "."}})}), Turn({Call("LS", {{"path", "."}})}), Text("Done.")}}})
                       .dump());
  last_ = RunOdin(ws_.path(), {"-p", "clean up", "--output-format", "json", "--mode", "edit"},
                  FakeModelEnv(deleting, marker_, user_));
  ASSERT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  requests = RequestsOf(deleting);
  ASSERT_EQ(requests.size(), 4u);
  std::string after = requests.back()["body"]["messages"][0]["content"];
  EXPECT_EQ(after.find("used_everywhere"), std::string::npos) << after;

  // Off by default outside strict.
  Put("odinconfig.json", "{}");
  RunOdin(ws_.path(), {"trust"}, {{"XDG_CONFIG_HOME", user_.Join("config")}, {"XDG_STATE_HOME", user_.Join("state")}});
  FakeLlm plain(json({{"responses", {Text("Done.")}}}).dump());
  last_ = RunOdin(ws_.path(), {"-p", "look", "--output-format", "json", "--mode", "ask"},
                  FakeModelEnv(plain, marker_, user_));
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  std::string off = RequestsOf(plain)[0]["body"]["messages"][0]["content"];
  EXPECT_EQ(off.find("Repository map"), std::string::npos);
}

}  // namespace
}  // namespace odin::testing
