#pragma once
// odin_bench's section 13 (web_bench.cc): WebFetch through Odin against
// the same fetch in-process, and the terminal's markdown rendering.

#include "bench/bench_stats.h"

namespace odin::bench {

// calls fetches each way. print is odin_bench's line printer. False if the
// section could not run.
bool WebFigures(int calls, void (*print)(const char*, const Stats&, double));

}  // namespace odin::bench
