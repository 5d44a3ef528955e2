// WebFetch's side of the coordinator: the pages fetched in the last
// web.cache_minutes (its domain rules, gate 8, are in gates/safeguards.cc). The fetch itself runs in the network worker
// (workers/web_worker.cc), which judges every address it connects to; the
// utility model's answer over the page is the planner's (planner/web_answer.cc).

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "coordinator/coordinator.h"
#include "tools/tool_input.h"
#include "odin/v1/worker.pb.h"
#include "web/url_host.h"

namespace odin {

using nlohmann::json;

bool Coordinator::AnswerWebFetchFromCache(Call& c) {
  if (o_.web_cache_ttl <= Duration::zero()) return false;
  auto it = web_cache_.find(c.web_url);
  if (it == web_cache_.end()) return false;
  if (clock_->Now() - it->second.second >= o_.web_cache_ttl) {
    web_cache_.erase(it);
    return false;
  }
  v1::ToolResult r = *it->second.first;
  json out = ParseJson(r.output_json());
  if (!out.is_object()) out = json::object();
  out["cached_from"] = r.execution_id();
  r.set_output_json(out.dump(-1, ' ', false, json::error_handler_t::replace));
  r.set_execution_id(c.call.execution_id);
  OnResult(r);  // recorded as a call of its own, which no worker ran
  return true;
}

void Coordinator::CacheWebFetch(const Call& c, const v1::ToolResult& r) {
  if (o_.web_cache_ttl <= Duration::zero() || r.status() != v1::TOOL_STATUS_OK) return;
  json out = ParseJson(r.output_json());
  if (c.web_url.empty() || (out.is_object() && out.contains("cached_from"))) return;
  // Bounded: the oldest pages go first.
  constexpr size_t kMaxPages = 64;
  while (web_cache_.size() >= kMaxPages) {
    auto oldest = web_cache_.begin();
    for (auto it = web_cache_.begin(); it != web_cache_.end(); ++it) {
      if (it->second.second < oldest->second.second) oldest = it;
    }
    web_cache_.erase(oldest);
  }
  web_cache_[c.web_url] = {std::make_shared<const v1::ToolResult>(r), clock_->Now()};
}

}  // namespace odin
