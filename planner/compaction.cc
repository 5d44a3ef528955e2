#include "planner/compaction.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "planner/context_window.h"
#include "planner/tool_specs.h"
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

// A field as text, whatever its type ("" when missing or null).
std::string LooseText(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump(-1, ' ', false, json::error_handler_t::replace);
}

// A field as a list of strings: an array's items as text, a lone value as
// one item, nothing when missing.
std::vector<std::string> LooseList(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) {
    if (std::string one = LooseText(j, key); !one.empty()) out.push_back(one);
    return out;
  }
  for (const json& item : j[key]) {
    out.push_back(item.is_string() ? item.get<std::string>()
                                   : item.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  return out;
}

bool IsStringArray(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return false;
  return std::all_of(j[key].begin(), j[key].end(), [](const json& item) { return item.is_string(); });
}

// A JSON object in text (prose around it, a fence without a language, a
// trailing remark): from one of the first few '{' to one of the last few
// '}', the widest that parses. Bounded: a few dozen parses at most.
json FirstObjectIn(const std::string& text) {
  constexpr int kTries = 6;
  int opens = 0;
  for (size_t open = text.find('{'); open != std::string::npos && opens < kTries;
       open = text.find('{', open + 1), ++opens) {
    int closes = 0;
    for (size_t close = text.rfind('}'); close != std::string::npos && close > open && closes < kTries;
         close = close == 0 ? std::string::npos : text.rfind('}', close - 1), ++closes) {
      json j = ParseJson(text.substr(open, close - open + 1));
      if (j.is_object()) return j;
    }
  }
  return json();
}

bool Blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

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
      // Images Read calls returned go with their results' outputs.
      m.images.clear();
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
  AskForHandoffNoteSchema(&req);
  return req;
}

StatusOr<HandoffSummary> ParseHandoffSummary(const std::string& text_in) {
  if (Blank(text_in)) return Status::InvalidArgument("handoff summary", "the utility model's answer is empty");
  std::string text = text_in;
  // A fenced block: what is between the fences.
  if (size_t open = text.find("```"); open != std::string::npos) {
    size_t body = text.find('\n', open);
    size_t close = body == std::string::npos ? std::string::npos : text.find("```", body);
    if (close != std::string::npos) text = text.substr(body + 1, close - body - 1);
  }
  HandoffSummary s;
  json j = ParseJson(text);
  if (j.is_object() && IsStringArray(j, "done") && IsStringArray(j, "pending") && j.contains("current_state") &&
      j["current_state"].is_string()) {
    s.done = LooseList(j, "done");
    s.pending = LooseList(j, "pending");
    s.current_state = j["current_state"].get<std::string>();
    return s;
  }
  // Loose: the object inside the text, its fields as they come.
  bool whole = j.is_object();
  if (!j.is_discarded() && !j.is_object() && !j.is_string()) {
    return Status::InvalidArgument("handoff summary", "the utility model's answer is JSON but not an object");
  }
  if (j.is_string()) return ParseHandoffSummary(j.get<std::string>());  // a JSON string: its text
  // No note is this long: a huge answer is not searched (each try parses
  // up to all of it), only kept, clipped, as prose.
  constexpr size_t kSearchedBytes = 256 * 1024;
  if (!whole && text_in.size() <= kSearchedBytes) j = FirstObjectIn(text_in);
  if (j.is_object()) {
    s.done = LooseList(j, "done");
    s.pending = LooseList(j, "pending");
    s.current_state = LooseText(j, "current_state");
    if (s.current_state.empty()) s.current_state = LooseText(j, "state");
    if (s.current_state.empty()) s.current_state = LooseText(j, "summary");
    s.form = "repaired";
    if (!s.done.empty() || !s.pending.empty() || !s.current_state.empty()) return s;
    if (whole) {
      return Status::InvalidArgument("handoff summary", "the utility model's object has no done, pending or state");
    }
  }
  // Prose: a summary all the same, in the model's words.
  s = HandoffSummary{};
  s.current_state = text_in;
  s.form = "prose";
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
  if (h.summary == nullptr) {
    t += "\nNo summary of the replaced turns: the utility model's summary failed" +
         (h.summary_failure.empty() ? std::string() : " (" + Clip(h.summary_failure, 300) + ")") +
         ". What is above comes from Odin's records; memory_query reaches the rest.\n";
  } else {
    t += std::string("\nSummary of the replaced turns (written by a model, not a record") +
         (h.summary->form == "prose" ? "; not in the form asked for" : "") + "):\n";
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
