#pragma once
// What config.cc and hook_settings.cc share to read odinconfig.json: typed
// reads with one-line errors naming the key, and unknown keys refused with
// the nearest known one. Included by config/'s own .cc files only.

#include <initializer_list>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "config/config.h"
#include "planner/hooks.h"

namespace odin::config_reading {

// Reads section.key into *out if present, checking its type: bool,
// std::string, or an integer type (int, int64_t, uint32_t, uint64_t: not
// negative, not over the type's range; config_reading.cc instantiates them).
template <typename T>
Status Read(const nlohmann::json& section, const std::string& path, const char* key, T* out, const std::string& origin);

// Reads section.key into *out if present: a number from lo to hi.
Status ReadNumber(const nlohmann::json& section, const std::string& path, const char* key, double lo, double hi,
                  double* out, const std::string& origin);

// Refuses a key of section not in allowed, naming the nearest one.
Status CheckKeys(const nlohmann::json& section, const std::string& path, std::initializer_list<const char*> allowed,
                 const std::string& origin);

// hooks: Claude Code's shape, event -> [{"matcher": "...", "hooks": [{"type":
// "command", "command": "...", "timeout": 60, "sandbox": true, "if": "Bash(git *)"}]}],
// plus max_stop_blocks and network. A file's hooks join the base's.
Status ParseHooks(const nlohmann::json& h, const std::string& origin, HooksConfig* o);

// attempts (count, local, variants) and isolation (max_view_mb), into *c.
Status ParseAttempts(const nlohmann::json& root, const std::string& origin, Config* c);

}  // namespace odin::config_reading
