// The agent loop's side of hooks (planner/hooks.h): SessionStart and
// UserPromptSubmit hooks run before the model sees a message, and what they
// print goes with it. (Stop hooks are in agent_completion.cc, PreCompact in
// agent_compaction.cc; the coordinator runs tool hooks.)

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "planner/agent.h"

namespace odin {

using nlohmann::json;

namespace {

// What a model that cannot see an image reads in its place.
std::string ImageNote(const ImageData& image, const std::string& model) {
  return "[image " + image.label + " (" + image.media_type + ", " + std::to_string(image.bytes.size()) +
         " bytes) not shown: the model '" + model +
         "' does not accept images (llm.vision says which do); ask the user to describe it if you need it]";
}

}  // namespace

void Agent::RunStartHooks(const std::string& source) {
  starting_ = true;
  uint64_t generation = generation_;
  json fields = {{"source", source}};
  host_->RunHooks({HookEvent::kSessionStart, o_.agent_id, std::nullopt, "", "", fields.dump()},
                  [this, generation](const HookOutcome& o) {
                    starting_ = false;
                    if (generation != generation_) return;
                    start_context_ = o.additional_context;
                    StartNext();
                  });
}

void Agent::RunPromptHooks() {
  PersistHistory();
  uint64_t generation = generation_;
  json fields = {{"prompt", current_->message.text}};
  host_->RunHooks({HookEvent::kUserPromptSubmit, o_.agent_id, CallModeOf(current_->message.mode), current_->message.id,
                   "", fields.dump(-1, ' ', false, json::error_handler_t::replace)},
                  [this, generation](const HookOutcome& o) {
                    if (generation != generation_ || !current_) return;
                    if (current_->cancelled) return Finish("cancelled");
                    if (o.stop || o.decision == HookOutcome::Decision::kBlock) {
                      RecordGateEvent("hook", "",
                                      json({{"event", "UserPromptSubmit"}, {"decision", "block"}, {"reason", o.reason}})
                                          .dump(-1, ' ', false, json::error_handler_t::replace));
                      return Finish(
                          "prompt_refused",
                          Status::PermissionDenied("prompt", "a UserPromptSubmit hook refused it: " +
                                                                 (o.stop && !o.stop_reason.empty() ? o.stop_reason
                                                                  : o.reason.empty()               ? "no reason given"
                                                                                                   : o.reason)));
                    }
                    BeginMessage(o.additional_context);
                  });
}

void Agent::BeginMessage(const std::string& hook_context) {
  std::string text = current_->message.text;
  if (!start_context_.empty()) {
    text = "[SessionStart hook context]\n" + start_context_ + "\n\n" + text;
    start_context_.clear();
  }
  if (!hook_context.empty()) text += "\n\n[UserPromptSubmit hook context]\n" + hook_context;
  ChatMessage message{ChatMessage::Role::kUser, text, {}, {}};
  // Images: to a model that sees them, as images; else a note each. The
  // ledger keeps each one's hash and size, never its bytes.
  for (const ImageData& image : current_->message.images) {
    RecordGateEvent("image_attached", "",
                    nlohmann::json({{"label", image.label},
                                    {"media_type", image.media_type},
                                    {"bytes", image.bytes.size()},
                                    {"sha256", Sha256Hex(image.bytes)},
                                    {"sent_as", o_.vision ? "image" : "note"}})
                        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (o_.vision) {
      message.images.push_back(image);
    } else {
      message.text += "\n\n" + ImageNote(image, o_.model);
    }
  }
  history_.push_back(std::move(message));
  PrepareMessage();
}

}  // namespace odin
