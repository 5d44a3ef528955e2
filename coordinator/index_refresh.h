#pragma once
// Bringing the symbol index (.odin/index.db) up to date, and the
// repository map made from it (issue 20). A refresh plans the files to
// parse (the tracker's word, or a stat walk of the tree without it), hands
// them to IndexParse executions in read-only workers through its port,
// applies their answers (only the coordinator writes the index), and runs
// again while files changed meanwhile (at most four rounds). The query
// tools' calls wait for the refresh and are resumed through the port.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/index_query.h"

namespace odin {

class SymbolIndexer;
namespace index {
class IndexDb;
}  // namespace index
namespace v1 {
class ToolResult;
}  // namespace v1

class IndexRefresh {
 public:
  struct Port {
    // Runs one IndexParse execution of paths (relative) in a read-only
    // worker; done hears its result (at once when it is refused).
    std::function<void(const std::vector<std::string>& paths, std::function<void(const v1::ToolResult&)> done)> parse;
    // Whether the tracker's word covers what changed (else the refresh
    // looks at the tree, stat only).
    std::function<bool()> changes_watched;
    // The index was rebuilt (a one-line note for the user).
    std::function<void(const std::string& note)> note;
    // The query calls that waited for this refresh, with how it went.
    std::function<void(const std::vector<std::string>& execution_ids, const Status& refreshed)> resume;
  };

  // db_path: usually <workspace>/.odin/index.db; workers: how many share
  // the parsing.
  IndexRefresh(std::string workspace, std::string db_path, int workers, Port port);
  ~IndexRefresh();

  // A changed file (relative to the workspace, or absolute inside it) is
  // parsed again at the next refresh.
  void MarkDirty(const std::string& path);
  // Brings the index up to date (from scratch with rebuild); done hears how
  // it went and how many files were parsed.
  void Refresh(bool rebuild, std::function<void(const Status&, size_t parsed)> done);
  // A query call waits for the index to be up to date (Port::resume).
  void Wait(const std::string& execution_id);
  // The index, once a refresh has opened it (else null).
  index::IndexDb* db();
  // Reads a workspace file for the queries, through the safe file layer,
  // following no symlink.
  index::ReadWorkspaceFile FileReader() const;
  // The last repository map made, at once ("" before the first refresh
  // ends); a refresh starts when files changed since, and a new map is
  // made once it ends.
  std::string RepoMap(size_t budget_tokens);

 private:
  void Start();
  void Refreshed(const Status& status);

  std::string workspace_;
  std::string db_path_;
  int workers_;
  Port port_;
  std::unique_ptr<SymbolIndexer> indexer_;
  int parsing_ = 0;                                               // IndexParse calls in flight
  Status status_;                                                 // how this refresh's parses went
  bool rebuild_ = false;                                          // the next refresh starts from an empty index
  std::vector<std::string> waiting_;                              // query calls waiting for the refresh
  size_t parsed_ = 0;                                             // files parsed by this refresh
  int rounds_ = 0;                                                // refreshes run back to back for late changes
  std::string repo_map_;                                          // the last repository map made
  size_t repo_map_tokens_ = 0;                                    // its budget
  bool repo_map_stale_ = true;                                    // the index changed since it was made
  std::vector<std::function<void(const Status&, size_t)>> done_;  // Refresh's callers
};

}  // namespace odin
