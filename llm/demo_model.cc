#include "llm/demo_model.h"

#include <nlohmann/json.hpp>
#include "base/json_input.h"

namespace odin {

namespace {

using nlohmann::json;

constexpr const char kLabel[] = "[demo model: scripted answers, not an LLM]";

// The answer for the state of the conversation: how many times the model has
// already answered since the user's last message.
ChatResponse Script(const ChatRequest& req) {
  size_t last_user = 0;
  for (size_t i = 0; i < req.messages.size(); ++i) {
    if (req.messages[i].role == ChatMessage::Role::kUser) last_user = i;
  }
  int answered = 0;
  std::vector<const ToolResultMessage*> results;
  for (size_t i = last_user + 1; i < req.messages.size(); ++i) {
    if (req.messages[i].role == ChatMessage::Role::kAssistant) ++answered;
    for (const ToolResultMessage& r : req.messages[i].results) results.push_back(&r);
  }
  ChatResponse r;
  r.stop_reason = "end_turn";
  if (answered == 0) {
    r.text = std::string(kLabel) + "\nI'll look around the workspace first: a listing and a search, in parallel.\n";
    r.tool_calls = {{"demo_1", "LS", R"({"path":"."})"},
                    {"demo_2", "Grep", R"({"pattern":"TODO|FIXME","output_mode":"count"})"}};
    r.stop_reason = "tool_use";
  } else if (answered == 1) {
    r.text = "Now one command, in the sandbox.\n";
    r.tool_calls = {
        {"demo_3", "ExecuteCommand",
         R"({"command":"echo \"$(ls | wc -l) entries at the top; network interfaces besides loopback: $(tail -n +3 /proc/net/dev | grep -vc ' lo:')\""})"}};
    r.stop_reason = "tool_use";
  } else {
    r.text =
        std::string(kLabel) + "\nHere is what the runtime recorded for this session (ground truth, not my word):\n";
    for (const ToolResultMessage* res : results) {
      json rec = ParseJson(res->content);
      if (!rec.is_object()) continue;
      r.text += "- " + rec.value("tool", std::string("?")) + " " + rec.value("execution_id", std::string()) + ": " +
                rec.value("status", std::string("?")) + " - " + rec.value("summary", std::string()) + "\n";
    }
    r.text += "Run `odin log` to see these calls, `odin show ID` for one, `odin ledger verify` to check the chain.\n";
  }
  return r;
}

}  // namespace

uint64_t DemoModel::Start(const ChatRequest& request, Callbacks callbacks) {
  uint64_t id = next_id_++;
  pending_[id] = {Script(request), std::move(callbacks)};
  return id;
}

void DemoModel::Tick() {
  while (!pending_.empty()) {
    auto it = pending_.begin();
    auto [response, callbacks] = std::move(it->second);
    pending_.erase(it);
    if (callbacks.on_text) callbacks.on_text(response.text);
    if (callbacks.on_done) callbacks.on_done(response);
  }
}

std::optional<SteadyTime> DemoModel::NextTimer() const {
  if (pending_.empty()) return std::nullopt;
  return SteadyTime{};  // due now (the clock's epoch is long past)
}

}  // namespace odin
