#include "session/mcp_oauth_client.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "llm/http_client.h"

namespace odin {
namespace {

constexpr size_t kMaxBody = 1 << 20;

struct Answer {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
};

// One request, waited for: its status, headers and up to 1 MiB of its body.
// head_only: done once the head is in (an answer that streams, such as an
// initialize answered by an SSE stream, is not waited for).
StatusOr<Answer> Send(HttpRequest req, Duration timeout, bool head_only = false) {
  HttpClient http;
  req.connect_timeout = std::min<Duration>(timeout, seconds(10));
  req.total_timeout = timeout;
  auto answer = std::make_shared<Answer>();
  auto done = std::make_shared<bool>(false);
  auto error = std::make_shared<Status>();
  HttpClient::Callbacks cb;
  cb.on_head = [answer, done, head_only](const HttpResponseHead& head) {
    answer->status = head.status;
    answer->headers = head.headers;
    if (head_only) *done = true;
  };
  cb.on_body = [answer](std::string_view data) {
    if (answer->body.size() < kMaxBody) answer->body.append(data.substr(0, kMaxBody - answer->body.size()));
  };
  cb.on_done = [answer, done, error](const Status& s, int status) {
    if (!s.ok()) *error = s;
    if (status != 0) answer->status = status;
    *done = true;
  };
  std::string url = req.url;
  HttpClient::Id id = http.Start(std::move(req), std::move(cb));
  if (!http.RunUntil([&] { return *done; }, std::chrono::steady_clock::now() + timeout)) {
    http.Cancel(id);
    return Status::DeadlineExceeded(url, "no answer in time");
  }
  if (head_only) http.Cancel(id);
  if (!error->ok()) return *error;
  return *answer;
}

StatusOr<Answer> Get(const std::string& url, Duration timeout) {
  HttpRequest req;
  req.method = "GET";
  req.url = url;
  req.headers = {"Accept: application/json"};
  return Send(std::move(req), timeout);
}

StatusOr<Answer> PostForm(const std::string& url, const std::string& form, Duration timeout) {
  HttpRequest req;
  req.url = url;
  req.headers = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json"};
  req.body = form;
  return Send(std::move(req), timeout);
}

std::string Header(const Answer& a, const std::string& name) {
  auto it = a.headers.find(name);
  return it == a.headers.end() ? "" : it->second;
}

// The authorization server's metadata, from the first of its well-known
// URLs that has it; NotFound when none does.
StatusOr<AuthorizationServer> FetchAuthorizationServer(const std::string& issuer, Duration timeout) {
  for (const std::string& url : AuthorizationServerMetadataUrls(issuer)) {
    ASSIGN_OR_RETURN(Answer a, Get(url, timeout));
    if (a.status == 200) return ParseAuthorizationServer(a.body, issuer);
  }
  return Status::NotFound(issuer, "its authorization server metadata is at none of the well-known URLs");
}

}  // namespace

StatusOr<McpOAuthDiscovery> DiscoverMcpOAuth(const std::string& url, const std::vector<std::string>& headers,
                                             const std::string& issuer, Duration timeout) {
  McpOAuthDiscovery d;
  // A token goes only where it cannot be read on the way: https, or http
  // to this machine (the default endpoints share the server's origin).
  RETURN_IF_ERROR(CheckEndpoint(url, "the server's URL"));
  ASSIGN_OR_RETURN(d.resource, CanonicalResource(url));
  ASSIGN_OR_RETURN(OAuthUrl server, ParseOAuthUrl(url));
  HttpRequest init;
  init.url = url;
  init.headers = headers;
  init.headers.push_back("Content-Type: application/json");
  init.headers.push_back("Accept: application/json, text/event-stream");
  init.body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},)"
      R"("clientInfo":{"name":"odin","version":"login"}}})";
  ASSIGN_OR_RETURN(Answer probe, Send(std::move(init), timeout, /*head_only=*/true));
  if (probe.status >= 200 && probe.status < 300) {
    d.needs_authorization = false;
    std::string session = Header(probe, "mcp-session-id");
    if (!session.empty()) {
      HttpRequest end;
      end.method = "DELETE";
      end.url = url;
      end.headers = headers;
      end.headers.push_back("Mcp-Session-Id: " + session);
      (void)Send(std::move(end), std::min<Duration>(timeout, seconds(2)));
    }
    return d;
  }
  if (probe.status != 401) {
    return Status::FailedPrecondition(
        d.resource, "answered HTTP " + std::to_string(probe.status) + " to an initialize without a token");
  }
  BearerChallenge challenge = ParseWwwAuthenticate(Header(probe, "www-authenticate"));
  if (!challenge.bearer) {
    return Status::FailedPrecondition(d.resource, "asks for an authorization other than an OAuth Bearer token");
  }
  std::optional<ProtectedResource> pr;
  for (const std::string& prm : ProtectedResourceMetadataUrls(server, challenge.resource_metadata)) {
    ASSIGN_OR_RETURN(Answer a, Get(prm, timeout));
    if (a.status != 200) continue;
    ASSIGN_OR_RETURN(ProtectedResource found, ParseProtectedResource(a.body, d.resource));
    pr = std::move(found);
    break;
  }
  if (!pr) {
    // A server of the 2025-03-26 revision: its origin is the issuer, with
    // metadata or the default endpoints.
    StatusOr<AuthorizationServer> as = FetchAuthorizationServer(server.Origin(), timeout);
    if (!as.ok() && as.status().code() != StatusCode::kNotFound) return as.status();
    d.server = as.ok() ? *as : DefaultAuthorizationServer(server);
    d.scope = challenge.scope;
    return d;
  }
  std::string chosen = pr->authorization_servers[0];
  if (!issuer.empty()) {
    auto it = std::find(pr->authorization_servers.begin(), pr->authorization_servers.end(), issuer);
    if (it == pr->authorization_servers.end()) {
      return Status::InvalidArgument(d.resource, "does not name the authorization server " + issuer);
    }
    chosen = *it;
  }
  ASSIGN_OR_RETURN(d.server, FetchAuthorizationServer(chosen, timeout));
  // The challenge's scope, else every scope the resource lists.
  d.scope = challenge.scope;
  if (d.scope.empty()) {
    for (const std::string& s : pr->scopes) d.scope += (d.scope.empty() ? "" : " ") + s;
  }
  return d;
}

