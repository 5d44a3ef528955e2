#include "mcp/mcp_oauth.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(McpOAuthTest, PkceChallengeIsRfc7636sExample) {
  // RFC 7636, Appendix B.
  EXPECT_EQ(PkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  std::string v = NewPkceVerifier();
  EXPECT_EQ(v.size(), 64u);
  EXPECT_NE(v, NewPkceVerifier());
  EXPECT_EQ(Base64Url("\xfb\xff"), "-_8");
}

TEST(McpOAuthTest, TheCanonicalResourceIsOneSpellingOfTheServer) {
  EXPECT_EQ(*CanonicalResource("HTTPS://MCP.Example.com:443/mcp/"), "https://mcp.example.com/mcp");
  EXPECT_EQ(*CanonicalResource("http://localhost:8080/a/./b/../mcp#frag"), "http://localhost:8080/a/mcp");
  EXPECT_EQ(*CanonicalResource("https://mcp.example.com/"), "https://mcp.example.com");
  EXPECT_EQ(*CanonicalResource("https://mcp.example.com/mcp?key=secret"), "https://mcp.example.com/mcp");
  EXPECT_EQ(*CanonicalResource("http://[::1]:3000/mcp"), "http://[::1]:3000/mcp");
  // http and https are two servers.
  EXPECT_NE(*CanonicalResource("http://mcp.example.com/mcp"), *CanonicalResource("https://mcp.example.com/mcp"));
  for (const char* bad : {"https://user:pw@mcp.example.com/mcp", "ftp://mcp.example.com", "https:///mcp",
                          "https://mcp.example.com:99999/", "https://mcp.example.com/a b", "https://exa\\mple.com/",
                          "mcp.example.com/mcp", "https://ex\r\nample.com/"}) {
    EXPECT_FALSE(CanonicalResource(bad).ok()) << bad;
  }
}

TEST(McpOAuthTest, EndpointsAreHttpsOrThisMachine) {
  EXPECT_TRUE(CheckEndpoint("https://auth.example.com/token", "token_endpoint").ok());
  EXPECT_TRUE(CheckEndpoint("http://localhost:3001/token", "token_endpoint").ok());
  EXPECT_TRUE(CheckEndpoint("http://127.0.0.1:3001/token", "token_endpoint").ok());
  Status s = CheckEndpoint("http://auth.example.com/token", "token_endpoint");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("token_endpoint"), std::string::npos) << s.message();
}

