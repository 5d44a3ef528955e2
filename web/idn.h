#pragma once
// Internationalised host names in their ASCII form (IDNA 2008, punycode),
// by libidn2: what the commands' network proxy does to a host a client
// sent in UTF-8 before the rules judge it (web/network_rules.h). Only the
// network workers link it (odin_web), shared, as libcurl.

#include <string>

#include "base/status.h"

namespace odin {

// "bücher.example" -> "xn--bcher-kva.example"; ASCII comes back as it is.
// InvalidArgument, in one line, for what IDNA 2008 refuses.
StatusOr<std::string> IdnToAscii(const std::string& host);

}  // namespace odin
