#include "coordinator/web_page_cache.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "odin/v1/worker.pb.h"

namespace odin {

using nlohmann::json;

std::optional<v1::ToolResult> WebPageCache::Answer(const std::string& url, const std::string& execution_id) {
  if (ttl_ <= Duration::zero()) return std::nullopt;
  auto it = pages_.find(url);
  if (it == pages_.end()) return std::nullopt;
  if (clock_->Now() - it->second.second >= ttl_) {
    pages_.erase(it);
    return std::nullopt;
  }
  v1::ToolResult r = *it->second.first;
  json out = ParseJson(r.output_json());
  if (!out.is_object()) out = json::object();
  out["cached_from"] = r.execution_id();
  r.set_output_json(out.dump(-1, ' ', false, json::error_handler_t::replace));
  r.set_execution_id(execution_id);
  return r;
}

void WebPageCache::Keep(const std::string& url, const v1::ToolResult& r) {
  if (ttl_ <= Duration::zero() || url.empty() || r.status() != v1::TOOL_STATUS_OK) return;
  json out = ParseJson(r.output_json());
  if (out.is_object() && out.contains("cached_from")) return;
  while (pages_.size() >= kMaxPages) {
    auto oldest = pages_.begin();
    for (auto it = pages_.begin(); it != pages_.end(); ++it) {
      if (it->second.second < oldest->second.second) oldest = it;
    }
    pages_.erase(oldest);
  }
  pages_[url] = {std::make_shared<const v1::ToolResult>(r), clock_->Now()};
}

}  // namespace odin
