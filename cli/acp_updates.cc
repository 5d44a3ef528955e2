#include "cli/acp_updates.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Text(const json& o, const char* key) {
  auto it = o.is_object() ? o.find(key) : o.end();
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// ACP's tool kinds, from the registry's facts about the tool.
const char* KindOf(const std::string& tool) {
  switch (HandlerOf(tool)) {
    case ToolHandler::kFileRead:
    case ToolHandler::kLspCheck:
    case ToolHandler::kCommandOutput: return "read";
    case ToolHandler::kSearch:
    case ToolHandler::kIndexQuery:
    case ToolHandler::kMemoryQuery: return "search";
    case ToolHandler::kFileWrite:
    case ToolHandler::kEditSymbol:
    case ToolHandler::kInit: return "edit";
    case ToolHandler::kCommand:
    case ToolHandler::kStopCommand: return "execute";
    case ToolHandler::kWebFetch: return "fetch";
    case ToolHandler::kTodoWrite:
    case ToolHandler::kPlanUpdate:
    case ToolHandler::kContextSummarizer: return "think";
    default: return "other";
  }
}

// The argument that says what a call is about, if any.
std::string Subject(const json& args) {
  for (const char* key : {"file_path", "path", "command", "pattern", "url", "query", "description", "name"}) {
    std::string v = Text(args, key);
    if (!v.empty()) return v.size() > 200 ? v.substr(0, 197) + "..." : v;
  }
  return "";
}

std::string Absolute(const std::string& root, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return root + (root.size() > 1 ? "/" : "") + path;
}

// Where a call's file is, absolute, if it names one in the workspace: an
// editor that follows the agent opens it, before any gate has judged the
// call, so a path the model names elsewhere is not shown.
json Locations(const std::string& root, const json& args) {
  json out = json::array();
  for (const char* key : {"file_path", "path"}) {
    std::string v = Text(args, key);
    if (v.empty()) continue;
    std::string abs = std::filesystem::path(Absolute(root, v)).lexically_normal().string();
    if (abs == root || abs.rfind(root + "/", 0) == 0) out.push_back({{"path", abs}});
    break;
  }
  return out;
}

json TextContent(const std::string& text) {
  return {{"type", "content"}, {"content", {{"type", "text"}, {"text", text}}}};
}

json Chunk(const char* kind, const std::string& text) {
  return {{"sessionUpdate", kind}, {"content", {{"type", "text"}, {"text", text}}}};
}

json PlanOf(const json& args) {
  json entries = json::array();
  if (args.is_object() && args.contains("todos") && args["todos"].is_array()) {
    for (const json& t : args["todos"]) {
      std::string status = Text(t, "status");
      if (status != "pending" && status != "in_progress" && status != "completed") status = "pending";
      entries.push_back({{"content", Text(t, "content")}, {"priority", "medium"}, {"status", status}});
    }
  }
  return {{"sessionUpdate", "plan"}, {"entries", entries}};
}

}  // namespace

std::string AcpModes(Mode current) {
  json modes = json::array();
  for (Mode m : {Mode::kAsk, Mode::kPlan, Mode::kEdit}) {
    const char* name = m == Mode::kAsk ? "Ask: reads only" : m == Mode::kPlan ? "Plan: reads, then a plan" : "Edit";
    modes.push_back({{"id", ModeName(m)}, {"name", name}});
  }
  return Dump({{"currentModeId", ModeName(current)}, {"availableModes", modes}});
}

StatusOr<std::string> AcpPromptText(const json& blocks) {
  if (!blocks.is_array()) return Status::InvalidArgument("prompt", "must be an array of content blocks");
  std::string text;
  for (const json& b : blocks) {
    std::string type = Text(b, "type");
    if (type == "text") {
      text += Text(b, "text");
    } else if (type == "resource_link") {
      std::string uri = Text(b, "uri");
      text += (uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri);
    } else if (type == "resource" && b.contains("resource") && b["resource"].is_object()) {
      const json& r = b["resource"];
      std::string uri = Text(r, "uri");
      if (uri.rfind("file://", 0) == 0) uri = uri.substr(7);
      if (r.contains("text")) {
        text += "\n\n<context name=\"" + uri + "\">\n" + Text(r, "text") + "\n</context>\n";
      } else {
        text += uri;
      }
    } else {
      return Status::InvalidArgument("prompt", "content of type '" + type + "' is not taken (text and resources are)");
    }
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument("prompt", "the message is empty");
  }
  return text;
}