StatusOr<OAuthClient> RegisterMcpClient(const AuthorizationServer& as, const std::string& redirect_uri,
                                        Duration timeout) {
  if (as.registration_endpoint.empty()) {
    return Status::FailedPrecondition(as.issuer, "offers no dynamic client registration");
  }
  HttpRequest req;
  req.url = as.registration_endpoint;
  req.headers = {"Content-Type: application/json", "Accept: application/json"};
  req.body = RegistrationRequest(redirect_uri);
  ASSIGN_OR_RETURN(Answer a, Send(std::move(req), timeout));
  return ParseRegistration(a.body, a.status);
}

StatusOr<TokenAnswer> ExchangeMcpCode(const std::string& token_endpoint, const OAuthClient& client,
                                      const std::string& code, const std::string& redirect_uri,
                                      const std::string& verifier, const std::string& resource, Duration timeout) {
  ASSIGN_OR_RETURN(Answer a, PostForm(token_endpoint,
                                      AuthorizationCodeForm(client, code, redirect_uri, verifier, resource), timeout));
  return ParseTokenAnswer(a.body, a.status);
}

StatusOr<TokenAnswer> RefreshMcpToken(const std::string& token_endpoint, const OAuthClient& client,
                                      const std::string& refresh_token, const std::string& resource, Duration timeout) {
  ASSIGN_OR_RETURN(Answer a, PostForm(token_endpoint, RefreshForm(client, refresh_token, resource), timeout));
  return ParseTokenAnswer(a.body, a.status);
}

void RevokeMcpToken(const std::string& revocation_endpoint, const OAuthClient& client, const std::string& token,
                    Duration timeout) {
  if (revocation_endpoint.empty() || !CheckEndpoint(revocation_endpoint, "revocation_endpoint").ok()) return;
  std::vector<std::pair<std::string, std::string>> f = {{"token", token}, {"client_id", client.client_id}};
  if (!client.client_secret.empty()) f.emplace_back("client_secret", client.client_secret);
  (void)PostForm(revocation_endpoint, FormEncode(f), timeout);
}

}  // namespace odin
