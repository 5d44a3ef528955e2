#include "mcp/mcp_oauth.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/sha256.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr size_t kMaxUrl = 2048;     // an endpoint, an issuer, a resource
constexpr size_t kMaxToken = 16384;  // an access or refresh token
constexpr size_t kMaxId = 512;       // a client id, a code, a state
constexpr size_t kMaxWords = 200;    // an error's description, as shown

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What a server said, as one short line of printable ASCII.
std::string Words(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, kMaxWords)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return out;
}

// RFC 3986 §5.2.4.
std::string RemoveDotSegments(std::string_view in) {
  std::vector<std::string> out;
  size_t start = 1;  // in begins with '/'
  bool trailing = false;
  while (start <= in.size()) {
    size_t slash = in.find('/', start);
    std::string_view seg = in.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    trailing = slash == std::string_view::npos && (seg == "." || seg == "..");
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
    } else if (seg != ".") {
      out.emplace_back(seg);
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  std::string path;
  for (const std::string& s : out) path += "/" + s;
  if (trailing || path.empty()) path += "/";
  return path;
}

bool HostChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

bool IsLoopback(const std::string& host) { return host == "localhost" || host == "127.0.0.1" || host == "[::1]"; }

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A string member of j, "" when absent or not a string or longer than max.
std::string Member(const json& j, const char* name, size_t max = kMaxUrl) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return "";
  const std::string& s = it->get_ref<const std::string&>();
  return s.size() <= max ? s : "";
}

bool IsPrintableWord(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::vector<std::string> Strings(const json& j, const char* name, size_t max_items = 64) {
  std::vector<std::string> out;
  auto it = j.find(name);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (out.size() >= max_items) break;
    // Printable words only: what a server names may be shown to the user.
    if (v.is_string() && IsPrintableWord(v.get_ref<const std::string&>(), 256)) out.push_back(v);
  }
  return out;
}

std::string WithoutTrailingSlash(std::string s) {
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The printable ASCII of RFC 6750's b64token: what may follow "Bearer " in
// a header, so a token can never end the header line.
bool IsB64Token(std::string_view s) {
  if (s.empty() || s.size() > kMaxToken) return false;
  size_t eq = s.find_first_of('=');
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
              c == '/';
    if (!ok && !(c == '=' && i >= eq)) return false;
  }
  return eq == std::string_view::npos || s.find_first_not_of('=', eq) == std::string_view::npos;
}

// An OAuth error answer (RFC 6749 §5.2) as one line.
Status OAuthError(std::string_view what, const json& j, int http_status) {
  std::string error = j.is_object() ? Member(j, "error", 100) : "";
  std::string description = j.is_object() ? Member(j, "error_description", 1000) : "";
  std::string line = "the " + std::string(what) + " answered HTTP " + std::to_string(http_status);
  if (!error.empty()) line += ": " + Words(error) + (description.empty() ? "" : " (" + Words(description) + ")");
  return Status::PermissionDenied(line);
}

}  // namespace

std::string OAuthUrl::Origin() const {
  int default_port = scheme == "https" ? 443 : 80;
  return scheme + "://" + host + (port == default_port ? "" : ":" + std::to_string(port));
}

StatusOr<OAuthUrl> ParseOAuthUrl(std::string_view url) {
  auto bad = [&](const std::string& why) { return Status::InvalidArgument("the URL " + Words(url) + " " + why); };
  if (url.size() > kMaxUrl) return Status::InvalidArgument("a URL longer than 2048 bytes");
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f || c == '\\') {
      return bad("holds a space, a control or non-ASCII character or a backslash");
    }
  }
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) return bad("is not absolute");
  OAuthUrl u;
  u.scheme = Lower(url.substr(0, colon));
  if (u.scheme != "http" && u.scheme != "https") return bad("is not http or https");
  std::string_view rest = url.substr(colon + 3);
  rest = rest.substr(0, rest.find('#'));
  size_t end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) return bad("names a user");
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an unclosed IPv6 address");
    host = authority.substr(0, close + 1);
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return bad("has a bad IPv6 address");
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':') return bad("has a bad host");
    if (!after.empty()) port = after.substr(1);
  } else if (size_t c = authority.find(':'); c != std::string_view::npos) {
    host = authority.substr(0, c);
    port = authority.substr(c + 1);
  }
  if (host.empty() || host == "[]") return bad("has no host");
  if (host[0] != '[' && !std::all_of(host.begin(), host.end(), HostChar)) return bad("has a bad host");
  u.host = Lower(host);
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return bad("has a bad port");
    }
    u.port = std::stoi(std::string(port));
    if (u.port < 1 || u.port > 65535) return bad("has a bad port");
  }
  size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  if (q != std::string_view::npos) u.query = std::string(rest.substr(q + 1));
  u.path = RemoveDotSegments(path.empty() ? "/" : path);
  return u;
}