std::vector<std::string> AcpReplayUpdates(const std::vector<ChatMessage>& history) {
  std::vector<std::string> out;
  for (const ChatMessage& m : history) {
    if (m.role == ChatMessage::Role::kUser && !m.text.empty()) {
      out.push_back(Dump(Chunk("user_message_chunk", m.text)));
    } else if (m.role == ChatMessage::Role::kAssistant) {
      if (!m.text.empty()) out.push_back(Dump(Chunk("agent_message_chunk", m.text)));
      for (const ToolCallRequest& c : m.tool_calls) {
        out.push_back(Dump({{"sessionUpdate", "tool_call"},
                            {"toolCallId", c.id},
                            {"title", c.name},
                            {"kind", KindOf(c.name)},
                            {"status", "completed"}}));
      }
    } else if (m.role == ChatMessage::Role::kToolResults) {
      for (const ToolResultMessage& r : m.results) {
        out.push_back(Dump({{"sessionUpdate", "tool_call_update"},
                            {"toolCallId", r.call_id},
                            {"status", r.is_error ? "failed" : "completed"}}));
      }
    }
  }
  return out;
}

std::vector<AcpHunk> HunksOfDiff(const std::string& diff) {
  std::vector<AcpHunk> hunks;
  bool new_file = false;
  size_t pos = 0;
  AcpHunk* h = nullptr;
  while (pos < diff.size()) {
    size_t nl = diff.find('\n', pos);
    size_t end = nl == std::string::npos ? diff.size() : nl + 1;
    std::string_view line(diff.data() + pos, end - pos);
    pos = end;
    if (line.rfind("--- ", 0) == 0 && h == nullptr) {
      new_file = line.rfind("--- /dev/null", 0) == 0;
      continue;
    }
    if (line.rfind("+++ ", 0) == 0 && h == nullptr) continue;
    if (line.rfind("@@", 0) == 0) {
      hunks.push_back({"", "", new_file});
      h = &hunks.back();
      continue;
    }
    if (h == nullptr || line.empty()) continue;
    std::string_view body = line.substr(1);
    if (line[0] == ' ') {
      h->old_text.append(body);
      h->new_text.append(body);
    } else if (line[0] == '-') {
      h->old_text.append(body);
    } else if (line[0] == '+') {
      h->new_text.append(body);
    }
    // "\ No newline at end of file" and anything else: not a line of either.
  }
  return hunks;
}

