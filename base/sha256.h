#pragma once
// SHA-256 over bytes (OpenSSL's libcrypto does the work).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct SHA256state_st;  // OpenSSL's SHA256_CTX

namespace odin {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental hashing, for data that arrives in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // Finishes the hash. REQUIRES: called once.
  Sha256Digest Finish();

 private:
  // OpenSSL's SHA256_CTX, kept opaque so its headers stay out of here.
  std::unique_ptr<SHA256state_st> ctx_;
};

Sha256Digest Sha256Of(std::string_view data);
// Lower-case hex, 64 characters.
std::string HexDigest(const Sha256Digest& digest);
inline std::string Sha256Hex(std::string_view data) { return HexDigest(Sha256Of(data)); }
// SHA-256 (hex) of the file's bytes, read in pieces. (Here, not in
// file_util: what uses only file_util, like odin-sandbox, then does not load
// libcrypto.)
StatusOr<std::string> Sha256HexOfFile(const std::string& path);

}  // namespace odin
