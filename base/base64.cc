#include "base/base64.h"

#include <openssl/evp.h>

#include <cctype>

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

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > (64 << 10)) return std::nullopt;
  for (char ch : text) {
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '+' && ch != '/' && ch != '=') return std::nullopt;
  }
  std::string out(text.size() / 4 * 3 + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's bytes as zeros.
  size_t pad = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && pad < 2; --i) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace odin
