#pragma once
// The commands' network proxy as the runtime starts and keeps it
// (sandbox.network's rules; workers/net_proxy.h): odin-net-proxy in a
// sandbox of the network worker's kind (the host's network kept, nothing
// writable), serving the listening socket made inside the commands' network
// namespace, told the rules on its control socket. It ends when the control
// socket closes, and with odin (its launcher's parent-death signal).

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "config/config.h"
#include "pool/worker_sandbox.h"

namespace odin {

class CommandsProxy {
 public:
  ~CommandsProxy();
  // The control socket, which the coordinator reads (CoordinatorOptions::
  // commands_proxy_fd).
  int control_fd() const { return control_.get(); }

  // env: the proxy's environment (the workers', scrubbed of secrets).
  static StatusOr<std::unique_ptr<CommandsProxy>> Start(const WorkerSandbox& sandbox, const std::string& bin,
                                                        UniqueFd listener, const Config& config,
                                                        const std::vector<std::string>& env, int log_fd);

 private:
  CommandsProxy() = default;
  UniqueFd control_;
  // Kept while the session lasts: should the proxy die, the port stays
  // bound (connections wait and time out) rather than free for a command
  // to listen on and pose as the proxy.
  UniqueFd listener_;
  pid_t pid_ = -1;
};

}  // namespace odin