StatusOr<std::string> CanonicalResource(std::string_view url) {
  ASSIGN_OR_RETURN(OAuthUrl u, ParseOAuthUrl(url));
  // No query: a query often carries a secret, and the resource indicator
  // goes to the authorization server.
  std::string path = u.path == "/" ? "" : WithoutTrailingSlash(u.path);
  return u.Origin() + path;
}

Status CheckEndpoint(std::string_view url, std::string_view what) {
  StatusOr<OAuthUrl> u = ParseOAuthUrl(url);
  if (!u.ok()) return Status::InvalidArgument(std::string(what) + ": " + u.status().message());
  if (u->scheme == "http" && !IsLoopback(u->host)) {
    return Status::InvalidArgument(std::string(what) + " " + Words(url) + " is not https (http only to this machine)");
  }
  return Status::OK();
}

BearerChallenge ParseWwwAuthenticate(std::string_view header) {
  BearerChallenge out;
  header = header.substr(0, 8192);
  size_t i = 0;
  auto skip = [&](std::string_view chars) {
    while (i < header.size() && chars.find(header[i]) != std::string_view::npos) ++i;
  };
  auto token = [&] {
    size_t start = i;
    while (i < header.size() && header[i] != '=' && header[i] != ',' && header[i] != ' ' && header[i] != '\t') ++i;
    return header.substr(start, i - start);
  };
  bool in_bearer = false;
  while (i < header.size()) {
    skip(" \t,");
    std::string_view name = token();
    if (name.empty()) break;
    skip(" \t");
    if (i >= header.size() || header[i] != '=') {  // a scheme
      in_bearer = Lower(name) == "bearer";
      out.bearer = out.bearer || in_bearer;
      continue;
    }
    ++i;
    skip(" \t");
    std::string value;
    if (i < header.size() && header[i] == '"') {
      for (++i; i < header.size() && header[i] != '"'; ++i) {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        if (value.size() < kMaxUrl) value += header[i];
      }
      ++i;
    } else {
      value = std::string(token());
      if (value.size() > kMaxUrl) value.clear();
    }
    if (!in_bearer) continue;
    std::string key = Lower(name);
    if (key == "resource_metadata") out.resource_metadata = value;
    if (key == "scope") out.scope = Words(value);
    if (key == "error") out.error = Words(value);
  }
  return out;
}

std::vector<std::string> ProtectedResourceMetadataUrls(const OAuthUrl& server, std::string_view from_challenge) {
  std::vector<std::string> out;
  StatusOr<OAuthUrl> named = ParseOAuthUrl(from_challenge);
  if (!from_challenge.empty() && named.ok() && named->Origin() == server.Origin()) out.emplace_back(from_challenge);
  std::string base = server.Origin() + "/.well-known/oauth-protected-resource";
  for (std::string url : {server.path == "/" ? base : base + WithoutTrailingSlash(server.path), base}) {
    if (std::find(out.begin(), out.end(), url) == out.end()) out.push_back(std::move(url));
  }
  return out;
}

StatusOr<ProtectedResource> ParseProtectedResource(std::string_view body, std::string_view canonical_server) {
  json j = ParseJson(body, {.max_bytes = 1 << 20});
  if (!j.is_object()) return Status::InvalidArgument("the protected resource metadata is not a JSON object");
  ProtectedResource pr;
  StatusOr<std::string> resource = CanonicalResource(Member(j, "resource"));
  if (!resource.ok()) return Status::InvalidArgument("the protected resource metadata names no valid resource");
  std::string server(canonical_server);
  StatusOr<OAuthUrl> a = ParseOAuthUrl(*resource), b = ParseOAuthUrl(server);
  bool same = *resource == server || (a.ok() && b.ok() && a->Origin() == b->Origin() &&
                                      (a->path == "/" || server.rfind(*resource + "/", 0) == 0));
  if (!same) {
    return Status::PermissionDenied("the protected resource metadata is for " + Words(*resource) + ", not " +
                                    Words(server));
  }
  pr.resource = *resource;
  for (const std::string& as : Strings(j, "authorization_servers")) {
    if (CheckEndpoint(as, "authorization server").ok()) pr.authorization_servers.push_back(as);
  }
  if (pr.authorization_servers.empty()) {
    return Status::InvalidArgument("the protected resource metadata names no usable authorization server");
  }
  pr.scopes = Strings(j, "scopes_supported");
  return pr;
}

