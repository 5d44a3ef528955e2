#include "base/secrets.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(SecretsTest, SecretNamesFollowConvention) {
  EXPECT_TRUE(IsSecretName("OPENAI_API_KEY"));
  EXPECT_TRUE(IsSecretName("GITHUB_TOKEN"));
  EXPECT_TRUE(IsSecretName("OTEL_EXPORTER_OTLP_HEADERS"));  // a collector's API key
  EXPECT_TRUE(IsSecretName("OTEL_EXPORTER_OTLP_TRACES_HEADERS"));
  EXPECT_FALSE(IsSecretName("OTEL_EXPORTER_OTLP_ENDPOINT"));
  EXPECT_TRUE(IsSecretName("aws_secret"));
  EXPECT_TRUE(IsSecretName("DB_PASSWORD"));
  EXPECT_TRUE(IsSecretName("TOKEN"));
  EXPECT_FALSE(IsSecretName("PATH"));
  EXPECT_FALSE(IsSecretName("KEYBOARD"));
  EXPECT_FALSE(IsSecretName("TOKENIZER_DIR"));
}

TEST(SecretsTest, ScrubRemovesSecretsAndAgentSockets) {
  auto env = ScrubEnvironment({"PATH=/bin", "OPENAI_API_KEY=sk-1", "SSH_AUTH_SOCK=/x", "HOME=/r"});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "HOME=/r"}));
}

TEST(SecretsTest, RedactsEnvironmentValuesByName) {
  Redactor r;
  r.AddSecretsFromEnvironment({"MY_TOKEN=hunter2hunter2", "SHORT_KEY=abc", "PATH=/usr/bin"});
  EXPECT_EQ(r.Redact("login hunter2hunter2 ok"), "login [REDACTED:MY_TOKEN] ok");
  // Short values are not learned, and non-secret variables never are.
  EXPECT_EQ(r.Redact("abc /usr/bin"), "abc /usr/bin");
}

TEST(SecretsTest, RedactsWellKnownKeyPatterns) {
  Redactor r;
  EXPECT_EQ(r.Redact("key=sk-abcdefghijklmnopqrstuvwxyz012345 end"), "key=[REDACTED] end");
  EXPECT_EQ(r.Redact("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"), "[REDACTED]");
  EXPECT_EQ(r.Redact("id AKIAABCDEFGHIJKLMNOP."), "id [REDACTED].");
  EXPECT_EQ(r.Redact("Authorization: Bearer abcdefghijklmnopqrstuvwxyz"), "Authorization: [REDACTED]");
}

TEST(SecretsTest, LeavesLookalikesAlone) {
  Redactor r;
  // "task-" contains "sk-" but does not start a token.
  std::string text = "run task-abcdefghijklmnopqrstuvwxyz now; sk-short";
  EXPECT_EQ(r.Redact(text), text);
}

TEST(SecretsTest, RedactsPemPrivateKeyBlocks) {
  Redactor r;
  std::string pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nb";
  EXPECT_EQ(r.Redact(pem), "a\n[REDACTED]\nb");
  std::string cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
  EXPECT_EQ(r.Redact(cert), cert);
}

TEST(SecretsTest, PathologicalInputStaysLinear) {
  Redactor r;
  // Every ".sk-" would rescan to the end if the search did not resume after
  // each match: 8 MiB of this must take milliseconds, not hours.
  std::string text;
  for (int i = 0; i < (8 << 20) / 4; ++i) text += ".sk-";
  std::string redacted = r.Redact(text);
  EXPECT_EQ(redacted.find("sk-"), std::string::npos);
  std::string pems;
  for (int i = 0; i < 100000; ++i) pems += "-----BEGIN RSA PRIVATE KEY-----";
  EXPECT_EQ(r.Redact(pems), "[REDACTED]");
}

TEST(SecretsTest, WorksOnBinaryBytes) {
  Redactor r;
  r.AddSecret("X_KEY", "s3cr3t-value");
  std::string data("\0\xffs3cr3t-value\0", 15);
  EXPECT_EQ(r.Redact(data), std::string("\0\xff[REDACTED:X_KEY]\0", 19));
}

TEST(SecretsTest, UrlPasswordsAreRedactedWhereverTheyAppear) {
  Redactor r;
  EXPECT_EQ(r.Redact("psql postgres://app:hunter2@db:5432/prod"), "psql postgres://app:[REDACTED]@db:5432/prod");
  EXPECT_EQ(r.Redact(R"({"url":"https://u:p@example.com"})"), R"({"url":"https://u:[REDACTED]@example.com"})");
  // A raw '@' in the password: up to the last '@' of the authority.
  EXPECT_EQ(r.Redact("redis://:p@ss@cache/0 next"), "redis://:[REDACTED]@cache/0 next");
  EXPECT_EQ(r.Redact("git+ssh://deploy:tok3n@host:22/x"), "git+ssh://deploy:[REDACTED]@host:22/x");
}

TEST(SecretsTest, UrlsWithoutAPasswordAreLeftAlone) {
  Redactor r;
  for (const char* text : {"https://example.com/a:b@c", "ssh://git@github.com:22/x", "http://[::1]:8080/",
                           "mailto:a@b.c", "see //u:p@host", "http://u:@host", "a://", "://u:p@h"}) {
    EXPECT_EQ(r.Redact(text), text);
  }
}

TEST(SecretsTest, UrlPasswordsInTheEnvironmentAreLearnedAndScrubbed) {
  std::vector<std::string> env = {"DATABASE_URL=postgres://app:correct-horse@db/prod",
                                  "http_proxy=http://me:pr%40xy-pass@proxy:3128", "HOMEPAGE=https://example.com",
                                  "PATH=/bin"};
  EXPECT_TRUE(HasUrlPassword("postgres://app:correct-horse@db/prod"));
  EXPECT_FALSE(HasUrlPassword("https://example.com"));
  EXPECT_EQ(ScrubEnvironment(env), (std::vector<std::string>{"HOMEPAGE=https://example.com", "PATH=/bin"}));
  Redactor r;
  r.AddSecretsFromEnvironment(env);
  // The password alone (a program may print it without the URL), as written and decoded.
  EXPECT_EQ(r.Redact("pw correct-horse"), "pw [REDACTED:DATABASE_URL]");
  EXPECT_EQ(r.Redact("pr@xy-pass pr%40xy-pass"), "[REDACTED:http_proxy] [REDACTED:http_proxy]");
}

TEST(SecretsTest, ManyUrlLookalikesStayLinear) {
  Redactor r;
  std::string text;
  for (int i = 0; i < (8 << 20) / 8; ++i) text += "a://u:p@";
  std::string redacted = r.Redact(text);
  EXPECT_EQ(redacted.find(":p@"), std::string::npos);
}

}  // namespace
}  // namespace odin
