#pragma once
// SymbolIndexer: keeps .odin/index.db (index/index_db.h) in step with the
// workspace. It decides which files must be parsed again: at its first look
// in a process, every source file whose size or mtime differs from what the
// index recorded (a walk that skips .git, .odin, node_modules and what git
// ignores); later, only the paths the mutation records named (file-tool
// writes, commands' change sets, external changes), unless the caller
// says the tree must be looked at again (no change tracker to tell it).
// The parsing is done by read-only workers (IndexParse); Apply writes
// what they found, on a writer thread of its own, so the coordinator's loop
// (and the next batch's dispatch) never waits for SQLite. Sandboxes never
// see .odin/: only the coordinator writes the index.
//
// Thread-safety: none for callers (one thread calls every method). Between
// Plan and Finish the index belongs to the writer thread: db() must not be
// used then.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <set>
#include <string>
#include <functional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "index/index_db.h"

namespace odin {

namespace v1 {
class IndexParseOutput;
}

class SymbolIndexer {
 public:
  // Whether a path (relative to the workspace; a directory or a file) is
  // ignored, so left out of the index (the coordinator passes git's
  // rules, workspace/git_ignore.h). Called from Plan only.
  using IgnoredFn = std::function<bool(const std::string& relative)>;

  // db_path: usually <workspace>/.odin/index.db. ignored: none if empty.
  SymbolIndexer(std::string workspace, std::string db_path, IgnoredFn ignored = nullptr);
  ~SymbolIndexer();

  // Opens the index (once; later calls return at once). *note is set to a
  // one-line message when the file was rebuilt.
  Status Open(std::string* note);
  index::IndexDb* db() { return db_.get(); }

  // A file (relative to the workspace) changed: the next Plan looks at it.
  void MarkDirty(const std::string& relative_path);
  // Forgets everything indexed (odin index --rebuild).
  Status Clear();

  // The files to parse so the index matches the tree, in batches of at
  // most a few megabytes, at least two for each of `workers` when there is
  // enough to share; files that are gone leave the index here. full: look
  // at the whole tree (always at the first Plan).
  StatusOr<std::vector<std::vector<std::string>>> Plan(bool full, int workers = 2);
  // Queues one batch's result for the writer thread.
  void Apply(std::unique_ptr<v1::IndexParseOutput> parsed);
  // The refresh is over (every batch handed to Apply, or given up): waits
  // for the writer, then makes again what a bulk load dropped. Returns the
  // first error of the writes.
  Status Finish();
  // Whether a Plan has looked at the whole tree yet.
  bool walked() const { return walked_; }
  // Whether files changed since the last Plan (the next refresh has work).
  bool has_dirty() const { return !dirty_.empty(); }
  // Whether a Plan since the last call took files out of the index (they
  // are gone): what is made from the index, the repository map, is stale.
  bool TakeRemoved() { return std::exchange(removed_, false); }

 private:
  struct Seen {
    int64_t size;
    int64_t mtime_ns;
  };
  void Walk(std::vector<std::pair<std::string, Seen>>* out);
  StatusOr<std::vector<std::vector<std::string>>> PlanIn(bool full, int workers);
  Status Write(const v1::IndexParseOutput& parsed);
  void WriterLoop();

  std::string workspace_;
  std::string db_path_;
  IgnoredFn ignored_;
  std::unique_ptr<index::IndexDb> db_;
  std::set<std::string> dirty_;
  bool walked_ = false;
  bool removed_ = false;  // files left the index since TakeRemoved
  bool bulk_ = false;     // the secondary indexes are dropped until Finish

  // The writer thread and what it has to write.
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<v1::IndexParseOutput>> queue_;  // guarded by mu_
  bool closing_ = false;                                     // guarded by mu_
  Status write_status_;                                      // guarded by mu_
};

}  // namespace odin
