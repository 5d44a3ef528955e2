#include "base/proc_info.h"

#include "base/file_util.h"

namespace odin {

std::string BootId() {
  StatusOr<std::string> id = ReadRegularFile("/proc/sys/kernel/random/boot_id", 4096);
  if (!id.ok()) return "";
  std::string s = *id;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string ProcessStartTime(int64_t pid) {
  StatusOr<std::string> stat = ReadRegularFile("/proc/" + std::to_string(pid) + "/stat", 1 << 16);
  if (!stat.ok()) return "";
  // The command name (field 2) may hold spaces and parentheses: count from
  // the last ')'.
  size_t close = stat->rfind(')');
  if (close == std::string::npos) return "";
  size_t pos = close + 2;
  // A zombie (Z) or a dead task (X) has ended, whoever has yet to reap it.
  if (pos >= stat->size() || (*stat)[pos] == 'Z' || (*stat)[pos] == 'X') return "";
  for (int field = 3; field < 22 && pos != std::string::npos; ++field) {
    pos = stat->find(' ', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return "";
  return stat->substr(pos, stat->find(' ', pos) - pos);
}

}  // namespace odin
