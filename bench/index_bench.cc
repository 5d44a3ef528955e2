// odin_bench's section 14: the symbol index. A generated tree of about a
// million lines across the six languages, and this repository's own files,
// indexed from scratch by `odin index --rebuild` (whole processes, read-only
// workers parsing); an incremental update after a 3-file change; and the
// symbols and impact tools' latency through the coordinator.

#include "bench/index_bench.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_temp.h"
#include "base/file_util.h"
#include "base/subprocess.h"
#include "session/runtime.h"
#include "odin/v1/worker.pb.h"

namespace odin::bench {
namespace {

// One file of about `lines` lines in language ext, whose functions call
// functions of the next files (of files in all), as real code does.
std::string GenerateFile(const std::string& ext, int file, int files, int lines) {
  std::string out;
  int functions = lines / 10;
  auto callee = [&](int i) {
    return "f" + std::to_string((file + 1 + i % 5) % files) + "_" + std::to_string((i * 7) % functions);
  };
  for (int i = 0; i < functions; ++i) {
    std::string name = "f" + std::to_string(file) + "_" + std::to_string(i);
    std::string a = callee(i), b = callee(i + 1);
    if (ext == "c" || ext == "cc") {
      out += "// " + name + " adds what its helpers say.\n";
      out += "int " + name + "(int x, int y) {\n  int total = x + y;\n  total += " + a + "(x);\n  total += " + b +
             "(y);\n  if (total > 100) {\n    return total - 100;\n  }\n  return total;\n}\n";
    } else if (ext == "py") {
      out += "def " + name +
             "(x, y):\n    \"\"\"Adds what its helpers say.\"\"\"\n    total = x + y\n    total += " + a +
             "(x)\n    total += " + b + "(y)\n    if total > 100:\n        return total - 100\n    return total\n\n";
    } else if (ext == "js" || ext == "ts") {
      std::string t = ext == "ts" ? ": number" : "";
      out += "// " + name + " adds what its helpers say.\nexport function " + name + "(x" + t + ", y" + t + ")" + t +
             " {\n  let total = x + y;\n  total += " + a + "(x);\n  total += " + b +
             "(y);\n  if (total > 100) {\n    return total - 100;\n  }\n  return total;\n}\n";
    } else if (ext == "go") {
      out += "// " + name + " adds what its helpers say.\nfunc " + name +
             "(x int, y int) int {\n\ttotal := x + y\n\ttotal += " + a + "(x)\n\ttotal += " + b +
             "(y)\n\tif total > 100 {\n\t\treturn total - 100\n\t}\n\treturn total\n}\n";
    } else {
      out += "// " + name + " adds what its helpers say.\npub fn " + name +
             "(x: i32, y: i32) -> i32 {\n    let mut total = x + y;\n    total += " + a + "(x);\n    total += " + b +
             "(y);\n    if total > 100 {\n        return total - 100;\n    }\n    total\n}\n";
    }
  }
  if (ext == "go") out = "package gen\n\n" + out;
  return out;
}

// Writes about `lines` lines over files of 1,000 lines; returns the count.
int64_t GenerateTree(const std::string& root, int64_t lines) {
  const char* exts[] = {"c", "cc", "py", "js", "ts", "go", "rs"};
  int64_t written = 0;
  int files = static_cast<int>(std::max<int64_t>(1, lines / 1000));
  for (int file = 0; written < lines; ++file) {
    std::string ext = exts[file % 7];
    std::string dir = root + "/src/m" + std::to_string(file % 40);
    if (!MakeDirs(dir).ok()) return -1;
    std::string content = GenerateFile(ext, file, files, 1000);
    if (!WriteFileAtomic(dir + "/f" + std::to_string(file) + "." + ext, content).ok()) return -1;
    for (char ch : content) written += ch == '\n';
  }
  return written;
}

struct IndexRun {
  double ms = 0;
  nlohmann::json summary;
};

std::optional<IndexRun> RunOdinIndex(const std::string& ws, bool rebuild) {
  std::vector<std::string> argv = {JoinPath(ExecutableDir(), "odin"), "index", "--json"};
  if (rebuild) argv.push_back("--rebuild");
  Clock::time_point start = Clock::now();
  StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = CurrentEnvironment(), .cwd = ws});
  double ms = Ms(Clock::now() - start);
  if (!out.ok() || out->exit_code != 0) {
    fprintf(stderr, "odin_bench: odin index failed: %s\n",
            out.ok() ? out->output.c_str() : out.status().message().c_str());
    return std::nullopt;
  }
  // The summary is the last line (stderr's notes may come before it).
  std::string text = out->output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t line = text.rfind('\n');
  return IndexRun{ms, nlohmann::json::parse(line == std::string::npos ? text : text.substr(line + 1), nullptr, false)};
}

