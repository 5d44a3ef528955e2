#pragma once
// Backpressure: the deterministic checks (build, lint, tests) that run when
// the model claims completion, and which of them a profile asks for.
//
//   profile  checks
//   fast     none
//   auto     lint, tests
//   safe     build, lint, tests
//   strict   build, lint, tests (and memory-forced reasoning in the gate)
//
// Commands come from odinconfig.json ("checks": {"build": "...", "lint":
// "...", "tests": "..."}; "" turns one off) or are detected from the project:
//
//   CMakeLists.txt   cmake --build build (configured first if needed); ctest
//   Cargo.toml       cargo build; cargo clippy; cargo test
//   go.mod           go build ./...; go vet ./...; go test ./...
//   package.json     npm run build; npm run lint; npm test (scripts that exist)
//   Makefile         make; make lint; make test or make check (targets that exist)
//   Python           ruff check . (when configured); python3 -m pytest -q
//
// A check no project file gives a command for is not_applicable: reported,
// never a pass.

#include <optional>
#include <string>
#include <vector>

namespace odin {

enum class Profile { kFast, kAuto, kSafe, kStrict };

bool ParseProfile(const std::string& text, Profile* profile);
const char* ProfileName(Profile profile);

struct ChecksConfig {
  // Set (even to ""): the command from odinconfig.json, "" meaning none.
  std::optional<std::string> build, lint, tests;
  int timeout_seconds = 120;  // per check
  int retry_cap = 5;          // failed completions per distinct failure, then not_converged
};

struct CheckSpec {
  std::string name;     // build, lint, tests
  std::string command;  // shell text; "" when not applicable
  std::string origin;   // where it came from: "odinconfig.json", "CMakeLists.txt", ...
};

// The checks the profile runs, in order (build first), with their commands
// for the project at workspace.
std::vector<CheckSpec> ChecksForProfile(Profile profile, const ChecksConfig& config, const std::string& workspace);

// The last max_bytes of output, cut at a line start where possible.
std::string OutputTail(const std::string& output, size_t max_bytes);

}  // namespace odin
