#include "base/ids.h"

#include <sys/random.h>

#include <cstdint>
#include <random>

namespace odin {

std::string NewId(std::string_view prefix) {
  uint8_t bytes[6];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    std::random_device rd;  // getrandom cannot really fail for 6 bytes; be safe anyway
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rd());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  id.push_back('_');
  for (uint8_t b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

}  // namespace odin
