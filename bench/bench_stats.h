#pragma once
// What the benchmarks print: medians, p90s and means of timed runs.

#include <algorithm>
#include <chrono>
#include <vector>

namespace odin::bench {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms = 0, p90_ms = 0, mean_ms = 0;
};

// REQUIRES: ms is not empty.
inline Stats Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)], sum / static_cast<double>(ms.size())};
}

inline double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace odin::bench
