// MCP servers' configuration end to end: odin mcp add, list and remove
// edit the user's config (checked before it is written, kept private), and
// a workspace's .mcp.json takes effect only once the workspace is trusted.

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinMcpTest : public ::testing::Test {
 protected:
  Ran Odin(const std::vector<std::string>& args) {
    return RunOdin(ws_.path(), args,
                   {{"XDG_CONFIG_HOME", user_.Join("config")}, {"XDG_STATE_HOME", user_.Join("state")}});
  }
  std::string UserConfigPath() { return user_.Join("config/odin/odinconfig.json"); }

  TempWorkspace ws_;
  TempWorkspace user_;
};

TEST_F(OdinMcpTest, AddListRemoveEditTheUsersConfig) {
  Ran added = Odin({"mcp", "add", "fs", "-e", "ROOT=/x", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  Ran http = Odin({"mcp", "add", "--transport", "http", "tracker", "--header", "Authorization: Bearer ${TOKEN:-none}",
                   "--", "https://tracker.example/mcp"});
  ASSERT_EQ(http.exit_code, 0) << http.err;
  struct stat st {};
  ASSERT_EQ(stat(UserConfigPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // headers may hold tokens
  json config = json::parse(*ReadFileToString(UserConfigPath()));
  EXPECT_EQ(config["mcpServers"]["fs"]["command"], "npx");
  EXPECT_EQ(config["mcpServers"]["fs"]["env"]["ROOT"], "/x");
  EXPECT_EQ(config["mcpServers"]["tracker"]["headers"]["Authorization"], "Bearer ${TOKEN:-none}");

  json list = json::parse(Odin({"mcp", "list", "--json"}).out);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["name"], "fs");
  EXPECT_EQ(list[0]["args"], json::array({"-y", "@modelcontextprotocol/server-filesystem"}));
  EXPECT_EQ(list[1]["url"], "https://tracker.example/mcp");

  // Bad input: one line naming the problem, a non-zero exit, nothing written.
  std::string before = *ReadFileToString(UserConfigPath());
  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{"mcp", "add", "fs", "--", "other"},
                                             {"mcp", "add", "a__b", "--", "x"},
                                             {"mcp", "add", "--transport", "http", "h", "--", "ftp://x"},
                                             {"mcp", "add", "noenv", "-e", "=x", "--", "x"},
                                             {"mcp", "remove", "nobody"}}) {
    Ran r = Odin(bad);
    EXPECT_EQ(r.exit_code, 1) << bad[2];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(*ReadFileToString(UserConfigPath()), before);

  ASSERT_EQ(Odin({"mcp", "remove", "fs"}).exit_code, 0);
  list = json::parse(Odin({"mcp", "list", "--json"}).out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["name"], "tracker");
}

TEST_F(OdinMcpTest, AWorkspacesMcpJsonCountsOnlyOnceTrusted) {
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".mcp.json"), R"({"mcpServers": {"repo": {"command": "repo-mcp"}}})").ok());
  Ran untrusted = Odin({"mcp", "list"});
  EXPECT_NE(untrusted.out.find("repo  not started: the workspace is not trusted (odin trust)"), std::string::npos)
      << untrusted.out;
  Ran trust = Odin({"trust"});
  ASSERT_EQ(trust.exit_code, 0) << trust.err;
  EXPECT_NE(trust.out.find("mcpServers.repo (.mcp.json) = {\"command\":\"repo-mcp\"}"), std::string::npos) << trust.out;
  json list = json::parse(Odin({"mcp", "list", "--json"}).out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["trusted"], true);
  EXPECT_EQ(list[0]["source"], ws_.Join(".mcp.json"));
  // Changed by a pull: untrusted again.
  ASSERT_TRUE(WriteFileAtomic(ws_.Join(".mcp.json"), R"({"mcpServers": {"repo": {"command": "other"}}})").ok());
  list = json::parse(Odin({"mcp", "list", "--json"}).out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["trusted"], false);
}

}  // namespace
}  // namespace odin::testing
