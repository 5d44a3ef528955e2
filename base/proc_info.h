#pragma once
// What /proc says of this machine and its processes.

#include <cstdint>
#include <string>

namespace odin {

// The kernel's boot id (/proc/sys/kernel/random/boot_id), "" if unreadable.
std::string BootId();

// The start time of pid (field 22 of /proc/PID/stat, in clock ticks since
// boot), "" if there is no such process or it has ended (a zombie, not yet
// reaped by its parent). With the pid it names a process
// for good: a pid comes back, a pid with its start time does not.
std::string ProcessStartTime(int64_t pid);

}  // namespace odin
