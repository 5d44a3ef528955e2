#include "planner/hook_payloads.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "base/json_input.h"
#include "base/version.h"
#include "planner/hooks.h"

namespace odin {

using nlohmann::json;

json StructuredPatch(const std::string& unified_diff) {
  json hunks = json::array();
  std::istringstream in(unified_diff);
  json* hunk = nullptr;
  for (std::string line; std::getline(in, line);) {
    int old_start = 0, old_lines = 1, new_start = 0, new_lines = 1;
    if (line.rfind("@@ ", 0) == 0) {
      // "@@ -a,b +c,d @@": a count of 1 may be left out.
      if (sscanf(line.c_str(), "@@ -%d,%d +%d,%d @@", &old_start, &old_lines, &new_start, &new_lines) != 4) {
        old_lines = new_lines = 1;
        if (sscanf(line.c_str(), "@@ -%d +%d,%d @@", &old_start, &new_start, &new_lines) != 3 &&
            sscanf(line.c_str(), "@@ -%d,%d +%d @@", &old_start, &old_lines, &new_start) != 3 &&
            sscanf(line.c_str(), "@@ -%d +%d @@", &old_start, &new_start) != 2) {
          hunk = nullptr;
          continue;
        }
      }
      hunks.push_back({{"oldStart", old_start},
                       {"oldLines", old_lines},
                       {"newStart", new_start},
                       {"newLines", new_lines},
                       {"lines", json::array()}});
      hunk = &hunks.back();
      continue;
    }
    if (hunk != nullptr && !line.empty() && (line[0] == ' ' || line[0] == '-' || line[0] == '+')) {
      (*hunk)["lines"].push_back(line);
    }
  }
  return hunks;
}

namespace {

// A file's text in a payload: every hook's stdin, recorded in the ledger,
// so at most kMaxPayloadText bytes, cut said.
constexpr size_t kMaxPayloadText = 64 * 1024;
std::string Capped(const std::string& text) {
  if (text.size() <= kMaxPayloadText) return text;
  return text.substr(0, kMaxPayloadText) + "\n[cut at 64 KiB of " + std::to_string(text.size()) + " bytes]";
}

std::string Str(const json& input, const char* key) {
  auto it = input.find(key);
  return it != input.end() && it->is_string() ? it->get<std::string>() : "";
}

// The lines from..from+count-1 (1-based; count 0: to the end) of text.
std::string Lines(const std::string& text, size_t from, size_t count, size_t* taken) {
  std::string out;
  *taken = 0;
  size_t line = 1, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    size_t next = end == std::string::npos ? text.size() : end + 1;
    if (line >= from && (count == 0 || *taken < count)) {
      out.append(text, start, next - start);
      ++*taken;
    }
    start = next;
    ++line;
  }
  return out;
}

}  // namespace

