#include "base/money.h"

#include <cstdio>

namespace odin {

std::string CostText(int64_t priced_microusd, int64_t calls, int64_t unpriced_calls, int decimals) {
  if (CostUnknown(calls, unpriced_calls)) return "price unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "$%.*f", decimals, static_cast<double>(priced_microusd) / 1e6);
  std::string out = buf;
  if (unpriced_calls > 0) {
    out += " + price unknown for " + std::to_string(unpriced_calls) + " of " + std::to_string(calls) + " calls";
  }
  return out;
}

std::string CacheUseText(int64_t read_tokens, int64_t written_tokens) {
  if (read_tokens == 0 && written_tokens == 0) return "";
  return " (" + std::to_string(read_tokens) + " read from the prompt cache, " + std::to_string(written_tokens) +
         " written to it)";
}

}  // namespace odin
