#include "planner/compaction.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "planner/context_window.h"
#include "tools/tool_catalog.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr char kMaskedKey[] = "masked";
// Each user request in a handoff, and how many: the first ones (the task)
// and the latest.
constexpr size_t kRequestBytes = 4000;
constexpr size_t kFirstRequests = 2;
constexpr size_t kLatestRequests = 8;
// What the summary request shows of one call's arguments and one result.
constexpr size_t kShownArgs = 300;
constexpr size_t kShownResult = 600;
// What a handoff keeps of the utility model's answer: it is a model's
// words, and must not be what overflows the window.
constexpr size_t kSummaryItems = 20;
constexpr size_t kSummaryItemBytes = 1000;
constexpr size_t kSummaryStateBytes = 4000;

std::string Clip(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n) + "... (" + std::to_string(s.size() - n) + " more bytes)";
}

// The file a call names, if it is a tool that reads or writes one file.
std::string FileOf(const ToolCallRequest& call) {
  const ToolInfo* info = FindTool(call.name);
  if (info == nullptr || !(info->writes_files() || info->handler == ToolHandler::kFileRead)) return "";
  json args = ParseJson(call.arguments_json);
  if (!args.is_object()) return "";
  for (const char* key : {"file_path", "path"}) {
    if (args.contains(key) && args[key].is_string()) return args[key].get<std::string>();
  }
  return "";
}

