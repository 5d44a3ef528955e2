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

}  // namespace odin
