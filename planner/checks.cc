#include "planner/checks.h"

#include <dirent.h>

#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/subprocess.h"
#include "workspace/host_files.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

struct Detected {
  std::string build, lint, tests;
  std::string origin;
};

// Project files are read through the safe file layer, bounded: a
// repository's "Makefile -> /dev/zero" is refused, not read until the
// memory runs out (security review 3, finding 7).
constexpr uint64_t kMaxProjectFileBytes = 4 << 20;

std::string Read(const std::string& workspace, const std::string& name) {
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  if (!files.ok()) return "";
  StatusOr<std::string> text = files->ReadFile(name, kMaxProjectFileBytes);
  return text.ok() ? *text : "";
}

bool Has(const std::string& workspace, const std::string& name) {
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  return files.ok() && files->Look(name).exists();
}

std::set<std::string> MakeTargets(const std::string& makefile) {
  std::set<std::string> targets;
  // "name:" or "name::", but not the assignments "name := ...", "name ::= ...".
  static const std::regex kTarget(R"(^([A-Za-z0-9_.-]+)\s*::?([^=:]|$))");
  size_t start = 0;
  while (start < makefile.size()) {
    size_t end = makefile.find('\n', start);
    if (end == std::string::npos) end = makefile.size();
    std::string line = makefile.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(line, m, kTarget)) targets.insert(m[1]);
    start = end + 1;
  }
  return targets;
}

bool HasPythonTests(const std::string& workspace) {
  if (Has(workspace, "pytest.ini") || Has(workspace, "conftest.py")) return true;
  if (Read(workspace, "pyproject.toml").find("[tool.pytest") != std::string::npos) return true;
  if (Read(workspace, "setup.cfg").find("[tool:pytest]") != std::string::npos) return true;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  if (!files.ok()) return false;
  // The root, tests/ and test/, and the tests inside a top-level package
  // (toolz/tests/), which pytest finds as well.
  std::vector<std::string> dirs = {"", "tests", "test"};
  if (StatusOr<std::vector<std::string>> top = files->List(""); top.ok()) {
    int packages = 0;
    for (const std::string& name : *top) {
      if (name.starts_with(".") || !files->Look(name + "/__init__.py").exists()) continue;
      if (++packages > 64) break;
      dirs.push_back(name + "/tests");
      dirs.push_back(name + "/test");
    }
  }
  for (const std::string& dir : dirs) {
    StatusOr<std::vector<std::string>> names = files->List(dir);
    if (!names.ok()) continue;
    for (const std::string& name : *names) {
      if ((name.rfind("test_", 0) == 0 && name.size() > 8 && name.substr(name.size() - 3) == ".py") ||
          (name.size() > 8 && name.substr(name.size() - 8) == "_test.py")) {
        return true;
      }
    }
  }
  return false;
}

// How the project's own pytest is run: the workspace's virtualenv's, else
// the pytest on PATH when it is not python3's own (a pyenv or pipx install:
// that python3 may lack the module), else python3's module.
std::string PytestCommand(const std::string& ws) {
  for (const char* venv : {".venv", "venv"}) {
    if (Has(ws, std::string(venv) + "/bin/pytest")) return std::string(venv) + "/bin/pytest -q";
  }
  const char* path = getenv("PATH");
  std::string pytest = SearchPath("pytest", path != nullptr ? path : "");
  std::string python = SearchPath("python3", path != nullptr ? path : "");
  // One installation's pair (Debian's /usr/bin): its module, which puts the
  // checkout on sys.path as a run from the checkout expects (toolz's tests
  // import toolz).
  if (pytest.empty() || (!python.empty() && DirName(pytest) == DirName(python))) return "python3 -m pytest -q";
  // A pytest of another python (Debian's, under a pyenv python3): the module
  // of the python its first line names, when it names one; else itself.
  StatusOr<std::optional<std::string>> script = ReadUserFile(pytest, 64 << 10);
  if (script.ok() && *script && (*script)->starts_with("#!")) {
    std::string line = (*script)->substr(2, (*script)->find('\n') - 2);
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    std::string interpreter = line.substr(0, line.find(' '));
    std::string name = interpreter.substr(interpreter.find_last_of('/') + 1);
    bool plain = interpreter.find_first_of("'\"$`\\;&|<>") == std::string::npos;
    if (interpreter.starts_with("/") && name.starts_with("python") && plain &&
        interpreter.find(' ') == std::string::npos) {
      return interpreter + " -m pytest -q";
    }
  }
  return "pytest -q";
}

