#include "base/base64.h"

#include <openssl/evp.h>

namespace odin {

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.resize(4 * ((bytes.size() + 2) / 3) + 1);
  // EVP_EncodeBlock takes an int length: encode in blocks well below it.
  constexpr size_t kBlock = 3 << 20;
  size_t written = 0;
  for (size_t at = 0; at < bytes.size(); at += kBlock) {
    size_t n = std::min(kBlock, bytes.size() - at);
    written += static_cast<size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + written),
                                                   reinterpret_cast<const unsigned char*>(bytes.data() + at),
                                                   static_cast<int>(n)));
  }
  out.resize(written);
  return out;
}

}  // namespace odin
