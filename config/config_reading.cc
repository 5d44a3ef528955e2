#include "config/config_reading.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/tool_rules.h"

namespace odin::config_reading {
namespace {

using nlohmann::json;

// The allowed key a mistyped one most likely meant: within two edits
// (case ignored), or "".
std::string NearestKey(const std::string& key, std::initializer_list<const char*> allowed) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::string a = lower(key);
  std::string best;
  size_t best_distance = 3;
  for (const char* k : allowed) {
    std::string b = lower(k);
    // Levenshtein distance, one row at a time.
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[b.size()] < best_distance) {
      best_distance = row[b.size()];
      best = k;
    }
  }
  return best;
}

}  // namespace

template <typename T>
Status Read(const nlohmann::json& section, const std::string& path, const char* key, T* out,
            const std::string& origin) {
  auto it = section.find(key);
  if (it == section.end()) return Status::OK();
  std::string name = path + "." + key;
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return Status::InvalidArgument(origin, name + " must be true or false");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return Status::InvalidArgument(origin, name + " must be a string");
  } else {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Status::InvalidArgument(origin, name + " must be a non-negative integer");
    }
    if (it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return Status::InvalidArgument(origin, name + " is too large");
    }
  }
  *out = it->get<T>();
  return Status::OK();
}

Status ReadNumber(const json& section, const std::string& path, const char* key, double lo, double hi, double* out,
                  const std::string& origin) {
  auto it = section.find(key);
  if (it == section.end()) return Status::OK();
  if (!it->is_number() || it->get<double>() < lo || it->get<double>() > hi) {
    char range[64];
    snprintf(range, sizeof range, "%.15g to %.15g", lo, hi);
    return Status::InvalidArgument(origin, path + "." + key + " must be a number from " + range);
  }
  *out = it->get<double>();
  return Status::OK();
}

template Status Read<bool>(const json&, const std::string&, const char*, bool*, const std::string&);
template Status Read<std::string>(const json&, const std::string&, const char*, std::string*, const std::string&);
template Status Read<int>(const json&, const std::string&, const char*, int*, const std::string&);
template Status Read<int64_t>(const json&, const std::string&, const char*, int64_t*, const std::string&);
template Status Read<uint32_t>(const json&, const std::string&, const char*, uint32_t*, const std::string&);
template Status Read<uint64_t>(const json&, const std::string&, const char*, uint64_t*, const std::string&);

Status CheckKeys(const json& section, const std::string& path, std::initializer_list<const char*> allowed,
                 const std::string& origin) {
  if (!section.is_object()) return Status::InvalidArgument(origin, path + " must be an object");
  for (auto it = section.begin(); it != section.end(); ++it) {
    bool known = false;
    for (const char* k : allowed) known = known || it.key() == k;
    if (!known) {
      std::string prefix = path.empty() ? "" : path + ".";
      std::string nearest = NearestKey(it.key(), allowed);
      return Status::InvalidArgument(origin,
                                     "unknown key '" + prefix + it.key() + "'" +
                                         (nearest.empty() ? "" : " (did you mean '" + prefix + nearest + "'?)"));
    }
  }
  return Status::OK();
}

