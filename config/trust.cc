#include "config/trust.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "base/sha256.h"
#include "planner/tool_calls.h"

namespace odin {
namespace {

using nlohmann::json;

enum class Merge {
  kCombine,       // rules: added to the base's
  kProjectValue,  // the profile's check commands: the project's own (they run sandboxed)
  kLowerLimit,    // applies iff lower than the base's; 0 is no limit, never lower
  kNotHigher,     // a timeout of at least 1: applies iff not higher than the base's
};

// The base's effective value of a limit; key is the path's last key.
using CurrentValue = double (*)(const Config& c, const std::string& key);

struct AllowedKey {
  const char* path;  // dotted; a "*" key matches any one key
  Merge merge;
  CurrentValue current = nullptr;  // limits only
};

// The allowlist: everything an untrusted workspace may set. A key not listed
// here is trusted-only, including keys added to the schema later.
const AllowedKey kAllowed[] = {
    {"permissions.deny", Merge::kCombine},
    {"permissions.ask", Merge::kCombine},
    {"ForbiddenCommands", Merge::kCombine},  // the seed's name for deny
    {"checks.build", Merge::kProjectValue},
    {"checks.lint", Merge::kProjectValue},
    {"checks.tests", Merge::kProjectValue},
    {"checks.timeout_seconds", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.checks.timeout_seconds); }},
    {"checks.retry_cap", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.checks.retry_cap); }},
    {"agent.max_turns", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_turns); }},
    {"budgets.max_turns", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_turns); }},
    {"budgets.max_tool_calls", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_tool_calls); }},
    {"budgets.max_tokens", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_tokens); }},
    {"budgets.max_budget_usd", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return c.max_budget_usd; }},
    {"budgets.max_wall_seconds", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_wall_seconds); }},
    // A tool's deadline as the agent computes it (its own, else "*", else
    // ExecuteCommand's default), in seconds.
    {"budgets.tool_timeouts.*", Merge::kLowerLimit,
     [](const Config& c, const std::string& tool) {
       return std::chrono::duration<double>(ToolTimeout(c.tool_timeouts, tool, "{}")).count();
     }},
    {"sandbox.limits.processes", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.processes); }},
    {"sandbox.limits.memory_mb", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.memory_mb); }},
    {"sandbox.limits.cpu_seconds", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.cpu_seconds); }},
    {"sandbox.limits.file_size_mb", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.file_size_mb); }},
    {"sandbox.limits.open_files", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.open_files); }},
    {"sandbox.limits.address_space_mb", Merge::kLowerLimit,
     [](const Config& c, const std::string&) { return static_cast<double>(c.sandbox_limits.address_space_mb); }},
    // A validation that times out blocks (it never looks clean), so a shorter
    // timeout can only block more. settle_ms is not among them: a shorter
    // settle could take diagnostics for final before they are.
    {"commands.max_background", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.max_background); }},
    {"isolation.max_view_mb", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.isolation_max_view_mb); }},
    {"validation.start_timeout_ms", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.validation.start_timeout_ms); }},
    {"validation.file_timeout_ms", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.validation.file_timeout_ms); }},
    {"validation.check_timeout_ms", Merge::kNotHigher,
     [](const Config& c, const std::string&) { return static_cast<double>(c.validation.check_timeout_ms); }},
};

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

// Whether the pattern's first parts.size() keys match parts.
bool MatchesPrefix(const AllowedKey& a, const std::vector<std::string>& parts, bool whole) {
  std::vector<std::string> pattern = SplitPath(a.path);
  if (parts.size() > pattern.size() || (whole && parts.size() != pattern.size())) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (pattern[i] != "*" && pattern[i] != parts[i]) return false;
  }
  return true;
}

const AllowedKey* FindAllowed(const std::vector<std::string>& parts) {
  for (const AllowedKey& a : kAllowed) {
    if (MatchesPrefix(a, parts, true)) return &a;
  }
  return nullptr;
}

// Whether some allowed key lies below the object at parts.
bool LeadsToAllowed(const std::vector<std::string>& parts) {
  return std::any_of(std::begin(kAllowed), std::end(kAllowed),
                     [&](const AllowedKey& a) { return MatchesPrefix(a, parts, false); });
}

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ".") + p;
  return s;
}

