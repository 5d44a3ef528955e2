#include "coordinator/change_numbers.h"

namespace odin {

namespace {

bool After(const std::map<std::string, uint64_t>& numbers, const std::string& key, uint64_t start) {
  auto at = numbers.find(key);
  return at != numbers.end() && at->second > start;
}

}  // namespace

bool ChangeNumbers::PathSince(const std::string& rel, uint64_t start) const { return After(paths_, rel, start); }

bool ChangeNumbers::ChangedSince(const std::string& rel, uint64_t start) const {
  if (After(paths_, rel, start)) return true;
  // Below a tree that landed whole since.
  for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
    if (After(trees_, rel.substr(0, slash), start)) return true;
  }
  for (const auto& [dir, number] : ignored_dirs_) {
    if (number <= start) continue;
    if (rel == dir || (rel.size() > dir.size() && rel.compare(0, dir.size(), dir) == 0 && rel[dir.size()] == '/')) {
      return true;
    }
  }
  return false;
}

void ChangeNumbers::ForgetUpTo(uint64_t oldest, size_t many) {
  if (size() < many) return;
  for (std::map<std::string, uint64_t>* numbers : {&paths_, &ignored_dirs_, &trees_}) {
    std::erase_if(*numbers, [oldest](const auto& entry) { return entry.second <= oldest; });
  }
}

}  // namespace odin
