// odin host: a host agent for a coordinator on another machine; odin keys
// generate: the CURVE keys they authenticate each other with.

#include <unistd.h>

#include <iostream>

#include "base/file_util.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "remote/curve_keys.h"
#include "remote/host_agent.h"

namespace odin {

int RunKeysGenerate(const KeysFlags& f) {
  std::string dir = f.dir.empty() ? DefaultKeysDir() : f.dir;
  std::vector<std::string> hosts = f.hosts;
  if (hosts.empty()) hosts.push_back("host-1");
  StatusOr<std::vector<std::string>> wrote = GenerateKeys(dir, hosts);
  if (!wrote.ok()) {
    std::cerr << "odin keys: " << wrote.status().message() << "\n";
    return 1;
  }
  for (const std::string& line : *wrote) std::cout << "wrote " << line << "\n";
  if (wrote->empty()) std::cout << "nothing to do: every key asked for exists in " << dir << "\n";
  std::cout << "the coordinator allows the hosts listed in " << JoinPath(dir, "allowed_hosts") << "\n";
  return 0;
}

int RunHost(const GlobalFlags& g, const HostFlags& f) {
  std::string dir = f.keys.empty() ? DefaultKeysDir() : f.keys;
  HostAgentOptions o;
  o.connect = f.connect;
  if (o.connect.compare(0, 6, "tcp://") != 0) {
    std::cerr << "odin host: --connect must be tcp://HOST:PORT (hosts speak CURVE over TCP only)\n";
    return 2;
  }
  std::string key_file =
      f.key.empty() ? JoinPath(dir, "hosts/" + (f.name.empty() ? "host-1" : f.name) + ".key") : f.key;
  StatusOr<CurveKeyPair> key = LoadKeyPair(key_file);
  if (!key.ok()) {
    std::cerr << "odin host: this host's key: " << key.status().message() << "\n";
    return 2;
  }
  StatusOr<std::string> coordinator =
      LoadPublicKey(f.coordinator_key.empty() ? JoinPath(dir, "coordinator.pub") : f.coordinator_key);
  if (!coordinator.ok()) {
    std::cerr << "odin host: the coordinator's key: " << coordinator.status().message() << "\n";
    return 2;
  }
  o.key = *key;
  o.coordinator_key = *coordinator;
  o.dir = g.dir;
  o.name = f.name;
  o.max_workers = f.workers;
  o.once = f.once;
  o.sandbox = g.sandbox;
  Status installed = InstallSignalPipe();
  if (!installed.ok()) {
    std::cerr << "odin host: " << installed.message() << "\n";
    return 1;
  }
  o.stop_fd = SignalPipeFd();
  return RunHostAgent(o);
}

}  // namespace odin
