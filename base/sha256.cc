#include "base/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "base/file_util.h"

namespace odin {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
    abort();  // out of memory inside OpenSSL: nothing sensible left to do
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

Sha256Digest Sha256::Finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len);
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
