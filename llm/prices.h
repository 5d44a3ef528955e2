#pragma once
// What a model call used and what it cost: the tokens a provider reports,
// and prices in USD per million tokens from llm.prices.
//
// Input tokens count every token of the request, those served from the
// provider's prompt cache and those written to it included; the cache
// fields say how many of them were which, so each is priced at its own
// rate. A model without a price (nor "*") has no cost: -1, "price
// unknown", never $0.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace odin {

struct LlmUsage {
  int64_t input_tokens = 0;  // all of the request's, cached or not
  int64_t output_tokens = 0;
  int64_t cache_read_tokens = 0;   // of input_tokens: served from the prompt cache
  int64_t cache_write_tokens = 0;  // of input_tokens: written to it (Anthropic's cache_creation)
};

// USD per million tokens, by model name ("*" for any other). A cache price
// not given is the input price: what those tokens would cost uncached (more
// than a cache read costs at every provider; Anthropic's cache writes cost
// 1.25x, so give cache_write_per_mtok for it).
struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  std::optional<double> cache_read_per_mtok;
  std::optional<double> cache_write_per_mtok;
};
using PriceTable = std::map<std::string, Price>;

// Cost of a call in millionths of a dollar, or -1 when the model has no
// price.
inline int64_t CostMicroUsd(const PriceTable& prices, const std::string& model, const LlmUsage& usage) {
  auto it = prices.find(model);
  if (it == prices.end()) it = prices.find("*");
  if (it == prices.end()) return -1;
  const Price& p = it->second;
  int64_t cached = usage.cache_read_tokens + usage.cache_write_tokens;
  int64_t uncached = usage.input_tokens > cached ? usage.input_tokens - cached : 0;
  double cost = static_cast<double>(uncached) * p.input_per_mtok +
                static_cast<double>(usage.cache_read_tokens) * p.cache_read_per_mtok.value_or(p.input_per_mtok) +
                static_cast<double>(usage.cache_write_tokens) * p.cache_write_per_mtok.value_or(p.input_per_mtok) +
                static_cast<double>(usage.output_tokens) * p.output_per_mtok;
  return static_cast<int64_t>(std::llround(cost));
}

}  // namespace odin