// Calls on_allowed for each allowed setting and on_trusted_only for each
// trusted-only one, with its path. A trusted-only section is named key by key
// ("llm.base_url"), a map inside it as a whole ("llm.prices"); an empty object
// sets nothing.
template <typename Allowed, typename TrustedOnly>
void Walk(const json& object, std::vector<std::string>& parts, const Allowed& on_allowed,
          const TrustedOnly& on_trusted_only) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    parts.push_back(it.key());
    const json& value = it.value();
    if (value.is_object() && value.empty()) {
      // Sets nothing.
    } else if (const AllowedKey* a = FindAllowed(parts)) {
      on_allowed(parts, *a, value);
    } else if (value.is_object() && (parts.size() == 1 || LeadsToAllowed(parts))) {
      Walk(value, parts, on_allowed, on_trusted_only);
    } else {
      on_trusted_only(parts, value);
    }
    parts.pop_back();
  }
}

void Put(json* root, const std::vector<std::string>& parts, const json& value) {
  json* at = root;
  for (const std::string& p : parts) at = &(*at)[p];
  *at = value;
}

}  // namespace

bool UntrustedMaySet(const std::string& path) { return FindAllowed(SplitPath(path)) != nullptr; }

SecuritySettings TrustedOnlySettings(const std::string& workspace_json, const std::string& mcp_json,
                                     const std::vector<ExtraSettingsFile>& extra) {
  SecuritySettings s;
  json subset = json::object();
  // One file's trusted-only keys into *into, named with its label.
  auto take = [&s](const std::string& text, const std::string& label, json* into) {
    json root = ParseJson(text);
    if (!root.is_object()) return;
    std::vector<std::string> parts;
    std::vector<std::pair<std::string, std::string>> found;
    Walk(
        root, parts, [](const std::vector<std::string>&, const AllowedKey&, const json&) {},
        [&](const std::vector<std::string>& at, const json& value) {
          Put(into, at, value);
          found.emplace_back(Join(at) + (label.empty() ? "" : " (" + label + ")"), value.dump(-1, ' ', true));
        });
    std::sort(found.begin(), found.end());
    for (auto& [key, value] : found) {
      s.keys.push_back(std::move(key));
      s.values.push_back(std::move(value));
    }
  };
  take(workspace_json, "", &subset);
  // A file joins the hash only with trusted-only settings in it: one that
  // appears holding only deny rules, or nothing, keeps the trust given.
  json files = json::object();
  for (const ExtraSettingsFile& f : extra) {
    json taken = json::object();
    take(f.json, f.label, &taken);
    if (!taken.empty()) files[f.label] = std::move(taken);
  }
  if (!files.empty()) subset["(files)"] = std::move(files);
  // .mcp.json: every server trusted-only. Part of the hash only when the
  // file exists, so trust given before it existed is kept for the rest.
  json mcp = mcp_json.empty() ? json() : ParseJson(mcp_json);
  if (!mcp_json.empty() && !mcp.is_object()) subset[".mcp.json"] = Sha256Hex(mcp_json);
  if (mcp.is_object()) {
    subset[".mcp.json"] = mcp;
    if (mcp.contains("mcpServers") && mcp["mcpServers"].is_object()) {
      for (auto it = mcp["mcpServers"].begin(); it != mcp["mcpServers"].end(); ++it) {
        s.keys.push_back("mcpServers." + it.key() + " (.mcp.json)");
        s.values.push_back(it.value().dump(-1, ' ', true));
      }
    }
  }
  // nlohmann's objects keep their keys sorted: dump() is canonical. The
  // prefix versions the input: what joins it later (hooks, MCP servers)
  // changes every hash, so nothing stays trusted by accident.
  s.sha256 = Sha256Hex("odin-trust-v1\n" + subset.dump(-1, ' ', true));
  return s;
}

UntrustedSplit SplitUntrusted(const std::string& workspace_json, const Config& base) {
  json root = ParseJson(workspace_json);
  UntrustedSplit split;
  json applied = json::object();
  std::vector<std::string> parts;
  if (root.is_object()) {
    Walk(
        root, parts,
        [&](const std::vector<std::string>& at, const AllowedKey& a, const json& value) {
          if (a.merge == Merge::kCombine || a.merge == Merge::kProjectValue) {
            Put(&applied, at, value);
            return;
          }
          // ParseConfig accepted the file: limits are numbers.
          double v = value.get<double>(), now = a.current(base, at.back());
          bool tightens = a.merge == Merge::kLowerLimit ? v > 0 && (now == 0 || v < now) : v <= now;
          if (tightens)
            Put(&applied, at, value);
          else if (v != now)
            split.ignored.push_back(Join(at));
        },
        [&](const std::vector<std::string>& at, const json&) { split.ignored.push_back(Join(at)); });
  }
  std::sort(split.ignored.begin(), split.ignored.end());
  split.applied_json = applied.dump();
  return split;
}

}  // namespace odin