std::vector<std::string> AuthorizationServerMetadataUrls(std::string_view issuer) {
  StatusOr<OAuthUrl> u = ParseOAuthUrl(issuer);
  if (!u.ok()) return {};
  std::string path = u->path == "/" ? "" : WithoutTrailingSlash(u->path);
  std::vector<std::string> out = {u->Origin() + "/.well-known/oauth-authorization-server" + path,
                                  u->Origin() + "/.well-known/openid-configuration" + path};
  if (!path.empty()) out.push_back(u->Origin() + path + "/.well-known/openid-configuration");
  return out;
}

StatusOr<AuthorizationServer> ParseAuthorizationServer(std::string_view body, std::string_view issuer) {
  json j = ParseJson(body, {.max_bytes = 1 << 20});
  if (!j.is_object()) return Status::InvalidArgument("the authorization server's metadata is not a JSON object");
  AuthorizationServer as;
  as.issuer = Member(j, "issuer");
  if (WithoutTrailingSlash(as.issuer) != WithoutTrailingSlash(std::string(issuer))) {
    return Status::PermissionDenied("the authorization server's metadata names the issuer " + Words(as.issuer) +
                                    ", not " + Words(issuer));
  }
  std::vector<std::string> methods = Strings(j, "code_challenge_methods_supported");
  if (std::find(methods.begin(), methods.end(), "S256") == methods.end()) {
    return Status::FailedPrecondition("the authorization server " + Words(issuer) +
                                      " does not say it supports PKCE with S256");
  }
  as.authorization_endpoint = Member(j, "authorization_endpoint");
  as.token_endpoint = Member(j, "token_endpoint");
  as.registration_endpoint = Member(j, "registration_endpoint");
  as.revocation_endpoint = Member(j, "revocation_endpoint");
  RETURN_IF_ERROR(CheckEndpoint(as.authorization_endpoint, "authorization_endpoint"));
  RETURN_IF_ERROR(CheckEndpoint(as.token_endpoint, "token_endpoint"));
  if (!as.registration_endpoint.empty())
    RETURN_IF_ERROR(CheckEndpoint(as.registration_endpoint, "registration_endpoint"));
  if (!as.revocation_endpoint.empty()) RETURN_IF_ERROR(CheckEndpoint(as.revocation_endpoint, "revocation_endpoint"));
  as.scopes = Strings(j, "scopes_supported");
  return as;
}

AuthorizationServer DefaultAuthorizationServer(const OAuthUrl& server) {
  AuthorizationServer as;
  as.issuer = server.Origin();
  as.authorization_endpoint = as.issuer + "/authorize";
  as.token_endpoint = as.issuer + "/token";
  as.registration_endpoint = as.issuer + "/register";
  return as;
}

