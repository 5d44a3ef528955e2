#pragma once
// The host a WebFetch URL names, read strictly and without libcurl, for the
// coordinator's domain rules (which must not load libcurl at start). The
// network worker reads the same URL with libcurl (UrlHost, web_fetch.h) and
// refuses the fetch unless both read the same host: a URL two parsers
// disagree about is never fetched.

#include <string>

#include "base/status.h"

namespace odin {

// "http" or "https" (any case), "://", then a host (a name of letters,
// digits, '-', '_' and '.', or an IPv4 address, or [IPv6]) and an optional
// port of 1 to 65535. Returns the host in lower case, IPv6 without
// brackets. InvalidArgument, in one line, for anything else: another
// scheme, a user name or password, spaces, control or non-ASCII characters,
// backslashes, an empty host.
StatusOr<std::string> StrictUrlHost(const std::string& url);

}  // namespace odin