// Copies this repository's tracked files (from the source tree the bench
// was built from) into dest.
bool CopyRepository(const std::string& dest) {
  std::string src = ODIN_SOURCE_DIR;
  StatusOr<CommandOutput> files =
      RunCommand({.argv = {"git", "-C", src, "ls-files", "-z"}, .env = CurrentEnvironment()});
  if (!files.ok() || files->exit_code != 0) return false;
  const std::string& list = files->output;
  for (size_t pos = 0; pos < list.size();) {
    size_t end = list.find('\0', pos);
    if (end == std::string::npos) end = list.size();
    std::string rel = list.substr(pos, end - pos);
    pos = end + 1;
    StatusOr<std::string> content = ReadFileToString(src + "/" + rel);
    if (!content.ok()) continue;
    if (!MakeDirs(DirName(dest + "/" + rel)).ok() || !WriteFileAtomic(dest + "/" + rel, *content).ok()) return false;
  }
  return true;
}

}  // namespace

bool IndexFigures(int64_t lines, int queries, void (*print)(const char*, const Stats&, double)) {
  StatusOr<std::string> dir = odin::bench::BenchTempDir("odin-bench-index");
  if (!dir.ok()) return false;
  std::string ws = *dir + "/gen";
  int64_t generated = GenerateTree(ws, lines);
  if (generated < 0 || !MakeDirs(ws + "/.odin").ok()) return false;
  printf(
      "symbol index (section 14): a generated tree of %lld lines, C, C++, Python, JavaScript, TypeScript, Go, Rust\n",
      static_cast<long long>(generated));
  std::vector<double> full;
  nlohmann::json summary;
  for (int i = 0; i < 3; ++i) {
    std::optional<IndexRun> run = RunOdinIndex(ws, true);
    if (!run) return false;
    full.push_back(run->ms);
    summary = run->summary;
  }
  Stats f = Summarize(full);
  print("odin index --rebuild, whole process", f, 0);
  double per_second = static_cast<double>(summary.value("lines", 0)) / (f.median_ms / 1000.0);
  printf("  %-44s %.0f lines/s (target 200000: %.2fx), %lld symbols, %lld references\n", "full index, median",
         per_second, per_second / 200000.0, static_cast<long long>(summary.value("symbols", 0)),
         static_cast<long long>(summary.value("references", 0)));

  // Incremental: in-process, as a session sees it (the runtime is up).
  RuntimeFlags flags;
  flags.dir = ws;
  flags.session_kind = "bench";
  flags.mode = "ask";
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
  if (!rt.ok()) return false;
  Coordinator& coord = (*rt)->coordinator();
  auto refresh = [&]() -> std::optional<size_t> {
    std::optional<Status> done;
    size_t parsed = 0;
    coord.RefreshSymbolIndex(false, [&](const Status& s, size_t n) {
      done = s;
      parsed = n;
    });
    while (!done) {
      if (!coord.Poll(seconds(1)).ok()) return std::nullopt;
    }
    if (!done->ok()) return std::nullopt;
    return parsed;
  };
  if (!refresh()) return false;  // the first look in this process
  std::vector<double> incremental;
  for (int i = 0; i < 15; ++i) {
    for (int k = 0; k < 3; ++k) {
      std::string path = ws + "/src/m" + std::to_string(k) + "/f" + std::to_string(k) + "." +
                         std::vector<std::string>{"c", "cc", "py"}[static_cast<size_t>(k)];
      StatusOr<std::string> content = ReadFileToString(path);
      if (!content.ok()) return false;
      std::string line = k == 2 ? "\n# edit " : "\n// edit ";
      if (!WriteFileAtomic(path, *content + line + std::to_string(i) + "\n").ok()) return false;
    }
    Clock::time_point start = Clock::now();
    std::optional<size_t> parsed = refresh();
    if (!parsed || *parsed != 3) {
      fprintf(stderr, "odin_bench: the incremental update parsed %zu files, not 3\n", parsed.value_or(0));
      return false;
    }
    incremental.push_back(Ms(Clock::now() - start));
  }
  print("incremental update after a 3-file change", Summarize(incremental), 50.0);

  // Query latency through the coordinator: each call an execution.
  auto timed = [&](const std::string& tool, const std::string& args, std::vector<double>* into) -> bool {
    ToolCall call;
    call.tool = tool;
    call.arguments_json = args;
    std::optional<v1::ToolResult> result;
    Clock::time_point start = Clock::now();
    coord.Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
    while (!result) {
      if (!coord.Poll(seconds(1)).ok()) return false;
    }
    into->push_back(Ms(Clock::now() - start));
    if (result->status() != v1::TOOL_STATUS_OK) {
      fprintf(stderr, "odin_bench: %s failed: %s\n", tool.c_str(), result->output_head().c_str());
      return false;
    }
    return true;
  };
  std::vector<double> symbols, impact, outline;
  for (int i = 0; i < queries; ++i) {
    std::string fn = "f" + std::to_string(i % 100) + "_" + std::to_string(i % 50);
    if (!timed("symbols", R"({"query":")" + fn + R"("})", &symbols)) return false;
    int file = i % 40;  // in src/m<file>, with the extension GenerateTree gave it
    std::string ext = std::vector<std::string>{"c", "cc", "py", "js", "ts", "go", "rs"}[static_cast<size_t>(file % 7)];
    if (!timed("outline",
               R"({"path":"src/m)" + std::to_string(file) + "/f" + std::to_string(file) + "." + ext + R"("})",
               &outline))
      return false;
  }
  // impact needs an id: the callers of a generated function, to depth 3.
  {
    ToolCall call;
    call.tool = "symbols";
    call.arguments_json = R"({"query":"f7_3"})";
    std::optional<v1::ToolResult> result;
    coord.Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
    while (!result) {
      if (!coord.Poll(seconds(1)).ok()) return false;
    }
    nlohmann::json j = nlohmann::json::parse(result->output_head(), nullptr, false);
    if (!j.is_object() || j["matches"].empty()) return false;
    std::string id = j["matches"][0]["id"];
    for (int i = 0; i < queries; ++i) {
      if (!timed("impact", R"({"symbol_id":")" + id + R"("})", &impact)) return false;
    }
  }
  print("symbols query through the coordinator", Summarize(symbols), 5.0);
  print("outline query through the coordinator", Summarize(outline), 5.0);
  print("impact query (depth 3) through the coordinator", Summarize(impact), 5.0);
  rt->reset();

  // This repository.
  std::string repo = *dir + "/repo";
  if (CopyRepository(repo) && MakeDirs(repo + "/.odin").ok()) {
    std::vector<double> own;
    nlohmann::json s;
    for (int i = 0; i < 3; ++i) {
      std::optional<IndexRun> run = RunOdinIndex(repo, true);
      if (!run) return false;
      own.push_back(run->ms);
      s = run->summary;
    }
    Stats o = Summarize(own);
    printf("this repository: %lld files, %lld lines, %lld symbols\n", static_cast<long long>(s.value("files", 0)),
           static_cast<long long>(s.value("lines", 0)), static_cast<long long>(s.value("symbols", 0)));
    print("odin index --rebuild of this repository", o, 0);
  } else {
    printf("this repository: skipped (git ls-files of the source tree failed)\n");
  }
  RemoveTree(*dir);
  return true;
}

}  // namespace odin::bench
