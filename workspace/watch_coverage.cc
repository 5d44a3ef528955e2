#include "workspace/watch_coverage.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "workspace/workspace_files.h"

namespace odin {

int64_t InotifyWatchLimit() {
  // The system's, and (since Linux 5.11) this user namespace's own, which
  // may be lower (a container's).
  long long limit = -1;
  for (const char* file : {"/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"}) {
    long long value = -1;
    if (FILE* f = fopen(file, "re")) {
      if (fscanf(f, "%lld", &value) != 1) value = -1;
      fclose(f);
    }
    if (value >= 0 && (limit < 0 || value < limit)) limit = value;
  }
  return limit;
}

WatchCoverage ProbeWatchCoverage(const std::string& root, size_t max_directories) {
  WatchCoverage out;
  out.limit = InotifyWatchLimit();
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  if (!files.ok()) return out;
  StatusOr<UniqueFd> top = files->OpenDirectory("");
  if (!top.ok()) return out;
  std::vector<std::pair<int, int>> stack{{top->release(), 0}};  // fd, depth
  while (!stack.empty()) {
    auto [fd, depth] = stack.back();
    stack.pop_back();
    ++out.directories;
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
      close(fd);
      continue;
    }
    while (dirent* e = readdir(d)) {
      const char* name = e->d_name;
      if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0) continue;
      if (depth == 0 && strcmp(name, ".odin") == 0) continue;
      if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
      if (out.directories + stack.size() >= max_directories || depth >= 256) {
        out.complete = false;
        continue;
      }
      int child = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child >= 0) {
        stack.emplace_back(child, depth + 1);
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) {
        out.complete = false;  // not counted: the answer must not say more than was seen
      }
    }
    closedir(d);
  }
  return out;
}

}  // namespace odin
