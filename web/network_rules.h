#pragma once
// Which hosts edit mode's commands may reach through the network proxy
// (sandbox.network: {"allow": [...], "deny": [...]}): the rules, the host
// names they judge, and the judgment. The proxy (workers/net_proxy.cc)
// judges every request here before it resolves the name; what the name
// resolves to is then judged by WebFetch's address rules
// (web/address_policy.h).
//
// A rule is a host name, or "*." and a domain (any name below it, never the
// domain itself), with an optional ":port". Without a port an allow rule
// covers 80 and 443, a deny rule every port. IP addresses are never rules and never pass: a command names the
// host it wants, and the rules judge names only.
//
// Pure functions; thread-safe.

#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

// A host name as the rules compare it: lower case, one trailing dot
// dropped. InvalidArgument, in one line, for what is no host name: empty,
// an empty label, a label over 63 bytes or the whole over 253, a character
// other than letters, digits, '-' and '_', or an IP address (IsIpLiteral).
// An internationalised name is compared in its ASCII (punycode) form, the
// form clients send: rules are written so, and the proxy converts what a
// client sends otherwise first (IdnToAscii, web/idn.h; libidn2 stays out
// of odin, which links statically).
StatusOr<std::string> NormalizeHostName(const std::string& host);

// Whether host is an IPv4 or IPv6 address in any form a resolver or a
// client library reads as one: a dotted quad, a bracketed or bare IPv6
// address, a number or hex, octal and short forms (0x7f.1).
bool IsIpLiteral(const std::string& host);

struct NetworkRule {
  std::string host;  // normalised; without the "*." of a wildcard
  bool wildcard = false;
  int port = 0;      // 0: 80 and 443
  std::string text;  // as written, for the record
};

// Parses one rule. InvalidArgument, in one line, naming the rule and what
// is wrong: "*" alone, a wildcard anywhere but at the start, an IP address,
// a port out of 1..65535.
StatusOr<NetworkRule> ParseNetworkRule(const std::string& text);

struct NetworkRules {
  std::vector<NetworkRule> allow;
  std::vector<NetworkRule> deny;
};

// Parses sandbox.network's lists.
StatusOr<NetworkRules> ParseNetworkRules(const std::vector<std::string>& allow, const std::vector<std::string>& deny);

// Whether rule covers host (normalised) and port. An allow rule without a
// port covers 80 and 443; a deny rule without one, every port.
enum class RuleUse { kAllow, kDeny };
bool RuleMatches(const NetworkRule& rule, const std::string& host, int port, RuleUse use = RuleUse::kAllow);

struct NetworkVerdict {
  enum Kind { kAllowed, kDenied, kUnknown };
  Kind kind = kUnknown;
  std::string rule;  // the rule that decided, as written ("" for kUnknown)
  std::string why;   // one line for a refusal, naming the host
};

// The judgment of a request for host:port. A deny rule outranks every
// allow rule; an IP address or a name that is no host name is denied; a
// name no rule covers is kUnknown (the caller asks or refuses).
NetworkVerdict JudgeHost(const NetworkRules& rules, const std::string& host, int port);

}  // namespace odin
