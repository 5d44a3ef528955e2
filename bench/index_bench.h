#pragma once
// odin_bench's section 14 (index_bench.cc): the symbol index's full build,
// incremental update and query latency.

#include <cstdint>

#include "bench/bench_stats.h"

namespace odin::bench {

// lines: the generated tree's size; queries: calls of each query tool.
// print is odin_bench's line printer. False if the section could not run.
bool IndexFigures(int64_t lines, int queries, void (*print)(const char*, const Stats&, double));

}  // namespace odin::bench