json HookToolResponse(const std::string& odin_tool, const json& input, const HookToolFacts& f) {
  const std::string name = HookToolName(odin_tool);
  const json in = input.is_object() ? input : json::object();
  if (name == "Bash") {
    std::string out = f.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    json response = {{"stdout", out},
                     {"stderr", ""},
                     {"interrupted", f.interrupted},
                     {"isImage", false},
                     {"noOutputExpected", false}};
    // Odin's own addition: what the command changed, as recorded.
    for (const auto& [path, change] : f.changes) response["changes"].push_back({{"path", path}, {"change", change}});
    return response;
  }
  if (f.wrote && name == "Write") {
    return {{"type", f.created ? "create" : "update"},
            {"filePath", Str(in, "file_path")},
            {"content", Capped(f.content_after)},
            {"structuredPatch", f.created ? json::array() : StructuredPatch(Capped(f.diff))},
            {"originalFile", f.created ? json(nullptr) : json(Capped(f.content_before))},
            {"userModified", false}};
  }
  if (f.wrote && name == "Edit") {
    return {{"filePath", Str(in, "file_path")},
            {"oldString", Str(in, "old_string")},
            {"newString", Str(in, "new_string")},
            {"originalFile", Capped(f.content_before)},
            {"structuredPatch", StructuredPatch(Capped(f.diff))},
            {"userModified", false},
            {"replaceAll", in.value("replace_all", false)}};
  }
  if (f.wrote && name == "MultiEdit") {
    return {{"filePath", Str(in, "file_path")},
            {"edits", in.value("edits", json::array())},
            {"originalFileContents", Capped(f.content_before)},
            {"structuredPatch", StructuredPatch(Capped(f.diff))}};
  }
  if (f.read && f.read_full && name == "Read") {
    auto count = [&in](const char* key, int64_t otherwise) {
      return in.contains(key) && in[key].is_number_integer() ? std::max<int64_t>(in[key].get<int64_t>(), 0) : otherwise;
    };
    size_t offset = static_cast<size_t>(std::max<int64_t>(count("offset", 1), 1));
    size_t limit = static_cast<size_t>(count("limit", 0));
    size_t taken = 0;
    std::string content = Lines(f.read_content, offset, limit, &taken);
    // Claude Code counts lines as its split on "\n" does: "one\n" is two.
    auto split_count = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n') + 1; };
    return {{"type", "text"},
            {"file",
             {{"filePath", Str(in, "file_path")},
              {"content", Capped(content)},
              {"numLines", split_count(content)},
              {"startLine", offset},
              {"totalLines", split_count(f.read_content)}}}};
  }
  json response = {{"status", f.status}, {"output", f.output}};
  if (f.exit_code) response["exit_code"] = *f.exit_code;
  json changes = json::array();
  for (const auto& [path, change] : f.changes) changes.push_back({{"path", path}, {"change", change}});
  if (!changes.empty()) response["changes"] = changes;
  return response;
}

std::string NewUuid() {
  std::string h = RandomHex(16);
  h[12] = '4';
  h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

json ClaudeTranscriptLine(const TranscriptContext& o, TranscriptRole role, const std::string& text,
                          const std::vector<TranscriptCall>& calls, const std::vector<TranscriptResult>& results,
                          const std::string& uuid, int64_t ms) {
  json message;
  if (role == TranscriptRole::kAssistant) {
    json content = json::array();
    if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
    for (const TranscriptCall& c : calls) {
      json args = ParseJson(c.arguments_json);
      content.push_back({{"type", "tool_use"},
                         {"id", c.id},
                         {"name", HookToolName(c.tool)},
                         {"input", args.is_object() ? HookToolInput(c.tool, args, o.workspace) : json::object()}});
    }
    message = {{"id", "msg_" + uuid.substr(0, 8)},
               {"type", "message"},
               {"role", "assistant"},
               {"model", o.model},
               {"content", std::move(content)},
               {"stop_reason", calls.empty() ? "end_turn" : "tool_use"}};
  } else if (role == TranscriptRole::kToolResults) {
    json content = json::array();
    for (const TranscriptResult& r : results) {
      content.push_back(
          {{"type", "tool_result"}, {"tool_use_id", r.call_id}, {"content", r.content}, {"is_error", r.is_error}});
    }
    message = {{"role", "user"}, {"content", std::move(content)}};
  } else {
    message = {{"role", "user"}, {"content", text}};
  }
  time_t seconds = static_cast<time_t>(ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
           utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
  return {{"parentUuid", o.parent_uuid.empty() ? json(nullptr) : json(o.parent_uuid)},
          {"isSidechain", false},
          {"userType", "external"},
          {"cwd", o.cwd},
          {"sessionId", o.session_id},
          {"version", std::string("odin-") + ODIN_VERSION},
          {"type", role == TranscriptRole::kAssistant ? "assistant" : "user"},
          {"message", std::move(message)},
          {"uuid", uuid},
          {"timestamp", stamp}};
}

}  // namespace odin
