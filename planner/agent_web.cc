// The agent loop's side of WebFetch: when the network worker has fetched a
// page, the utility model answers the call's prompt over it, and that
// answer (marked untrusted) is what the model reads. The turn's results wait
// for it like for any running call.

#include <nlohmann/json.hpp>

#include "planner/agent.h"
#include "planner/web_answer.h"
#include "odin/v1/worker.pb.h"

namespace odin {

bool Agent::StartWebAnswer(size_t index, const std::string& execution_id, const v1::ToolResult& r) {
  if (!NeedsWebAnswer(r)) return false;
  Current& c = *current_;
  ChatRequest req = WebAnswerRequest(UtilityModel(), c.calls[index].arguments_json, r);
  req.max_tokens = o_.max_tokens;
  SteadyTime started = clock_->Now();
  int64_t started_wall = clock_->WallMillis();
  uint64_t generation = generation_;
  LlmClient::Callbacks cb;
  cb.on_done = [this, generation, execution_id, started, started_wall](const StatusOr<ChatResponse>& response) {
    if (generation == generation_ && current_) OnWebAnswer(execution_id, started, started_wall, response);
  };
  Current::WebAnswer& w = c.web_answers[execution_id];
  w.index = index;
  w.fetched = r.SerializeAsString();
  w.call = llm_->Start(req, std::move(cb));
  return true;
}

void Agent::OnWebAnswer(const std::string& execution_id, SteadyTime started, int64_t started_wall,
                        const StatusOr<ChatResponse>& response) {
  Current& c = *current_;
  auto it = c.web_answers.find(execution_id);
  if (it == c.web_answers.end()) return;
  Current::WebAnswer w = std::move(it->second);
  c.web_answers.erase(it);
  AccountModelCall("utility", UtilityModel(), started, started_wall, response);
  if (!current_) return;
  v1::ToolResult r;
  r.ParseFromString(w.fetched);
  StatusOr<std::string> answer = response.ok() ? StatusOr<std::string>(response->text) : response.status();
  if (answer.ok() && answer->empty()) answer = Status::Unavailable("the utility model", "gave an empty answer");
  std::string record = WebFetchRecord(execution_id, r, answer);
  OnToolDone(w.index, execution_id, kWebFetchTool, r, &record);
}

void Agent::AbandonWebAnswers(const std::string& why) {
  if (!current_) return;
  std::map<std::string, Current::WebAnswer> pending = std::move(current_->web_answers);
  current_->web_answers.clear();
  uint64_t generation = generation_;
  for (auto& [id, w] : pending) {
    llm_->Cancel(w.call);
    if (generation != generation_ || !current_) return;
    v1::ToolResult r;
    r.ParseFromString(w.fetched);
    std::string record = WebFetchRecord(id, r, Status::Cancelled("the answer", why));
    OnToolDone(w.index, id, kWebFetchTool, r, &record);
  }
}

}  // namespace odin
