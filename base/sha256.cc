#include "base/sha256.h"

// The digest functions below, not EVP: EVP's first use loads the provider
// machinery and openssl.cnf, about 1.2 ms of every process that hashes
// (odin, each worker). These run the same assembly (SHA-NI where the CPU has
// it). OpenSSL 3 marks them deprecated, not removed. They come from
// libcrypto's static archive (the top-level CMakeLists.txt says why).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "base/file_util.h"

namespace odin {

Sha256::Sha256() : ctx_(std::make_unique<SHA256_CTX>()) { SHA256_Init(ctx_.get()); }

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view data) { SHA256_Update(ctx_.get(), data.data(), data.size()); }

Sha256Digest Sha256::Finish() {
  Sha256Digest out{};
  SHA256_Final(out.data(), ctx_.get());
  return out;
}

Sha256Digest Sha256Of(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.Finish();
}

std::string HexDigest(const Sha256Digest& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

StatusOr<std::string> Sha256HexOfFile(const std::string& path) {
  Sha256 hash;
  RETURN_IF_ERROR(ReadInPieces(path, [&hash](std::string_view piece) { hash.Update(piece); }));
  return HexDigest(hash.Finish());
}

}  // namespace odin
