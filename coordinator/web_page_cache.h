#pragma once
// WebFetch's pages fetched in the last web.cache_minutes, by URL as the
// gate read it (its domain rules, gate 8, are in gates/safeguards.cc; the
// fetch itself runs in the network worker, workers/web_worker.cc, which
// judges every address it connects to). A page answered from here is
// recorded as a call of its own that no worker ran, its output naming the
// execution that fetched it ("cached_from").

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"

namespace odin {
namespace v1 {
class ToolResult;
}  // namespace v1

class WebPageCache {
 public:
  // ttl zero or less: nothing is kept.
  WebPageCache(Duration ttl, Clock* clock) : ttl_(ttl), clock_(clock) {}

  // The page fetched for url within the ttl, as the result of execution_id;
  // nullopt when there is none (an expired one is dropped).
  std::optional<v1::ToolResult> Answer(const std::string& url, const std::string& execution_id);
  // Keeps a fetch's result: an ok one, fetched (not itself answered from
  // here). At most 64 pages; the oldest go first.
  void Keep(const std::string& url, const v1::ToolResult& result);

  static constexpr size_t kMaxPages = 64;

 private:
  Duration ttl_;
  Clock* clock_;
  std::map<std::string, std::pair<std::shared_ptr<const v1::ToolResult>, SteadyTime>> pages_;
};

}  // namespace odin