// The first kind of project found, in order of how specific its files are.
std::vector<Detected> Detect(const std::string& ws) {
  std::vector<Detected> found;
  if (Has(ws, "CMakeLists.txt")) {
    std::string configure = Has(ws, "build/CMakeCache.txt") ? "" : "cmake -S . -B build && ";
    found.push_back({configure + "cmake --build build", "",
                     configure + "cmake --build build && ctest --test-dir build --output-on-failure",
                     "CMakeLists.txt"});
  }
  if (Has(ws, "Cargo.toml")) {
    // clippy is a component of its own (Debian's cargo has none): without
    // it, `cargo clippy` fails every correct change.
    const char* path = getenv("PATH");
    bool clippy = !SearchPath("cargo-clippy", path != nullptr ? path : "").empty();
    found.push_back({"cargo build", clippy ? "cargo clippy" : "", "cargo test", "Cargo.toml"});
  }
  if (Has(ws, "go.mod")) found.push_back({"go build ./...", "go vet ./...", "go test ./...", "go.mod"});
  if (Has(ws, "package.json")) {
    nlohmann::json pkg = ParseJson(Read(ws, "package.json"));
    Detected d{"", "", "", "package.json"};
    if (pkg.is_object() && pkg.contains("scripts") && pkg["scripts"].is_object()) {
      const auto& scripts = pkg["scripts"];
      auto has = [&](const char* name) { return scripts.contains(name) && scripts[name].is_string(); };
      if (has("build")) d.build = "npm run build";
      if (has("lint")) d.lint = "npm run lint";
      // npm init's placeholder fails on purpose: it is no test suite.
      if (has("test") && scripts["test"].get<std::string>().find("no test specified") == std::string::npos) {
        d.tests = "npm test";
      }
    }
    found.push_back(d);
  }
  for (const char* name : {"GNUmakefile", "makefile", "Makefile"}) {
    if (!Has(ws, name)) continue;
    std::set<std::string> targets = MakeTargets(Read(ws, name));
    Detected d{"make", "", "", name};
    if (targets.count("lint")) d.lint = "make lint";
    if (targets.count("test"))
      d.tests = "make test";
    else if (targets.count("check"))
      d.tests = "make check";
    found.push_back(d);
    break;
  }
  bool python = Has(ws, "pyproject.toml") || Has(ws, "setup.py") || Has(ws, "setup.cfg");
  if (python || HasPythonTests(ws)) {
    std::string origin = "Python tests";
    for (const char* f : {"pyproject.toml", "setup.py", "setup.cfg"}) {
      if (Has(ws, f)) {
        origin = f;
        break;
      }
    }
    Detected d{"", "", "", origin};
    if (Has(ws, "ruff.toml") || Has(ws, ".ruff.toml") ||
        Read(ws, "pyproject.toml").find("[tool.ruff") != std::string::npos) {
      d.lint = "ruff check .";
    }
    if (HasPythonTests(ws)) d.tests = PytestCommand(ws);
    found.push_back(d);
  }
  return found;
}

}  // namespace

bool ParseProfile(const std::string& text, Profile* profile) {
  if (text == "fast")
    *profile = Profile::kFast;
  else if (text == "auto")
    *profile = Profile::kAuto;
  else if (text == "safe")
    *profile = Profile::kSafe;
  else if (text == "strict")
    *profile = Profile::kStrict;
  else
    return false;
  return true;
}

const char* ProfileName(Profile p) {
  switch (p) {
    case Profile::kFast: return "fast";
    case Profile::kAuto: return "auto";
    case Profile::kSafe: return "safe";
    case Profile::kStrict: return "strict";
  }
  return "?";
}

std::vector<CheckSpec> ChecksForProfile(Profile profile, const ChecksConfig& config, const std::string& workspace) {
  std::vector<std::string> names;
  if (profile == Profile::kSafe || profile == Profile::kStrict) names.push_back("build");
  if (profile != Profile::kFast) {
    names.push_back("lint");
    names.push_back("tests");
  }
  if (names.empty()) return {};
  std::vector<Detected> detected = Detect(workspace);
  std::vector<CheckSpec> out;
  for (const std::string& name : names) {
    const std::optional<std::string>& configured = name == "build"  ? config.build
                                                   : name == "lint" ? config.lint
                                                                    : config.tests;
    CheckSpec spec{name, "", ""};
    if (configured) {
      spec.command = *configured;
      spec.origin = "odinconfig.json";
    } else {
      for (const Detected& d : detected) {
        const std::string& command = name == "build" ? d.build : name == "lint" ? d.lint : d.tests;
        if (!command.empty()) {
          spec.command = command;
          spec.origin = d.origin;
          break;
        }
      }
    }
    out.push_back(spec);
  }
  return out;
}

std::string OutputTail(const std::string& output, size_t max_bytes) {
  if (output.size() <= max_bytes) return output;
  size_t start = output.size() - max_bytes;
  if (output[start - 1] != '\n') {  // not already at a line start
    size_t newline = output.find('\n', start);
    // Only to a line that is near and that exists: the tail is never emptied.
    if (newline != std::string::npos && newline - start < 200 && newline + 1 < output.size()) start = newline + 1;
  }
  return "[... " + std::to_string(start) + " bytes before ...]\n" + output.substr(start);
}

}  // namespace odin
