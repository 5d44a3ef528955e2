#include "workspace/change_digest.h"

#include <cstdio>
#include <functional>

namespace odin {

uint64_t ChangeDigest::Token(const std::string& path, const std::string& content) {
  std::string both = path;
  both.push_back('\0');
  // Content not known: a token of its own, equal to no other.
  both += content.empty() ? "\x02unknown " + std::to_string(++unknown_) : content;
  return std::hash<std::string>{}(both)*0x9E3779B97F4A7C15ull + 1;
}

void ChangeDigest::Note(const std::string& path, const std::string& before, const std::string& after) {
  auto [it, first] = paths_.try_emplace(path);
  if (first) it->second.base = it->second.now = Token(path, before);
  // (A later change's before is what the path holds now, as far as it is
  // known here: its after is what counts.)
  uint64_t next = Token(path, after);
  sum_ += next - it->second.now;
  it->second.now = next;
}

std::string ChangeDigest::Value() const {
  if (sum_ == 0 && unknown_ == 0) return "";
  char out[48];
  snprintf(out, sizeof out, "%016llx-%llu", static_cast<unsigned long long>(sum_),
           static_cast<unsigned long long>(unknown_));
  return out;
}

}  // namespace odin
