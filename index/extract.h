#pragma once
// Parses one source file with tree-sitter and extracts its symbols and
// references (symbols.h). Runs in a read-only worker; never touches the disk.

#include <memory>
#include <string_view>

#include "index/symbols.h"

namespace odin::index {

// One parser per language, reused across files (a tree-sitter parser keeps
// its allocations). Not thread-safe: one per thread.
class Extractor {
 public:
  Extractor();
  ~Extractor();
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;

  // The symbols of content as a file of language. A file that does not
  // parse still yields what tree-sitter recovered, with has_errors set.
  FileSymbols Extract(Language language, std::string_view content);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odin::index
