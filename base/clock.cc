#include "base/clock.h"

namespace odin {

int64_t RealClock::WallMillis() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

RealClock* RealClock::Get() {
  static RealClock clock;
  return &clock;
}

}  // namespace odin
