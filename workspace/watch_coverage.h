#pragma once
// Whether inotify can watch every directory of a tree (.git and .odin
// aside), for odin doctor: what the change tracker needs to hear of changes
// made outside Odin rather than look at the whole tree for them. A walk of
// the directories only, through the safe file layer.

#include <cstddef>
#include <cstdint>
#include <string>

namespace odin {

struct WatchCoverage {
  int64_t limit = -1;      // fs.inotify.max_user_watches (-1: unknown)
  size_t directories = 0;  // to watch, counted up to max_directories
  bool complete = true;    // false: more than max_directories
};
WatchCoverage ProbeWatchCoverage(const std::string& root, size_t max_directories = 2000000);
// fs.inotify.max_user_watches, or this user namespace's own limit where it is
// lower; -1 when neither can be read.
int64_t InotifyWatchLimit();

}  // namespace odin
