#include "index/extract.h"

#include <gtest/gtest.h>

#include <string>

namespace odin::index {
namespace {

// "kind qualified_name start_line-end_line" for each symbol, in order.
std::vector<std::string> Describe(const FileSymbols& f) {
  std::vector<std::string> out;
  for (const Symbol& s : f.symbols) {
    out.push_back(std::string(SymbolKindName(s.kind)) + " " + s.qualified_name + " " + std::to_string(s.start_line) +
                  "-" + std::to_string(s.end_line));
  }
  return out;
}

const Reference* FindRef(const FileSymbols& f, const std::string& name, const std::string& from) {
  for (const Reference& r : f.references) {
    std::string owner = r.from < 0 ? "" : f.symbols[static_cast<size_t>(r.from)].qualified_name;
    if (r.name == name && owner == from) return &r;
  }
  return nullptr;
}

TEST(ExtractTest, C) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kC,
                            "#define LIMIT 10\n"
                            "struct point { int x; int y; };\n"
                            "typedef struct point point_t;\n"
                            "enum color { RED, GREEN };\n"
                            "int add(int a, int b);\n"
                            "static int counter = 0;\n"
                            "int add(int a, int b) {\n"
                            "  int local = a;\n"
                            "  return helper(local) + b;\n"
                            "}\n");
  EXPECT_FALSE(f.has_errors);
  EXPECT_EQ(f.lines, 10u);
  EXPECT_EQ(Describe(f), (std::vector<std::string>{"constant LIMIT 1-2", "class point 2-2", "type point_t 3-3",
                                                   "enum color 4-4", "constant RED 4-4", "constant GREEN 4-4",
                                                   "function add 5-5", "variable counter 6-6", "function add 7-10"}));
  EXPECT_EQ(f.symbols[8].disambiguator, 1u) << "the definition after the prototype";
  const Reference* call = FindRef(f, "helper", "add");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->call);
  EXPECT_EQ(call->lines, std::vector<uint32_t>{9});
  EXPECT_EQ(FindRef(f, "local", "add")->count, 2u);
  EXPECT_EQ(FindRef(f, "add", ""), nullptr) << "a definition's own name is not a reference";
}

TEST(ExtractTest, CppQualifiedNamesAndMethods) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kCpp,
                            "namespace app {\n"
                            "class Server {\n"
                            " public:\n"
                            "  void Start();\n"
                            "  int port() const { return port_; }\n"
                            " private:\n"
                            "  int port_;\n"
                            "};\n"
                            "void Server::Start() { Listen(port()); }\n"
                            "template <typename T> T Max(T a, T b) { return a > b ? a : b; }\n"
                            "namespace { int hidden() { return 1; } }\n"
                            "using Port = int;\n"
                            "}  // namespace app\n");
  EXPECT_FALSE(f.has_errors);
  EXPECT_EQ(Describe(f), (std::vector<std::string>{"module app 1-13", "class app::Server 2-8",
                                                   "method app::Server::Start 4-4", "method app::Server::port 5-5",
                                                   "method app::Server::Start 9-9", "function app::Max 10-10",
                                                   "function app::hidden 11-11", "type app::Port 12-12"}));
  EXPECT_EQ(f.symbols[1].parent, 0);
  EXPECT_EQ(f.symbols[2].parent, 1);
  const Reference* listen = FindRef(f, "Listen", "app::Server::Start");
  ASSERT_NE(listen, nullptr);
  EXPECT_TRUE(listen->call);
  ASSERT_NE(FindRef(f, "port", "app::Server::Start"), nullptr);
  EXPECT_TRUE(FindRef(f, "port", "app::Server::Start")->call);
}

TEST(ExtractTest, Python) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kPython,
                            "MAX_SIZE = 10\n"
                            "cache = {}\n"
                            "class Store:\n"
                            "    limit = 3\n"
                            "    @property\n"
                            "    def size(self):\n"
                            "        def inner():\n"
                            "            x = 1\n"
                            "            return x\n"
                            "        return len(self.items)\n"
                            "def main():\n"
                            "    Store().size\n");
  EXPECT_FALSE(f.has_errors);
  EXPECT_EQ(Describe(f), (std::vector<std::string>{"constant MAX_SIZE 1-1", "variable cache 2-2", "class Store 3-10",
                                                   "variable Store.limit 4-4", "method Store.size 6-10",
                                                   "function Store.size.inner 7-9", "function main 11-12"}));
  EXPECT_TRUE(FindRef(f, "len", "Store.size")->call);
  EXPECT_TRUE(FindRef(f, "Store", "main")->call);
}

TEST(ExtractTest, JavaScriptAndTypeScript) {
  Extractor x;
  FileSymbols js = x.Extract(Language::kJavaScript,
                             "export function load(path) { return parse(read(path)); }\n"
                             "const handler = (req) => { respond(req); };\n"
                             "const TIMEOUT = 5;\n"
                             "class Cache { get(key) { return this.map.get(key); } }\n"
                             "function outer() { const local = 1; return local; }\n");
  EXPECT_FALSE(js.has_errors);
  EXPECT_EQ(Describe(js), (std::vector<std::string>{"function load 1-1", "function handler 2-2", "constant TIMEOUT 3-3",
                                                    "class Cache 4-4", "method Cache.get 4-4", "function outer 5-5"}));
  EXPECT_TRUE(FindRef(js, "parse", "load")->call);
  EXPECT_TRUE(FindRef(js, "respond", "handler")->call);

  FileSymbols ts = x.Extract(Language::kTypeScript,
                             "interface Shape { area(): number; }\n"
                             "type Id = string;\n"
                             "enum Dir { Up, Down }\n"
                             "export class Circle implements Shape { area(): number { return Math.PI; } }\n"
                             "namespace geo { export function dist(): number { return 0; } }\n");
  EXPECT_FALSE(ts.has_errors);
  EXPECT_EQ(Describe(ts), (std::vector<std::string>{"interface Shape 1-1", "method Shape.area 1-1", "type Id 2-2",
                                                    "enum Dir 3-3", "class Circle 4-4", "method Circle.area 4-4",
                                                    "module geo 5-5", "function geo.dist 5-5"}));
  FileSymbols tsx = x.Extract(Language::kTsx, "export function App(): JSX.Element { return <div>{title()}</div>; }\n");
  EXPECT_FALSE(tsx.has_errors);
  EXPECT_EQ(Describe(tsx), (std::vector<std::string>{"function App 1-1"}));
  EXPECT_TRUE(FindRef(tsx, "title", "App")->call);
}

