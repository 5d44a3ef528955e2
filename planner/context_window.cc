#include "planner/context_window.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace odin {

namespace {

// Per message: role markers and separators the wire formats add.
constexpr int64_t kMessageOverheadBytes = 16;

struct Family {
  const char* prefix;  // of the model's name, lower case
  int64_t window;
};

// Longest prefix first where one family's name starts another's.
constexpr Family kFamilies[] = {
    {"claude", 200000},       {"gpt-5", 400000},       {"gpt-4.1", 1047576}, {"gpt-4o", 128000},
    {"gpt-4-turbo", 128000},  {"gpt-4-32k", 32768},    {"gpt-4", 8192},      {"gpt-3.5-turbo", 16385},
    {"o1-mini", 128000},      {"o1", 200000},          {"o3", 200000},       {"o4-mini", 200000},
    {"codex-mini", 200000},   {"gemini", 1048576},     {"llama-3", 128000},  {"llama3", 128000},
    {"qwen2.5-coder", 32768}, {"qwen3-coder", 262144}, {"deepseek", 128000}, {"mistral-large", 128000},
    {"codestral", 256000},    {"devstral", 128000},
};

}  // namespace

int64_t DefaultContextWindow(const std::string& model) {
  std::string name = model;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  // A provider prefix ("openai/gpt-4o", "anthropic/claude-...") is not the family.
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  for (const Family& f : kFamilies) {
    if (name.rfind(f.prefix, 0) == 0) return f.window;
  }
  return kDefaultContextWindow;
}

int64_t MessageBytes(const ChatMessage& m) {
  int64_t n = kMessageOverheadBytes + static_cast<int64_t>(m.text.size());
  for (const ToolCallRequest& c : m.tool_calls) {
    n += kMessageOverheadBytes + static_cast<int64_t>(c.id.size() + c.name.size() + c.arguments_json.size());
  }
  for (const ToolResultMessage& r : m.results) {
    n += kMessageOverheadBytes + static_cast<int64_t>(r.call_id.size() + r.content.size());
  }
  for (const std::string& item : m.reasoning) n += kMessageOverheadBytes + static_cast<int64_t>(item.size());
  // An image costs the model up to about 1,600 tokens whatever its bytes
  // (both providers scale it down first): counted as that many bytes of text.
  n += static_cast<int64_t>(m.images.size()) * 1600 * 4;
  return n;
}

int64_t RequestBytes(const ChatRequest& request) {
  int64_t n = static_cast<int64_t>(request.system.size() + request.tail.size());
  for (const ChatMessage& m : request.messages) n += MessageBytes(m);
  for (const ToolSpec& t : request.tools) {
    n +=
        kMessageOverheadBytes + static_cast<int64_t>(t.name.size() + t.description.size() + t.input_schema_json.size());
  }
  return n;
}

int64_t TokenEstimator::Tokens(int64_t bytes) const {
  if (bytes <= 0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / bytes_per_token_)));
}

void TokenEstimator::Calibrate(int64_t bytes, int64_t tokens) {
  if (bytes <= 0 || tokens <= 0) return;
  double seen = std::clamp(static_cast<double>(bytes) / static_cast<double>(tokens), 1.5, 8.0);
  bytes_per_token_ = (bytes_per_token_ + seen) / 2;
}

}  // namespace odin
