#pragma once
// Base64 (RFC 4648, with padding), by OpenSSL: images sent to a model,
// the credentials in a proxy request.

#include <string>
#include <optional>
#include <string_view>

namespace odin {

std::string Base64Encode(std::string_view bytes);
// nullopt for what is not base64 with padding (at most 64 KiB of it).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace odin
