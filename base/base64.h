#pragma once
// Base64 (RFC 4648, with padding), by OpenSSL: images sent to a model.

#include <string>
#include <string_view>

namespace odin {

std::string Base64Encode(std::string_view bytes);

}  // namespace odin
