#pragma once
// CurveKeys: the CURVE keys of the coordinator and its hosts, as
// `odin keys generate` writes them and the coordinator and `odin host` read
// them. A key directory holds:
//   coordinator.key   the coordinator's secret key (Z85, 0600)
//   coordinator.pub   its public key, for the hosts
//   hosts/NAME.key    a host's secret key (0600), for that host alone
//   hosts/NAME.pub    its public key
//   allowed_hosts     the coordinator's allow list: "PUBLIC-KEY NAME" a line
// A key file or allow list must be a regular file (a symlink counts as the
// file it leads to, as Kubernetes mounts Secrets) owned by us or root that
// no one else may change; a secret key file others may read is refused.
//
// Thread-safety: functions only.

#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/zmq_endpoint.h"

namespace odin {

// $XDG_CONFIG_HOME/odin/keys (else ~/.config/odin/keys).
std::string DefaultKeysDir();

// Makes the coordinator's pair if the directory has none, and a pair for
// each host name that has none (names: letters, digits, '.', '_', '-'),
// added to allowed_hosts. Returns one line per file written.
StatusOr<std::vector<std::string>> GenerateKeys(const std::string& dir, const std::vector<std::string>& hosts);

// A secret key file: the pair it makes.
StatusOr<CurveKeyPair> LoadKeyPair(const std::string& secret_file);
// A public key: a file holding one, or (when no such file exists) the key
// itself.
StatusOr<std::string> LoadPublicKey(const std::string& file_or_key);
// allowed_hosts: the public keys.
StatusOr<std::set<std::string>> LoadAllowedHosts(const std::string& file);

}  // namespace odin
