// odin index: brings the workspace's symbol index (.odin/index.db) up to
// date through the coordinator, as the query tools would: the files are
// parsed in read-only workers, and each batch is an IndexParse execution in
// the ledger.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "session/runtime.h"
#include "index/index_db.h"
#include "planner/run_outcome.h"

namespace odin {

int RunIndex(const GlobalFlags& g, const IndexFlags& f) {
  auto fail = [](const std::string& message) {
    std::cerr << "odin index: " << message << "\n";
    return kError;
  };
  RuntimeFlags rf;
  rf.dir = g.dir;
  rf.sandbox = g.sandbox;
  rf.session_kind = "index";
  rf.mode = "ask";
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(rf);
  if (!rt.ok()) return fail(rt.status().message());
  Coordinator& coord = (*rt)->coordinator();
  coord.on_index_note = [](const std::string& note) { std::cerr << "odin index: " << note << "\n"; };
  SteadyTime start = std::chrono::steady_clock::now();
  std::optional<Status> done;
  size_t parsed = 0;
  coord.RefreshSymbolIndex(f.rebuild, [&](const Status& s, size_t n) {
    done = s;
    parsed = n;
  });
  while (!done) {
    Status s = coord.Poll(seconds(1));
    if (!s.ok()) return fail(s.message());
  }
  if (!done->ok()) return fail(done->message());
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  StatusOr<index::IndexStats> st = coord.symbol_index()->Stats();
  if (!st.ok()) return fail(st.status().message());
  if (f.json) {
    nlohmann::json j = {{"parsed_files", parsed},       {"files", st->files},
                        {"lines", st->lines},           {"symbols", st->symbols},
                        {"references", st->references}, {"files_with_syntax_errors", st->files_with_errors},
                        {"seconds", elapsed},           {"by_language", st->files_by_language}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "indexed " << st->files << " files (" << parsed << " parsed now), " << st->lines << " lines, "
            << st->symbols << " symbols in "
            << (elapsed < 10 ? std::to_string(static_cast<int>(elapsed * 1000)) + " ms"
                             : std::to_string(static_cast<int>(elapsed)) + " s")
            << "\n";
  if (f.stats) {
    for (const auto& [language, files] : st->files_by_language) {
      std::cout << "  " << language << ": " << files << " files\n";
    }
    std::cout << "  references: " << st->references << "\n";
    std::cout << "  files with syntax errors (symbols recovered): " << st->files_with_errors << "\n";
  }
  return 0;
}

}  // namespace odin
