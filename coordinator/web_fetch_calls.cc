// WebFetch's side of the coordinator: the arguments and the domain rules
// (gate 8) before any connection, and the pages fetched in the last
// web.cache_minutes. The fetch itself runs in the network worker
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

Status Coordinator::CheckWebFetch(Call& c, std::optional<ApprovalNeed>* need) {
  const ToolCall& call = c.call;
  if (!c.request.typed || !c.request.typed->input().has_web_fetch()) return MissingInput(call.tool);
  WebFetchArgs args = ArgsOf(c.request.typed->input().web_fetch());
  StatusOr<std::string> host = StrictUrlHost(args.url);
  if (!host.ok()) return host.status();
  // The worker fetches only if libcurl reads the same host.
  v1::WebFetchOptions* options = Typed(c.request).mutable_web_fetch();
  if (o_.web_fetch_options) *options = *o_.web_fetch_options;
  options->set_expected_host(*host);
  c.web_url = args.url;
  RuleVerdict v = JudgeWebFetch(*host, o_.command_rules);
  json detail = {{"decision", RuleDecisionName(v.decision)}, {"rule", v.rule}, {"tool", call.tool}, {"host", *host}};
  if (v.decision == RuleDecision::kAllow) return Status::OK();
  if (v.decision == RuleDecision::kDeny) {
    RecordGateEvent(call.agent_id, "", "web_rule", call.execution_id,
                    detail.dump(-1, ' ', false, json::error_handler_t::replace));
    return Status::PermissionDenied(kWebFetchTool, v.reason + " (permissions.deny in odinconfig.json)");
  }
  ApprovalNeed n{"WebFetch " + args.url, v.reason, v.ask_keys,
                 detail.dump(-1, ' ', false, json::error_handler_t::replace)};
  n.policy_may_allow = false;
  *need = std::move(n);
  return Status::OK();
}

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
