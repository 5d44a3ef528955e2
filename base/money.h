#pragma once
// Cost as people read it. A call whose model has no price (llm.prices) has
// no cost; a total with such calls says so rather than showing their part
// as $0.

#include <cstdint>
#include <string>

namespace odin {

// "$0.0123"; with some calls unpriced, "$0.0123 + price unknown for 3 of 7
// calls"; with all of them, "price unknown". decimals: after the point.
std::string CostText(int64_t priced_microusd, int64_t calls, int64_t unpriced_calls, int decimals = 4);

// True when there were calls and none had a price: the total is unknown
// (null in JSON), not $0.
inline bool CostUnknown(int64_t calls, int64_t unpriced_calls) { return unpriced_calls > 0 && unpriced_calls >= calls; }

// " (N read from the prompt cache, M written to it)", or "" when neither.
std::string CacheUseText(int64_t read_tokens, int64_t written_tokens);

}  // namespace odin