std::string Base64Url(std::string_view bytes) {
  std::string s = Base64Encode(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

std::string PkceChallenge(std::string_view verifier) {
  Sha256Digest d = Sha256Of(verifier);
  return Base64Url(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

std::string NewPkceVerifier() { return RandomHex(32); }

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    for (const std::string* s : {&k, &v}) {
      for (unsigned char c : *s) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
          out += static_cast<char>(c);
        } else {
          out += '%';
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
      }
      if (s == &k) out += '=';
    }
  }
  return out;
}

std::string AuthorizationUrl(const AuthorizationServer& as, const AuthorizationRequest& r) {
  std::vector<std::pair<std::string, std::string>> q = {
      {"response_type", "code"},       {"client_id", r.client_id},        {"redirect_uri", r.redirect_uri},
      {"code_challenge", r.challenge}, {"code_challenge_method", "S256"}, {"state", r.state},
      {"resource", r.resource}};
  if (!r.scope.empty()) q.emplace_back("scope", r.scope);
  const std::string& e = as.authorization_endpoint;
  return e + (e.find('?') == std::string::npos ? "?" : "&") + FormEncode(q);
}

std::string RegistrationRequest(std::string_view redirect_uri) {
  return json({{"client_name", "Odin"},
               {"redirect_uris", {std::string(redirect_uri)}},
               {"grant_types", {"authorization_code", "refresh_token"}},
               {"response_types", {"code"}},
               {"token_endpoint_auth_method", "none"}})
      .dump();
}

StatusOr<OAuthClient> ParseRegistration(std::string_view body, int http_status) {
  json j = ParseJson(body, {.max_bytes = 1 << 20});
  if (http_status != 200 && http_status != 201) return OAuthError("registration endpoint", j, http_status);
  OAuthClient c;
  c.client_id = j.is_object() ? Member(j, "client_id", kMaxId) : "";
  c.client_secret = j.is_object() ? Member(j, "client_secret", kMaxToken) : "";
  if (!IsPrintableWord(c.client_id, kMaxId)) {
    return Status::InvalidArgument("the registration endpoint's answer has no usable client_id");
  }
  if (!c.client_secret.empty() && !IsPrintableWord(c.client_secret, kMaxToken)) c.client_secret.clear();
  return c;
}

std::string AuthorizationCodeForm(const OAuthClient& client, std::string_view code, std::string_view redirect_uri,
                                  std::string_view verifier, std::string_view resource) {
  std::vector<std::pair<std::string, std::string>> f = {
      {"grant_type", "authorization_code"},        {"code", std::string(code)},
      {"redirect_uri", std::string(redirect_uri)}, {"client_id", client.client_id},
      {"code_verifier", std::string(verifier)},    {"resource", std::string(resource)}};
  if (!client.client_secret.empty()) f.emplace_back("client_secret", client.client_secret);
  return FormEncode(f);
}

std::string RefreshForm(const OAuthClient& client, std::string_view refresh_token, std::string_view resource) {
  std::vector<std::pair<std::string, std::string>> f = {{"grant_type", "refresh_token"},
                                                        {"refresh_token", std::string(refresh_token)},
                                                        {"client_id", client.client_id},
                                                        {"resource", std::string(resource)}};
  if (!client.client_secret.empty()) f.emplace_back("client_secret", client.client_secret);
  return FormEncode(f);
}

StatusOr<TokenAnswer> ParseTokenAnswer(std::string_view body, int http_status) {
  json j = ParseJson(body, {.max_bytes = 1 << 20});
  if (http_status != 200) return OAuthError("token endpoint", j, http_status);
  if (!j.is_object()) return Status::InvalidArgument("the token endpoint's answer is not a JSON object");
  if (Lower(Member(j, "token_type", 32)) != "bearer") {
    return Status::InvalidArgument("the token endpoint's answer is not a Bearer token");
  }
  TokenAnswer t;
  t.access_token = Member(j, "access_token", kMaxToken);
  if (!IsB64Token(t.access_token)) {
    return Status::InvalidArgument("the token endpoint's answer has no usable access_token");
  }
  t.refresh_token = Member(j, "refresh_token", kMaxToken);
  if (!t.refresh_token.empty() && !IsPrintableWord(t.refresh_token, kMaxToken)) t.refresh_token.clear();
  t.scope = Words(Member(j, "scope", 1000));
  auto e = j.find("expires_in");
  if (e != j.end() && e->is_number_integer() && e->get<int64_t>() > 0) {
    t.expires_in = std::min<int64_t>(e->get<int64_t>(), int64_t{10} * 365 * 24 * 3600);
  }
  return t;
}

OAuthCallback ParseOAuthCallback(std::string_view target, std::string_view path) {
  OAuthCallback cb;
  size_t q = target.find('?');
  cb.path_matches = target.substr(0, q) == path;
  if (!cb.path_matches || q == std::string_view::npos) return cb;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key = PercentDecode(pair.substr(0, eq)), value = PercentDecode(pair.substr(eq + 1));
    if (value.size() > kMaxToken) continue;
    if (key == "code") cb.code = value;
    if (key == "state") cb.state = value;
    if (key == "error") cb.error = Words(value);
    if (key == "error_description") cb.error_description = Words(value);
  }
  return cb;
}

}  // namespace odin
