#include "web/network_rules.h"

#include <algorithm>
#include <cctype>

namespace odin {
namespace {

std::string Shown(const std::string& text) {
  std::string s = text.size() > 100 ? text.substr(0, 100) + "..." : text;
  for (char& ch : s) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  }
  return s;
}

bool IsAscii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
}

}  // namespace

bool IsIpLiteral(const std::string& host) {
  if (host.empty()) return false;
  if (host.find(':') != std::string::npos || host[0] == '[') return true;
  std::string h = host;
  if (h.back() == '.') h.pop_back();
  size_t dot = h.rfind('.');
  std::string last = dot == std::string::npos ? h : h.substr(dot + 1);
  // No top-level domain starts with a digit; resolvers and client
  // libraries read such a name as an address (0x7f.1, 2130706433, 127.1).
  return !last.empty() && isdigit(static_cast<unsigned char>(last[0])) != 0;
}

StatusOr<std::string> NormalizeHostName(const std::string& host) {
  auto bad = [&host](const std::string& why) { return Status::InvalidArgument("host '" + Shown(host) + "'", why); };
  if (host.empty()) return bad("is empty");
  if (host.size() > 1024) return bad("is too long for a host name");
  if (IsIpLiteral(host)) return bad("is an IP address; commands reach named hosts only");
  std::string h = host;
  if (h.back() == '.') h.pop_back();
  if (!IsAscii(h)) return bad("is not ASCII; write an internationalised name in its punycode form (xn--...)");
  for (char& ch : h) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  if (h.size() > 253) return bad("is over 253 characters");
  size_t start = 0;
  for (;;) {
    size_t dot = h.find('.', start);
    size_t len = (dot == std::string::npos ? h.size() : dot) - start;
    if (len == 0) return bad("has an empty label");
    if (len > 63) return bad("has a label over 63 characters");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (char ch : h) {
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') {
      return bad("has a character no host name has");
    }
  }
  if (IsIpLiteral(h)) return bad("is an IP address; commands reach named hosts only");
  return h;
}

StatusOr<NetworkRule> ParseNetworkRule(const std::string& text) {
  auto bad = [&text](const std::string& why) {
    return Status::InvalidArgument("sandbox.network rule '" + Shown(text) + "'", why);
  };
  NetworkRule r;
  r.text = text;
  std::string host = text;
  if (text == "*" || text == "*.*") return bad("allows every host; sandbox.network: true says that");
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(':') == colon && host.find(']') == std::string::npos) {
    std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char ch) { return isdigit(static_cast<unsigned char>(ch)); })) {
      return bad("the port is not a number from 1 to 65535");
    }
    r.port = std::stoi(port);
    if (r.port < 1 || r.port > 65535) return bad("the port is not a number from 1 to 65535");
    host = host.substr(0, colon);
  }
  if (host.rfind("*.", 0) == 0) {
    r.wildcard = true;
    host = host.substr(2);
  }
  if (host.find('*') != std::string::npos) return bad("a wildcard is only '*.' at the start");
  if (IsIpLiteral(host)) return bad("is an IP address; rules name hosts (a request to an address is refused)");
  StatusOr<std::string> name = NormalizeHostName(host);
  if (!name.ok()) return bad(name.status().message());
  r.host = *name;
  return r;
}

StatusOr<NetworkRules> ParseNetworkRules(const std::vector<std::string>& allow, const std::vector<std::string>& deny) {
  NetworkRules rules;
  for (const std::string& a : allow) {
    ASSIGN_OR_RETURN(NetworkRule r, ParseNetworkRule(a));
    rules.allow.push_back(std::move(r));
  }
  for (const std::string& d : deny) {
    ASSIGN_OR_RETURN(NetworkRule r, ParseNetworkRule(d));
    rules.deny.push_back(std::move(r));
  }
  return rules;
}

bool RuleMatches(const NetworkRule& rule, const std::string& host, int port, RuleUse use) {
  if (rule.port != 0 && port != rule.port) return false;
  if (rule.port == 0 && use == RuleUse::kAllow && port != 80 && port != 443) return false;
  if (!rule.wildcard) return host == rule.host;
  // "*.x.com" covers "a.x.com" and "a.b.x.com"; never "x.com" or "ax.com".
  return host.size() > rule.host.size() + 1 &&
         host.compare(host.size() - rule.host.size(), rule.host.size(), rule.host) == 0 &&
         host[host.size() - rule.host.size() - 1] == '.';
}

NetworkVerdict JudgeHost(const NetworkRules& rules, const std::string& host, int port) {
  NetworkVerdict v;
  StatusOr<std::string> name = NormalizeHostName(host);
  if (!name.ok()) {
    v.kind = NetworkVerdict::kDenied;
    v.why = name.status().message();
    return v;
  }
  std::string target = *name + ":" + std::to_string(port);
  for (const NetworkRule& r : rules.deny) {
    if (RuleMatches(r, *name, port, RuleUse::kDeny)) {
      v.kind = NetworkVerdict::kDenied;
      v.rule = r.text;
      v.why = target + " is denied by sandbox.network's rule '" + r.text + "'";
      return v;
    }
  }
  for (const NetworkRule& r : rules.allow) {
    if (RuleMatches(r, *name, port)) {
      v.kind = NetworkVerdict::kAllowed;
      v.rule = r.text;
      return v;
    }
  }
  v.why = target + " is not in sandbox.network's allow list";
  return v;
}

}  // namespace odin
