#pragma once
// Secrets: recognising them in environment variable names, scrubbing them from
// the environments of sandboxed processes, and redacting them from anything the
// ledger stores.
//
// Thread-safety: a Redactor is immutable after setup; Redact() is const and safe
// to call from several threads.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace odin {

// Returns true iff an environment variable of this name holds a secret by
// convention: names ending in _KEY, _TOKEN, _SECRET, _PASSWORD, _PASSWD,
// _CREDENTIALS or _PAT (case-insensitive), or exactly one of those words.
bool IsSecretName(std::string_view name);

// Returns true iff value holds a URL with a password in its userinfo
// ("postgres://user:password@host/db", "http://u:p@proxy:3128").
bool HasUrlPassword(std::string_view value);

// Returns env ("NAME=value" entries) without the secret ones: secret names,
// values holding a URL with a password (DATABASE_URL=postgres://u:p@h, a
// proxy with credentials), and variables that grant access by themselves
// (SSH_AUTH_SOCK, GPG_AGENT_INFO).
std::vector<std::string> ScrubEnvironment(const std::vector<std::string>& env);

// The current process's environment as "NAME=value" entries.
std::vector<std::string> CurrentEnvironment();
// The same as a map, name -> value.
std::map<std::string, std::string> EnvironmentMap();

class Redactor {
 public:
  // Learns the values of the secret variables in env, and the passwords of
  // URLs in any variable's value (as written and percent-decoded). Values
  // shorter than 8 bytes are ignored: too likely to occur by chance.
  void AddSecretsFromEnvironment(const std::vector<std::string>& env);
  void AddSecret(std::string name, std::string value);

  // Returns text with every known secret value replaced by "[REDACTED:NAME]"
  // and every well-known credential pattern (sk-..., ghp_..., github_pat_...,
  // AKIA..., xox?-..., AIza..., glpat-..., "Bearer ...", PEM private key blocks,
  // the password of a URL's userinfo: "scheme://user:[REDACTED]@host")
  // replaced by "[REDACTED]". Works on arbitrary bytes.
  std::string Redact(std::string_view text) const;

 private:
  std::vector<std::pair<std::string, std::string>> secrets_;  // name, value
};

}  // namespace odin