std::vector<std::string> AcpUpdates::Of(const v1::SessionEvent& e) {
  std::vector<json> out;
  if (e.has_text_delta()) {
    if (!e.text_delta().text().empty()) out.push_back(Chunk("agent_message_chunk", e.text_delta().text()));
  } else if (e.has_tool_call_started()) {
    const v1::ToolCallStarted& s = e.tool_call_started();
    tools_[s.execution_id()] = s.tool();
    json args = ParseJson(s.arguments_json());
    if (args.is_discarded()) args = json::object();
    std::string subject = Subject(args);
    if (HandlerOf(s.tool()) == ToolHandler::kTodoWrite) out.push_back(PlanOf(args));
    json call = {{"sessionUpdate", "tool_call"},
                 {"toolCallId", s.execution_id()},
                 {"title", subject.empty() ? s.tool() : s.tool() + " " + subject},
                 {"kind", KindOf(s.tool())},
                 {"status", "in_progress"},
                 {"locations", Locations(root_, args)},
                 {"rawInput", args}};
    call["_meta"] = {{"odin", {{"tool", s.tool()}}}};
    out.push_back(call);
  } else if (e.has_approval_requested()) {
    out.push_back({{"sessionUpdate", "tool_call_update"},
                   {"toolCallId", e.approval_requested().execution_id()},
                   {"status", "pending"}});
  } else if (e.has_approval_resolved()) {
    const v1::ApprovalResolved& r = e.approval_resolved();
    if (r.answer() != "deny") {
      out.push_back(
          {{"sessionUpdate", "tool_call_update"}, {"toolCallId", r.execution_id()}, {"status", "in_progress"}});
    }
  } else if (e.has_tool_call_finished()) {
    const v1::ToolCallFinished& f = e.tool_call_finished();
    tools_.erase(f.execution_id());
    json content = json::array();
    std::string path = f.changed_paths_size() > 0 ? Absolute(root_, f.changed_paths(0)) : "";
    if (!f.diff().empty() && !path.empty()) {
      for (const AcpHunk& h : HunksOfDiff(f.diff())) {
        content.push_back({{"type", "diff"},
                           {"path", path},
                           {"oldText", h.new_file || f.created() ? json() : json(h.old_text)},
                           {"newText", h.new_text}});
      }
    }
    std::string text = f.summary();
    if (!f.validation().empty()) {
      text += "\nvalidation: " + f.validation();
      if (!f.new_diagnostics().empty()) text += "\n" + f.new_diagnostics();
    }
    content.push_back(TextContent(text));
    json locations = json::array();
    for (const std::string& p : f.changed_paths()) locations.push_back({{"path", Absolute(root_, p)}});
    json raw = {{"status", f.status()}, {"summary", f.summary()}};
    if (f.has_exit_code()) raw["exitCode"] = f.exit_code();
    if (!f.validation().empty()) {
      raw["validation"] = f.validation();
      raw["newDiagnostics"] = f.new_diagnostics();
    }
    json update = {{"sessionUpdate", "tool_call_update"},
                   {"toolCallId", f.execution_id()},
                   {"status", f.status() == "ok" ? "completed" : "failed"},
                   {"content", content},
                   {"rawOutput", raw}};
    if (!locations.empty()) update["locations"] = locations;
    out.push_back(update);
  } else if (e.has_message_finished()) {
    const v1::MessageFinished& f = e.message_finished();
    std::string tail = f.report_text();
    if (f.status() == "error" && !f.error().empty()) tail = "error: " + f.error() + (tail.empty() ? "" : "\n" + tail);
    if (!tail.empty()) out.push_back(Chunk("agent_message_chunk", "\n\n" + tail));
  } else if (e.has_session_ended()) {
    out.push_back(Chunk("agent_message_chunk", "\n\n[odin] the session ended: " + e.session_ended().reason()));
  }
  std::vector<std::string> texts;
  texts.reserve(out.size());
  for (const json& j : out) texts.push_back(Dump(j));
  return texts;
}

std::string AcpPermissionParams(const std::string& session_id, const v1::ApprovalRequested& a) {
  json options = json::array({{{"optionId", "allow_once"}, {"name", "Allow once"}, {"kind", "allow_once"}}});
  if (!a.saved_key().empty()) {
    options.push_back(
        {{"optionId", "allow_always"}, {"name", "Always allow in this workspace"}, {"kind", "allow_always"}});
  }
  options.push_back({{"optionId", "reject_once"}, {"name", "Deny"}, {"kind", "reject_once"}});
  json call = {{"toolCallId", a.execution_id()},
               {"title", a.what()},
               {"status", "pending"},
               {"content", json::array({TextContent(a.reason())})}};
  return Dump({{"sessionId", session_id}, {"toolCall", call}, {"options", options}});
}

std::string AcpApprovalAnswer(const std::string& option_id) {
  if (option_id == "allow_once") return "once";
  if (option_id == "allow_always") return "workspace";
  return "deny";
}

std::string AcpStopReason(const std::string& status) {
  if (status == "cancelled") return "cancelled";
  if (status == "budget_exceeded") return "max_turn_requests";
  return "end_turn";
}

}  // namespace odin