Status ParseHooks(const json& h, const std::string& origin, HooksConfig* o) {
  if (!h.is_object()) return Status::InvalidArgument(origin, "hooks must be an object");
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& key = it.key();
    if (key == "max_stop_blocks" || key == "network") continue;
    std::optional<HookEvent> event = ParseHookEvent(key);
    if (!event) {
      return Status::InvalidArgument(origin, "unknown key 'hooks." + key +
                                                 "' (events: SessionStart, UserPromptSubmit, PreToolUse, "
                                                 "PostToolUse, Stop, SubagentStop, PreCompact, SessionEnd, "
                                                 "Notification)");
    }
    const json& groups = it.value();
    std::string where = "hooks." + key;
    if (!groups.is_array()) return Status::InvalidArgument(origin, where + " must be an array");
    for (size_t g = 0; g < groups.size(); ++g) {
      std::string at = where + "[" + std::to_string(g) + "]";
      RETURN_IF_ERROR(CheckKeys(groups[g], at, {"matcher", "hooks"}, origin));
      HookGroup group;
      RETURN_IF_ERROR(Read(groups[g], at, "matcher", &group.matcher, origin));
      if (std::string err = HookMatcherError(group.matcher); !err.empty()) {
        return Status::InvalidArgument(origin, at + ".matcher: " + err);
      }
      if (!groups[g].contains("hooks") || !groups[g]["hooks"].is_array()) {
        return Status::InvalidArgument(origin, at + ".hooks must be an array");
      }
      const json& hooks = groups[g]["hooks"];
      for (size_t i = 0; i < hooks.size(); ++i) {
        std::string hat = at + ".hooks[" + std::to_string(i) + "]";
        RETURN_IF_ERROR(CheckKeys(hooks[i], hat, {"type", "command", "timeout", "sandbox", "if"}, origin));
        std::string type = "command";
        HookCommand cmd;
        RETURN_IF_ERROR(Read(hooks[i], hat, "type", &type, origin));
        if (type != "command") return Status::InvalidArgument(origin, hat + ".type: only \"command\" hooks exist");
        RETURN_IF_ERROR(Read(hooks[i], hat, "command", &cmd.command, origin));
        if (cmd.command.empty()) return Status::InvalidArgument(origin, hat + ".command must be a non-empty string");
        RETURN_IF_ERROR(Read(hooks[i], hat, "timeout", &cmd.timeout_seconds, origin));
        if (cmd.timeout_seconds < 1 || cmd.timeout_seconds > 3600) {
          return Status::InvalidArgument(origin, hat + ".timeout must be from 1 to 3600 seconds");
        }
        RETURN_IF_ERROR(Read(hooks[i], hat, "sandbox", &cmd.sandbox, origin));
        RETURN_IF_ERROR(Read(hooks[i], hat, "if", &cmd.if_rule, origin));
        std::string if_problem = cmd.if_rule.empty()              ? ""
                                 : !HookEventMatchesTools(*event) ? "only tool events have one"
                                                                  : ToolRuleProblem(cmd.if_rule);
        if (!if_problem.empty())
          return Status::InvalidArgument(origin, hat + ".if '" + cmd.if_rule + "': " + if_problem);
        cmd.source = origin;
        group.hooks.push_back(std::move(cmd));
      }
      o->events[*event].push_back(std::move(group));
    }
  }
  RETURN_IF_ERROR(Read(h, "hooks", "max_stop_blocks", &o->max_stop_blocks, origin));
  if (o->max_stop_blocks > 100) return Status::InvalidArgument(origin, "hooks.max_stop_blocks is at most 100");
  RETURN_IF_ERROR(Read(h, "hooks", "network", &o->network, origin));
  return Status::OK();
}

Status ParseAttempts(const json& root, const std::string& origin, Config* c) {
  if (root.contains("attempts")) {
    const json& x = root["attempts"];
    RETURN_IF_ERROR(CheckKeys(x, "attempts", {"count", "variants", "local", "budget"}, origin));
    if (x.contains("budget")) {
      const json& b = x["budget"];
      RETURN_IF_ERROR(CheckKeys(b, "attempts.budget", {"max_tool_calls", "max_tokens", "max_budget_usd"}, origin));
      RETURN_IF_ERROR(Read(b, "attempts.budget", "max_tool_calls", &c->attempt_budget.max_tool_calls, origin));
      RETURN_IF_ERROR(Read(b, "attempts.budget", "max_tokens", &c->attempt_budget.max_tokens, origin));
      RETURN_IF_ERROR(
          ReadNumber(b, "attempts.budget", "max_budget_usd", 0, 1e6, &c->attempt_budget.max_budget_usd, origin));
    }
    RETURN_IF_ERROR(Read(x, "attempts", "count", &c->attempts, origin));
    RETURN_IF_ERROR(Read(x, "attempts", "local", &c->attempts_local, origin));
    if (c->attempts < 1 || c->attempts > kMaxAttempts || c->attempts_local < 0 || c->attempts_local > kMaxAttempts) {
      return Status::InvalidArgument(
          origin, "attempts.count must be from 1 to " + std::to_string(kMaxAttempts) + ", attempts.local from 0");
    }
    if (x.contains("variants")) {
      const json& list = x["variants"];
      if (!list.is_array() || list.size() > static_cast<size_t>(kMaxAttempts)) {
        return Status::InvalidArgument(
            origin, "attempts.variants must be a list of at most " + std::to_string(kMaxAttempts) + " objects");
      }
      c->attempt_variants.clear();
      for (const json& v : list) {
        RETURN_IF_ERROR(CheckKeys(v, "attempts.variants[]", {"model", "hint", "temperature"}, origin));
        Config::AttemptVariant variant;
        RETURN_IF_ERROR(ReadNumber(v, "attempts.variants[]", "temperature", 0, 2, &variant.temperature, origin));
        RETURN_IF_ERROR(Read(v, "attempts.variants[]", "model", &variant.model, origin));
        RETURN_IF_ERROR(Read(v, "attempts.variants[]", "hint", &variant.hint, origin));
        c->attempt_variants.push_back(std::move(variant));
      }
    }
  }
  if (root.contains("isolation")) {
    const json& x = root["isolation"];
    RETURN_IF_ERROR(CheckKeys(x, "isolation", {"max_view_mb"}, origin));
    RETURN_IF_ERROR(Read(x, "isolation", "max_view_mb", &c->isolation_max_view_mb, origin));
    if (c->isolation_max_view_mb < 1 || c->isolation_max_view_mb > (int64_t{1} << 30)) {
      return Status::InvalidArgument(origin, "isolation.max_view_mb must be from 1 to 1073741824");
    }
  }
  return Status::OK();
}

}  // namespace odin::config_reading
