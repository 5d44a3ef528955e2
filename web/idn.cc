#include "web/idn.h"

#include <idn2.h>

#include <algorithm>

namespace odin {

StatusOr<std::string> IdnToAscii(const std::string& host) {
  if (std::all_of(host.begin(), host.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; })) {
    return host;
  }
  char* ascii = nullptr;
  int rc = idn2_to_ascii_8z(host.c_str(), &ascii, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
  if (rc != IDN2_OK) {
    if (ascii != nullptr) idn2_free(ascii);
    return Status::InvalidArgument("host name", std::string("no internationalised domain name: ") + idn2_strerror(rc));
  }
  std::string out = ascii;
  idn2_free(ascii);
  return out;
}

}  // namespace odin
