#include "base/money.h"

#include <cstdio>

namespace odin {

std::string CostText(int64_t priced_microusd, int64_t calls, int64_t unpriced_calls, int decimals) {
  if (unpriced_calls > 0 && unpriced_calls >= calls) return "price unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "$%.*f", decimals, static_cast<double>(priced_microusd) / 1e6);
  std::string out = buf;
  if (unpriced_calls > 0) {
    out += " + price unknown for " + std::to_string(unpriced_calls) + " of " + std::to_string(calls) + " calls";
  }
  return out;
}

}  // namespace odin
