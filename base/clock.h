#pragma once
// Clock: the one source of time for logic that has deadlines (heartbeats,
// request deadlines, budgets, stall windows). Real code gets RealClock; tests
// get FakeClock and step it across boundaries.
//
// Thread-safety: RealClock is thread-safe; FakeClock is not.

#include <chrono>
#include <cstdint>

namespace odin {

using SteadyTime = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for deadlines and durations.
  virtual SteadyTime Now() = 0;
  // Wall-clock time in milliseconds since the Unix epoch, for records.
  virtual int64_t WallMillis() = 0;
};

class RealClock final : public Clock {
 public:
  SteadyTime Now() override { return std::chrono::steady_clock::now(); }
  int64_t WallMillis() override;
  // A process-wide instance.
  static RealClock* Get();
};

class FakeClock final : public Clock {
 public:
  SteadyTime Now() override { return now_; }
  int64_t WallMillis() override {
    return wall_base_ms_ + std::chrono::duration_cast<milliseconds>(now_.time_since_epoch()).count();
  }
  void Advance(Duration d) { now_ += d; }

 private:
  SteadyTime now_{seconds(1000)};
  int64_t wall_base_ms_ = 1'700'000'000'000;
};

// Milliseconds in d, rounded toward zero.
inline int64_t ToMillis(Duration d) { return std::chrono::duration_cast<milliseconds>(d).count(); }

}  // namespace odin