TEST(McpOAuthTest, TheBearerChallengeIsReadAmongOthers) {
  BearerChallenge c = ParseWwwAuthenticate(
      R"(Basic realm="x", Bearer error="invalid_token", error_description="Missing, \"quoted\"", )"
      R"(resource_metadata="http://localhost:39111/.well-known/oauth-protected-resource/mcp", scope="mcp:tools files")");
  EXPECT_TRUE(c.bearer);
  EXPECT_EQ(c.error, "invalid_token");
  EXPECT_EQ(c.resource_metadata, "http://localhost:39111/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(c.scope, "mcp:tools files");
  // Another scheme's parameters are not the Bearer challenge's.
  BearerChallenge basic = ParseWwwAuthenticate(R"(Basic realm="x", resource_metadata="https://evil.example/")");
  EXPECT_FALSE(basic.bearer);
  EXPECT_EQ(basic.resource_metadata, "");
  EXPECT_TRUE(ParseWwwAuthenticate("Bearer").bearer);
  EXPECT_FALSE(ParseWwwAuthenticate("").bearer);
}

TEST(McpOAuthTest, MetadataIsLookedForOnTheServersOwnOrigin) {
  OAuthUrl server = *ParseOAuthUrl("https://mcp.example.com/v1/mcp");
  std::vector<std::string> urls =
      ProtectedResourceMetadataUrls(server, "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp");
  ASSERT_EQ(urls.size(), 2u);
  EXPECT_EQ(urls[0], "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp");
  EXPECT_EQ(urls[1], "https://mcp.example.com/.well-known/oauth-protected-resource");
  // A challenge that points elsewhere is not followed.
  urls = ProtectedResourceMetadataUrls(server, "https://evil.example/prm");
  EXPECT_EQ(urls[0], "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp");
  EXPECT_EQ(AuthorizationServerMetadataUrls("https://auth.example.com/tenant1"),
            (std::vector<std::string>{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                                      "https://auth.example.com/.well-known/openid-configuration/tenant1",
                                      "https://auth.example.com/tenant1/.well-known/openid-configuration"}));
  EXPECT_EQ(AuthorizationServerMetadataUrls("http://localhost:39112/"),
            (std::vector<std::string>{"http://localhost:39112/.well-known/oauth-authorization-server",
                                      "http://localhost:39112/.well-known/openid-configuration"}));
}

TEST(McpOAuthTest, TheProtectedResourceMustBeTheServer) {
  const char* server = "https://mcp.example.com/v1/mcp";
  StatusOr<ProtectedResource> pr = ParseProtectedResource(
      R"({"resource":"https://mcp.example.com/v1/mcp","authorization_servers":["https://auth.example.com"],)"
      R"("scopes_supported":["mcp:tools"]})",
      server);
  ASSERT_TRUE(pr.ok()) << pr.status().message();
  EXPECT_EQ(pr->authorization_servers[0], "https://auth.example.com");
  EXPECT_EQ(pr->scopes, std::vector<std::string>{"mcp:tools"});
  // A prefix of the server's path on its origin is the same resource.
  EXPECT_TRUE(ParseProtectedResource(
                  R"({"resource":"https://mcp.example.com/v1","authorization_servers":["https://a.example"]})", server)
                  .ok());
  // Another server's metadata, a prefix that is not a path segment, no
  // authorization server, an http one: refused.
  EXPECT_FALSE(
      ParseProtectedResource(
          R"({"resource":"https://evil.example/v1/mcp","authorization_servers":["https://a.example"]})", server)
          .ok());
  EXPECT_FALSE(ParseProtectedResource(
                   R"({"resource":"https://mcp.example.com/v","authorization_servers":["https://a.example"]})", server)
                   .ok());
  EXPECT_FALSE(ParseProtectedResource(R"({"resource":"https://mcp.example.com/v1/mcp"})", server).ok());
  EXPECT_FALSE(
      ParseProtectedResource(
          R"({"resource":"https://mcp.example.com/v1/mcp","authorization_servers":["http://a.example"]})", server)
          .ok());
  EXPECT_FALSE(ParseProtectedResource("[]", server).ok());
}

TEST(McpOAuthTest, TheAuthorizationServerMustBeTheIssuerAskedForAndSupportS256) {
  std::string good = R"({"issuer":"https://auth.example.com/","authorization_endpoint":"https://auth.example.com/a",
      "token_endpoint":"https://auth.example.com/t","registration_endpoint":"https://auth.example.com/r",
      "code_challenge_methods_supported":["plain","S256"]})";
  StatusOr<AuthorizationServer> as = ParseAuthorizationServer(good, "https://auth.example.com/");
  ASSERT_TRUE(as.ok()) << as.status().message();
  EXPECT_EQ(as->token_endpoint, "https://auth.example.com/t");
  EXPECT_EQ(as->registration_endpoint, "https://auth.example.com/r");
  EXPECT_FALSE(ParseAuthorizationServer(good, "https://other.example.com/").ok());
  std::string no_s256 = good;
  no_s256.replace(no_s256.find("\"plain\",\"S256\""), 14, "\"plain\"");
  Status s = ParseAuthorizationServer(no_s256, "https://auth.example.com/").status();
  EXPECT_NE(s.message().find("S256"), std::string::npos) << s.message();
  std::string http_token = good;
  http_token.replace(http_token.find("https://auth.example.com/t"), 26, "http://auth.example.com/t");
  EXPECT_FALSE(ParseAuthorizationServer(http_token, "https://auth.example.com/").ok());
}

TEST(McpOAuthTest, TheAuthorizationUrlCarriesEveryParameterEncoded) {
  AuthorizationServer as;
  as.authorization_endpoint = "https://auth.example.com/authorize?tenant=1";
  std::string url = AuthorizationUrl(as, {.client_id = "c 1",
                                          .redirect_uri = "http://127.0.0.1:5000/callback",
                                          .challenge = "abc",
                                          .state = "s",
                                          .resource = "https://mcp.example.com/mcp",
                                          .scope = "mcp:tools"});
  EXPECT_EQ(url,
            "https://auth.example.com/authorize?tenant=1&response_type=code&client_id=c%201&redirect_uri=http%3A%2F%2F"
            "127.0.0.1%3A5000%2Fcallback&code_challenge=abc&code_challenge_method=S256&state=s&resource=https%3A%2F%2F"
            "mcp.example.com%2Fmcp&scope=mcp%3Atools");
}

TEST(McpOAuthTest, TokenAnswersAreBearerTokensThatCannotBreakAHeader) {
  StatusOr<TokenAnswer> t = ParseTokenAnswer(
      R"({"access_token":"abc.DEF-_~+/=","token_type":"bearer","refresh_token":"r1","expires_in":3600,"scope":"x"})",
      200);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->access_token, "abc.DEF-_~+/=");
  EXPECT_EQ(t->refresh_token, "r1");
  EXPECT_EQ(t->expires_in, 3600);
  EXPECT_FALSE(ParseTokenAnswer(R"({"access_token":"a\r\nX-Evil: 1","token_type":"Bearer"})", 200).ok());
  EXPECT_FALSE(ParseTokenAnswer(R"({"access_token":"a b","token_type":"Bearer"})", 200).ok());
  EXPECT_FALSE(ParseTokenAnswer(R"({"access_token":"abc","token_type":"mac"})", 200).ok());
  Status refused =
      ParseTokenAnswer(R"({"error":"invalid_grant","error_description":"code\u001b[31m used"})", 400).status();
  EXPECT_EQ(refused.message(), "the token endpoint answered HTTP 400: invalid_grant (code?[31m used)");
}

TEST(McpOAuthTest, RegistrationAndForms) {
  EXPECT_EQ(RegistrationRequest("http://127.0.0.1:5000/callback"),
            R"({"client_name":"Odin","grant_types":["authorization_code","refresh_token"],)"
            R"("redirect_uris":["http://127.0.0.1:5000/callback"],"response_types":["code"],)"
            R"("token_endpoint_auth_method":"none"})");
  StatusOr<OAuthClient> c = ParseRegistration(R"({"client_id":"abc","client_secret":"s3"})", 201);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->client_secret, "s3");
  EXPECT_FALSE(ParseRegistration(R"({"client_id":""})", 201).ok());
  EXPECT_FALSE(ParseRegistration(R"({"error":"invalid_redirect_uri"})", 400).ok());
  EXPECT_EQ(AuthorizationCodeForm({"id", ""}, "c&d", "http://127.0.0.1:1/callback", "v", "https://m.example/mcp"),
            "grant_type=authorization_code&code=c%26d&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback&client_id=id&"
            "code_verifier=v&resource=https%3A%2F%2Fm.example%2Fmcp");
  EXPECT_EQ(RefreshForm({"id", "sec"}, "r", "https://m.example/mcp"),
            "grant_type=refresh_token&refresh_token=r&client_id=id&resource=https%3A%2F%2Fm.example%2Fmcp&"
            "client_secret=sec");
}

TEST(McpOAuthTest, TheCallbackIsReadOnlyOnItsPath) {
  OAuthCallback cb = ParseOAuthCallback("/callback?code=a%2Bb&state=xyz&extra=1", "/callback");
  EXPECT_TRUE(cb.path_matches);
  EXPECT_EQ(cb.code, "a+b");
  EXPECT_EQ(cb.state, "xyz");
  EXPECT_FALSE(ParseOAuthCallback("/favicon.ico", "/callback").path_matches);
  EXPECT_FALSE(ParseOAuthCallback("/callbackx?code=1", "/callback").path_matches);
  OAuthCallback denied = ParseOAuthCallback("/callback?error=access_denied&error_description=no+way", "/callback");
  EXPECT_EQ(denied.error, "access_denied");
  EXPECT_EQ(denied.error_description, "no way");
}

}  // namespace
}  // namespace odin
