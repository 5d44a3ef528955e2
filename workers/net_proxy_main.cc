// odin-net-proxy: the commands' network proxy (workers/net_proxy.h).
// Started by odin through odin-sandbox with the host's network kept:
//   odin-net-proxy --listen-fd N --control-fd M

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "workers/net_proxy.h"

int main(int argc, char** argv) {
  int listen_fd = -1, control_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    char* end = nullptr;
    long v = strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v < 3 || v > 1 << 20) break;
    if (strcmp(argv[i], "--listen-fd") == 0) listen_fd = static_cast<int>(v);
    if (strcmp(argv[i], "--control-fd") == 0) control_fd = static_cast<int>(v);
  }
  if (listen_fd < 0 || control_fd < 0 || argc != 5) {
    fprintf(stderr, "usage: odin-net-proxy --listen-fd N --control-fd M (odin starts it)\n");
    return 2;
  }
  return odin::RunNetProxy(listen_fd, control_fd);
}