std::vector<std::string> StringList(const json& j, const char* key, std::string* problem) {
  std::vector<std::string> out;
  if (!j.contains(key) || !j[key].is_array()) {
    *problem = std::string("\"") + key + "\" must be an array of strings";
    return out;
  }
  for (const json& item : j[key]) {
    if (!item.is_string()) {
      *problem = std::string("\"") + key + "\" must be an array of strings";
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

size_t RecentTurnsStart(const std::vector<ChatMessage>& history, int turns) {
  int seen = 0;
  for (size_t i = history.size(); i > 0; --i) {
    if (history[i - 1].role == ChatMessage::Role::kAssistant && ++seen == turns) return i - 1;
  }
  return 0;
}

bool IsMaskedResult(const std::string& content) {
  // Stubs are written by MaskToolResults alone, compact and with this key.
  if (content.size() > 1024 || content.find(kMaskedKey) == std::string::npos) return false;
  json j = ParseJson(content);
  return j.is_object() && j.contains(kMaskedKey);
}

MaskResult MaskToolResults(std::vector<ChatMessage>* history, size_t end) {
  MaskResult out;
  end = std::min(end, history->size());
  for (size_t i = 0; i < end; ++i) {
    ChatMessage& m = (*history)[i];
    out.bytes_before += MessageBytes(m);
    if (m.role == ChatMessage::Role::kToolResults) {
      // The calls these answer: the assistant message before.
      const ChatMessage* calls =
          i > 0 && (*history)[i - 1].role == ChatMessage::Role::kAssistant ? &(*history)[i - 1] : nullptr;
      for (ToolResultMessage& r : m.results) {
        if (IsMaskedResult(r.content)) continue;
        json record = ParseJson(r.content);
        json stub = json::object();
        std::string id;
        if (record.is_object()) {
          for (const char* key : {"execution_id", "tool", "status"}) {
            if (record.contains(key) && record[key].is_string()) stub[key] = record[key];
          }
          if (stub.contains("execution_id")) id = stub["execution_id"].get<std::string>();
        }
        stub[kMaskedKey] = id.empty() ? "output masked to save context"
                                      : "output masked to save context; memory_query {\"query\": \"executions\", "
                                        "\"execution_id\": \"" +
                                            id + "\"} shows it";
        r.content = stub.dump(-1, ' ', false, json::error_handler_t::replace);
        if (!id.empty()) out.masked.push_back(id);
        if (calls != nullptr) {
          for (const ToolCallRequest& call : calls->tool_calls) {
            if (call.id != r.call_id) continue;
            if (std::string file = FileOf(call); !file.empty()) out.files.insert(file);
          }
        }
      }
    }
    out.bytes_after += MessageBytes(m);
  }
  return out;
}

ChatRequest SummaryRequest(const std::string& model, const std::vector<ChatMessage>& older, const std::string& focus,
                           int64_t max_bytes) {
  std::vector<std::string> parts;
  for (const ChatMessage& m : older) {
    switch (m.role) {
      case ChatMessage::Role::kUser: parts.push_back("USER: " + Clip(m.text, kRequestBytes)); break;
      case ChatMessage::Role::kAssistant: {
        std::string s = "ASSISTANT: " + Clip(m.text, kRequestBytes);
        for (const ToolCallRequest& c : m.tool_calls)
          s += "\n  CALL " + c.name + " " + Clip(c.arguments_json, kShownArgs);
        parts.push_back(s);
        break;
      }
      case ChatMessage::Role::kToolResults:
        for (const ToolResultMessage& r : m.results) parts.push_back("RESULT: " + Clip(r.content, kShownResult));
        break;
    }
  }
  // The newest part, if it all does not fit.
  std::string text;
  size_t first = parts.size();
  int64_t bytes = 0;
  while (first > 0 && bytes + static_cast<int64_t>(parts[first - 1].size()) + 1 <= max_bytes) {
    bytes += static_cast<int64_t>(parts[--first].size()) + 1;
  }
  if (first > 0) text = "(" + std::to_string(first) + " earlier entries omitted)\n";
  for (size_t i = first; i < parts.size(); ++i) text += parts[i] + "\n";

  ChatRequest req;
  req.model = model;
  req.handoff = true;
  req.system =
      "You write the handoff note of a coding agent's session: the conversation below is about to be removed from "
      "the agent's context, and your note is what the agent will know of it. Odin, the runtime, adds the user's "
      "requests, the todo list, the files changed and the failed attempts from its own records, so do not repeat "
      "them. Write only what the conversation shows; never invent results.\n"
      "Answer with one JSON object and nothing else:\n"
      "{\"done\": [\"what was accomplished, one item per string\"], \"pending\": [\"what remains to do\"], "
      "\"current_state\": \"where the work stands, what was being tried last, and what was learned (including what "
      "did not work and why)\"}";
  std::string ask = "The conversation so far:\n\n" + text;
  if (!focus.empty()) ask += "\nThe user asked the note to keep in particular: " + focus + "\n";
  ask += "\nWrite the JSON object now.";
  req.messages.push_back({ChatMessage::Role::kUser, ask, {}, {}});
  return req;
}

StatusOr<HandoffSummary> ParseHandoffSummary(const std::string& text_in) {
  std::string text = text_in;
  // A fenced block: what is between the fences.
  if (size_t open = text.find("```"); open != std::string::npos) {
    size_t body = text.find('\n', open);
    size_t close = body == std::string::npos ? std::string::npos : text.find("```", body);
    if (close != std::string::npos) text = text.substr(body + 1, close - body - 1);
  }
  json j = ParseJson(text);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("handoff summary", "the utility model's answer is not a JSON object");
  }
  HandoffSummary s;
  std::string problem;
  s.done = StringList(j, "done", &problem);
  if (problem.empty()) s.pending = StringList(j, "pending", &problem);
  if (problem.empty() && (!j.contains("current_state") || !j["current_state"].is_string())) {
    problem = "\"current_state\" must be a string";
  }
  if (!problem.empty()) return Status::InvalidArgument("handoff summary", problem);
  s.current_state = j["current_state"].get<std::string>();
  return s;
}

std::string RenderHandoff(const Handoff& h) {
  std::string t = "[runtime] Context compacted (" + h.compaction_id + "): the " + std::to_string(h.replaced_messages) +
                  " messages before this point were replaced by this handoff. Every call's full record stays in the "
                  "ledger: memory_query reaches it by execution id.\n";
  if (!h.user_requests.empty()) {
    t += "\nThe user's requests, in their own words (oldest first):\n";
    size_t n = h.user_requests.size();
    for (size_t i = 0; i < n; ++i) {
      if (i >= kFirstRequests && i + kLatestRequests < n) {
        if (i == kFirstRequests) t += "  (" + std::to_string(n - kFirstRequests - kLatestRequests) + " more)\n";
        continue;
      }
      t += std::to_string(i + 1) + ". " + Clip(h.user_requests[i], kRequestBytes) + "\n";
    }
  }
  if (!h.todos.empty()) t += "\nTodo list:\n" + h.todos + (h.todos.back() == '\n' ? "" : "\n");
  if (!h.facts.empty()) t += "\n" + h.facts + (h.facts.back() == '\n' ? "" : "\n");
  if (!h.blocked.empty()) t += "\nBlocked: " + h.blocked + "\n";
  if (h.summary != nullptr) {
    t += "\nSummary of the replaced turns (written by a model, not a record):\n";
    auto items = [&t](const char* label, const std::vector<std::string>& list) {
      for (size_t i = 0; i < list.size() && i < kSummaryItems; ++i) {
        t += std::string("- ") + label + ": " + Clip(list[i], kSummaryItemBytes) + "\n";
      }
      if (list.size() > kSummaryItems) t += "  (" + std::to_string(list.size() - kSummaryItems) + " more)\n";
    };
    items("done", h.summary->done);
    items("pending", h.summary->pending);
    if (!h.summary->current_state.empty()) {
      t += "- current state: " + Clip(h.summary->current_state, kSummaryStateBytes) + "\n";
    }
  }
  t += "\nFiles you read before this point must be read again before you edit them.";
  return t;
}

std::vector<ChatMessage> RebuildHistory(const std::string& handoff, const std::vector<ChatMessage>& history,
                                        size_t keep_from) {
  std::vector<ChatMessage> out;
  keep_from = std::min(keep_from, history.size());
  if (keep_from < history.size() && history[keep_from].role == ChatMessage::Role::kUser) {
    out.push_back(history[keep_from]);
    out.back().text = handoff + "\n\n" + out.back().text;
    ++keep_from;
  } else {
    out.push_back({ChatMessage::Role::kUser, handoff, {}, {}});
  }
  out.insert(out.end(), history.begin() + static_cast<std::ptrdiff_t>(keep_from), history.end());
  return out;
}

}  // namespace odin
