#include "coordinator/mcp_servers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

using nlohmann::json;

class McpServersTest : public ::testing::Test {
 protected:
  struct Listing {
    std::string id, arguments, lane;
    WorkerPolicy policy;
    Duration timeout;
    std::function<void(const v1::ToolResult&)> done;
  };

  McpServers Make(std::vector<McpServerSpec> specs, CallMode mode = CallMode::kEdit) {
    McpServers::Port port;
    port.list = [this](const std::string& id, const std::string& arguments, WorkerPolicy policy,
                       const std::string& lane, Duration timeout, std::function<void(const v1::ToolResult&)> done) {
      listings_.push_back({id, arguments, lane, policy, timeout, std::move(done)});
    };
    port.resume = [this](const std::string& id) { resumed_.push_back(id); };
    port.news = [this](const McpRegistry::Server& s) {
      news_.push_back(s.spec.name + ":" + McpRegistry::StateName(s.state));
    };
    return McpServers(std::move(specs), mode, std::move(port));
  }
  static McpServerSpec Spec(const std::string& name, bool writable = false, bool sandbox = true) {
    McpServerSpec s;
    s.name = name;
    s.command = "server";
    s.writable = writable;
    s.sandbox = sandbox;
    s.timeout_seconds = 30;
    s.startup_timeout_seconds = 5;
    return s;
  }
  static v1::ToolResult Listed(const std::vector<std::string>& tools) {
    v1::ToolResult r;
    r.set_status(v1::TOOL_STATUS_OK);
    json list = json::array();
    for (const std::string& t : tools) list.push_back({{"name", t}, {"inputSchema", {{"type", "object"}}}});
    r.set_output_json(json({{"tools", list}}).dump());
    return r;
  }

  std::vector<Listing> listings_;
  std::vector<std::string> resumed_, news_;
};

TEST_F(McpServersTest, EachServerIsListedInAWorkerOfItsOwnAndItsCallsWaitUntilThen) {
  McpServers mcp = Make({Spec("fs", /*writable=*/true), Spec("web")});
  mcp.Start();
  ASSERT_EQ(listings_.size(), 2u);
  EXPECT_EQ(listings_[0].lane, "fs");
  EXPECT_EQ(listings_[0].policy, WorkerPolicy::kMcpWritable);
  EXPECT_EQ(listings_[1].policy, WorkerPolicy::kMcpReadonly);
  EXPECT_EQ(listings_[0].timeout, seconds(5));
  EXPECT_EQ(json::parse(listings_[0].arguments)["server"], "fs");
  EXPECT_EQ(mcp.registry().servers()[0].start_execution, listings_[0].id);

  EXPECT_TRUE(mcp.Wait("fs", "ex_1"));
  EXPECT_TRUE(mcp.Wait("fs", "ex_2"));
  EXPECT_TRUE(mcp.Wait("web", "ex_3"));
  EXPECT_FALSE(mcp.Wait("nobody", "ex_4"));  // the gates refuse it
  EXPECT_FALSE(mcp.Wait("", "ex_5"));        // no server's call
  EXPECT_TRUE(mcp.Wait(McpServers::kEveryServer, "ex_all"));
  mcp.Forget("fs", "ex_2");  // cancelled while it waited

  listings_[0].done(Listed({"read", "write"}));
  EXPECT_EQ(resumed_, std::vector<std::string>{"ex_1"});
  EXPECT_EQ(news_, std::vector<std::string>{"fs:ready"});
  EXPECT_FALSE(mcp.Wait("fs", "ex_6"));  // listed: judged at once

  v1::ToolResult timed_out;
  timed_out.set_status(v1::TOOL_STATUS_TIMED_OUT);
  listings_[1].done(timed_out);
  // ex_3 to be refused by the gates; ex_all once no server is starting.
  EXPECT_EQ(resumed_, (std::vector<std::string>{"ex_1", "ex_3", "ex_all"}));
  EXPECT_NE(mcp.registry().servers()[1].error.find("did not start and list its tools in time"), std::string::npos)
      << mcp.registry().servers()[1].error;
}

TEST_F(McpServersTest, ACallsRouteIsItsServersWorkerAndTimeout) {
  McpServers mcp = Make({Spec("fs", /*writable=*/true), Spec("host", false, /*sandbox=*/false)});
  StatusOr<McpServers::Route> edit = mcp.RouteOf("fs", CallMode::kEdit);
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->policy, WorkerPolicy::kMcpWritable);
  EXPECT_EQ(edit->lane, "fs");
  EXPECT_EQ(edit->timeout, seconds(30));
  // A writable server's tools read only in ask mode.
  EXPECT_EQ(mcp.RouteOf("fs", CallMode::kAsk)->policy, WorkerPolicy::kMcpReadonly);
  EXPECT_EQ(mcp.RouteOf("host", CallMode::kEdit)->policy, WorkerPolicy::kMcpHost);
  EXPECT_EQ(mcp.RouteOf("nobody", CallMode::kEdit).status().code(), StatusCode::kNotFound);
}

// A call's server: the tool's prefix, or the server a resource read names.
TEST_F(McpServersTest, ACallsServerIsItsToolsOrTheOneItsReadNames) {
  nlohmann::json read = {{"server", "docs"}, {"uri", "demo://x"}};
  EXPECT_EQ(McpServers::ServerOf("mcp__fs__write", nullptr), "fs");
  EXPECT_EQ(McpServers::ServerOf(kReadMcpResourceTool, &read), "docs");
  nlohmann::json unnamed = {{"uri", "demo://x"}};
  EXPECT_EQ(McpServers::ServerOf(kReadMcpResourceTool, &unnamed), "");
  EXPECT_EQ(McpServers::ServerOf("Read", &read), "");
  EXPECT_EQ(McpServers::ServerOf(kListMcpResourcesTool, &read), "docs");
  EXPECT_EQ(McpServers::ServerOf(kListMcpResourcesTool, &unnamed), McpServers::kEveryServer);
}

}  // namespace
}  // namespace odin
