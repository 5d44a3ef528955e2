#include "base/ids.h"

#include <sys/random.h>

#include <cstdint>
#include <random>
#include <vector>

namespace odin {

std::string RandomHex(size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  if (getrandom(raw.data(), raw.size(), 0) != static_cast<ssize_t>(raw.size())) {
    std::random_device rd;  // getrandom cannot really fail for a few bytes; be safe anyway
    for (uint8_t& b : raw) b = static_cast<uint8_t>(rd());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string NewId(std::string_view prefix) { return std::string(prefix) + "_" + RandomHex(6); }

bool SecretsEqual(std::string_view a, std::string_view b) {
  unsigned diff = a.size() ^ b.size();
  for (size_t i = 0; i < b.size(); ++i)
    diff |= static_cast<unsigned char>(i < a.size() ? a[i] : 0) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

}  // namespace odin
