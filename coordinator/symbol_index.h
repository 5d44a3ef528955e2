#pragma once
// SymbolIndexer: keeps .odin/index.db (index/index_db.h) in step with the
// workspace. It decides which files must be parsed again: at its first look
// in a process, every source file whose size or mtime differs from what the
// index recorded (a walk that skips .git, .odin, node_modules and what git
// ignores); later, only the paths the mutation records named (file-tool
// writes, commands' change sets, external changes), unless the caller
// says the tree must be looked at again (no change tracker to tell it).
// The parsing is done by read-only workers (IndexParse); Apply writes
// what they found. Sandboxes never see .odin/: only the coordinator writes
// the index.
//
// Thread-safety: none.

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/index_db.h"

namespace odin {

namespace v1 {
class IndexParseOutput;
}

class SymbolIndexer {
 public:
  // db_path: usually <workspace>/.odin/index.db.
  SymbolIndexer(std::string workspace, std::string db_path);
  ~SymbolIndexer();

  // Opens the index (once; later calls return at once). *note is set to a
  // one-line message when the file was rebuilt.
  Status Open(std::string* note);
  index::IndexDb* db() { return db_.get(); }

  // A file (relative to the workspace) changed: the next Plan looks at it.
  void MarkDirty(const std::string& relative_path);
  // Forgets everything indexed (odin index --rebuild).
  Status Clear();

  // The files to parse so the index matches the tree, in batches of a few
  // megabytes; files that are gone leave the index here. full: look at the
  // whole tree (always at the first Plan).
  StatusOr<std::vector<std::vector<std::string>>> Plan(bool full);
  // Writes one batch's result.
  Status Apply(const v1::IndexParseOutput& parsed);
  // Whether a Plan has looked at the whole tree yet.
  bool walked() const { return walked_; }

 private:
  struct Seen {
    int64_t size;
    int64_t mtime_ns;
  };
  void Walk(std::vector<std::pair<std::string, Seen>>* out);

  std::string workspace_;
  std::string db_path_;
  std::unique_ptr<index::IndexDb> db_;
  std::set<std::string> dirty_;
  bool walked_ = false;
};

}  // namespace odin
