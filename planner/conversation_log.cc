#include "planner/conversation_log.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/sha256.h"
#include "planner/compaction.h"

namespace odin {

using nlohmann::json;

const char* ConversationKind(const ChatMessage& m) {
  switch (m.role) {
    case ChatMessage::Role::kUser: return "user";
    case ChatMessage::Role::kAssistant: return "assistant";
    case ChatMessage::Role::kToolResults: return "tool_results";
  }
  return "user";
}

std::string ChatMessageJson(const ChatMessage& m) {
  json j = json::object();
  if (!m.text.empty()) j["text"] = m.text;
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCallRequest& c : m.tool_calls) {
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_json}});
    }
    j["tool_calls"] = calls;
  }
  if (!m.reasoning.empty()) j["reasoning"] = m.reasoning;
  // An image's hash and size, never its bytes: the ledger is no image store.
  if (!m.images.empty()) {
    json images = json::array();
    for (const ImageData& image : m.images) {
      images.push_back({{"label", image.label},
                        {"media_type", image.media_type},
                        {"sha256", Sha256Hex(image.bytes)},
                        {"bytes", image.bytes.size()}});
    }
    j["images"] = images;
  }
  if (!m.results.empty()) {
    json results = json::array();
    for (const ToolResultMessage& r : m.results) {
      results.push_back({{"call_id", r.call_id}, {"content", r.content}, {"is_error", r.is_error}});
    }
    j["results"] = results;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

StatusOr<ChatMessage> ChatMessageFromJson(const std::string& text) {
  json j = ParseJson(text);
  if (!j.is_object()) return Status::Corruption("conversation entry", "not a JSON object");
  ChatMessage m;
  try {
    m.text = j.value("text", "");
    for (const json& c : j.value("tool_calls", json::array())) {
      m.tool_calls.push_back(
          {c.at("id").get<std::string>(), c.at("name").get<std::string>(), c.at("arguments").get<std::string>()});
    }
    for (const json& r : j.value("reasoning", json::array())) m.reasoning.push_back(r.get<std::string>());
    // Images come back as what they were, not as images: their bytes were
    // never kept.
    for (const json& image : j.value("images", json::array())) {
      m.text += "\n\n[image " + image.value("label", std::string("?")) + " (" +
                image.value("media_type", std::string("?")) + ", " + std::to_string(image.value("bytes", 0)) +
                " bytes) was attached here; images are not kept across a resume]";
    }
    for (const json& r : j.value("results", json::array())) {
      m.results.push_back(
          {r.at("call_id").get<std::string>(), r.at("content").get<std::string>(), r.value("is_error", false)});
    }
  } catch (const json::exception& e) {
    return Status::Corruption("conversation entry", e.what());
  }
  return m;
}

namespace {

std::string MessageIdOf(const ConversationEntry& e) {
  json j = ParseJson(e.content_json);
  return j.is_object() && j.contains("message_id") && j["message_id"].is_string() ? j["message_id"].get<std::string>()
                                                                                  : "";
}

// The entries that stand after the rewinds: a rewind takes away what came
// from its message's start on, with the requests of the messages it takes.
StatusOr<std::vector<const ConversationEntry*>> AfterRewinds(const std::vector<ConversationEntry>& entries) {
  std::vector<const ConversationEntry*> kept;
  for (const ConversationEntry& e : entries) {
    if (e.kind != "rewind") {
      kept.push_back(&e);
      continue;
    }
    std::string to = MessageIdOf(e);
    auto start = std::find_if(kept.begin(), kept.end(), [&](const ConversationEntry* k) {
      return k->kind == "message_start" && MessageIdOf(*k) == to;
    });
    if (to.empty() || start == kept.end()) {
      return Status::Corruption("entry " + e.id, "a rewind to a message not in the conversation (" + to + ")");
    }
    std::set<std::string> taken;
    for (auto it = start; it != kept.end(); ++it) {
      if ((*it)->kind == "message_start") taken.insert(MessageIdOf(**it));
    }
    kept.erase(start, kept.end());
    std::erase_if(kept,
                  [&](const ConversationEntry* k) { return k->kind == "request" && taken.count(MessageIdOf(*k)); });
  }
  return kept;
}

}  // namespace

Status CanRewindTo(const std::vector<ConversationEntry>& entries, const std::string& message_id) {
  std::vector<ConversationEntry> with = entries;
  with.push_back({"conv_check", "", "", "rewind", json({{"message_id", message_id}}).dump(), 0});
  StatusOr<std::vector<const ConversationEntry*>> kept = AfterRewinds(with);
  if (kept.ok()) return Status::OK();
  return Status::FailedPrecondition("rewind", "message " + message_id +
                                                  " is not in the session's conversation as it stands (rewound "
                                                  "already, or recorded before Odin marked where messages start)");
}

StatusOr<ReplayedConversation> ReplayConversation(const std::vector<ConversationEntry>& entries) {
  ReplayedConversation out;
  ASSIGN_OR_RETURN(std::vector<const ConversationEntry*> kept, AfterRewinds(entries));
  for (const ConversationEntry* entry : kept) {
    const ConversationEntry& e = *entry;
    auto role = e.kind == "user"           ? ChatMessage::Role::kUser
                : e.kind == "assistant"    ? ChatMessage::Role::kAssistant
                : e.kind == "tool_results" ? ChatMessage::Role::kToolResults
                                           : std::optional<ChatMessage::Role>();
    if (role) {
      StatusOr<ChatMessage> m = ChatMessageFromJson(e.content_json);
      if (!m.ok()) return m.status().WithContext("entry " + e.id);
      m->role = *role;
      out.history.push_back(std::move(*m));
      continue;
    }
    json j = ParseJson(e.content_json);
    if (e.kind == "request") {
      if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) {
        return Status::Corruption("entry " + e.id, "a request without its text");
      }
      out.user_requests.push_back(j["text"].get<std::string>());
    } else if (e.kind == "compaction") {
      if (!j.is_object() || !j.contains("keep_from") || !j["keep_from"].is_number_unsigned()) {
        return Status::Corruption("entry " + e.id, "a compaction without keep_from");
      }
      size_t keep_from = std::min<size_t>(j["keep_from"].get<size_t>(), out.history.size());
      size_t mask_to = keep_from;
      if (j.contains("mask_to") && j["mask_to"].is_number_unsigned()) {
        mask_to = std::min<size_t>(j["mask_to"].get<size_t>(), out.history.size());
      }
      (void)MaskToolResults(&out.history, mask_to);
      if (j.contains("handoff") && j["handoff"].is_string()) {
        out.history = RebuildHistory(j.value("handoff", ""), out.history, keep_from);
      }
      ++out.compactions;
    } else if (e.kind == "clear") {
      out.history.clear();
    }
    // "owner", "message_start" and kinds of later versions change nothing here.
  }
  return out;
}

std::vector<ChatMessage> CloseInterrupted(std::vector<ChatMessage>* history) {
  std::vector<ChatMessage> added;
  if (history->empty()) return added;
  const ChatMessage& last = history->back();
  if (last.role == ChatMessage::Role::kAssistant && !last.tool_calls.empty()) {
    ChatMessage results{ChatMessage::Role::kToolResults, "", {}, {}};
    for (const ToolCallRequest& c : last.tool_calls) {
      json record = {{"tool", c.name},
                     {"status", "interrupted"},
                     {"authority", "ground_truth"},
                     {"summary",
                      "interrupted: the odin process ended while this call ran; what it did may be partial (check "
                      "before relying on it)"}};
      results.results.push_back({c.id, record.dump(), true});
    }
    added.push_back(std::move(results));
  } else if (last.role != ChatMessage::Role::kAssistant) {
    added.push_back(
        {ChatMessage::Role::kAssistant, "(interrupted: the odin process ended before this turn did)", {}, {}});
  }
  history->insert(history->end(), added.begin(), added.end());
  return added;
}

}  // namespace odin