TEST(ExtractTest, Go) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kGo,
                            "package main\n"
                            "const Limit = 3\n"
                            "var debug bool\n"
                            "type Server struct { port int }\n"
                            "type Handler interface { Serve() }\n"
                            "type ID string\n"
                            "func (s *Server) Start() error { return listen(s.port) }\n"
                            "func main() { x := 1; fmt.Println(x) }\n");
  EXPECT_FALSE(f.has_errors);
  EXPECT_EQ(Describe(f), (std::vector<std::string>{"constant Limit 2-2", "variable debug 3-3", "class Server 4-4",
                                                   "interface Handler 5-5", "method Handler.Serve 5-5", "type ID 6-6",
                                                   "method Server.Start 7-7", "function main 8-8"}));
  EXPECT_TRUE(FindRef(f, "listen", "Server.Start")->call);
  EXPECT_TRUE(FindRef(f, "Println", "main")->call);
}

TEST(ExtractTest, Rust) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kRust,
                            "mod net {\n"
                            "  pub struct Conn { fd: i32 }\n"
                            "  impl Conn {\n"
                            "    pub fn open() -> Conn { connect(); Conn { fd: 0 } }\n"
                            "  }\n"
                            "}\n"
                            "trait Speak { fn speak(&self); }\n"
                            "const MAX: u32 = 4;\n"
                            "fn main() { println!(\"hi\"); net::Conn::open(); }\n");
  EXPECT_FALSE(f.has_errors);
  EXPECT_EQ(Describe(f),
            (std::vector<std::string>{"module net 1-6", "class net::Conn 2-2", "method net::Conn::open 4-4",
                                      "interface Speak 7-7", "method Speak::speak 7-7", "constant MAX 8-8",
                                      "function main 9-9"}));
  EXPECT_TRUE(FindRef(f, "connect", "net::Conn::open")->call);
  EXPECT_TRUE(FindRef(f, "open", "main")->call);
  EXPECT_TRUE(FindRef(f, "println", "main")->call);
}

TEST(ExtractTest, SyntaxErrorsKeepWhatWasRecovered) {
  Extractor x;
  FileSymbols f = x.Extract(Language::kPython,
                            "def good():\n"
                            "    return 1\n"
                            "def broken(:\n"
                            "    pass\n"
                            "class Kept:\n"
                            "    pass\n");
  EXPECT_TRUE(f.has_errors);
  std::vector<std::string> d = Describe(f);
  EXPECT_NE(std::find(d.begin(), d.end(), "function good 1-2"), d.end());
  bool kept = false;
  for (const Symbol& s : f.symbols) kept = kept || s.qualified_name == "Kept";
  EXPECT_TRUE(kept);
}

TEST(ExtractTest, DeepNestingDoesNotOverflow) {
  // 100,000 nested parentheses: the walk is iterative, the parse recovers.
  std::string deep = "x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\n";
  Extractor x;
  FileSymbols f = x.Extract(Language::kPython, deep);
  ASSERT_EQ(f.symbols.size(), 1u);
  EXPECT_EQ(f.symbols[0].name, "x");
}

TEST(ExtractTest, SymbolIdsAreStableAcrossEditsElsewhere) {
  Extractor x;
  FileSymbols before = x.Extract(Language::kCpp, "int a() { return 1; }\nint b() { return 2; }\n");
  FileSymbols after =
      x.Extract(Language::kCpp, "// new comment\nint a() { return 10 + 1; }\n\nint b() { return 2; }\n");
  auto id = [](const Symbol& s) {
    return SymbolId(Language::kCpp, "src/x.cc", s.kind, s.qualified_name, s.disambiguator);
  };
  ASSERT_EQ(before.symbols.size(), 2u);
  ASSERT_EQ(after.symbols.size(), 2u);
  EXPECT_EQ(id(before.symbols[1]), id(after.symbols[1]));
  EXPECT_NE(before.symbols[1].start_byte, after.symbols[1].start_byte);
  EXPECT_NE(id(before.symbols[0]), id(before.symbols[1]));
  EXPECT_EQ(id(before.symbols[0]).size(), 20u);
  EXPECT_NE(SymbolId(Language::kCpp, "src/y.cc", SymbolKind::kFunction, "a", 0),
            SymbolId(Language::kCpp, "src/x.cc", SymbolKind::kFunction, "a", 0));
}

TEST(ExtractTest, LanguageForPath) {
  EXPECT_EQ(LanguageForPath("src/a.c"), Language::kC);
  EXPECT_EQ(LanguageForPath("src/a.h"), Language::kCpp);
  EXPECT_EQ(LanguageForPath("a.tsx"), Language::kTsx);
  EXPECT_EQ(LanguageForPath("dir.rs/Makefile"), Language::kNone);
  EXPECT_EQ(LanguageForPath(".py"), Language::kNone);
  EXPECT_EQ(LanguageForPath("lib.rs"), Language::kRust);
}

}  // namespace
}  // namespace odin::index
