#pragma once
// McpClient: the client side of one MCP session (JSON-RPC 2.0), as a state
// machine without I/O: the caller feeds it what the server wrote (Feed) and
// sends what it queues (TakeOutput). The stdio transport frames messages as
// one JSON object per line; the streamable HTTP transport carries the same
// messages (one per POST, answers as JSON or an SSE stream), so both share
// this class.
//
// The session: initialize (protocol revision 2025-06-18, accepting a server
// that answers 2025-03-26 or 2024-11-05), notifications/initialized, then
// tools/list (following nextCursor) until the tools are known. Then tool
// calls, each with a progress token; Cancel sends notifications/cancelled.
// The server's own requests get answers: ping an empty result, roots/list
// the roots offered (the workspace; the capability is declared only when
// there are roots), anything else "method not found" (Odin offers no
// sampling).
//
// What a server sends is untrusted: every field is checked, and a message
// that is not what the protocol says is an error of the session (Failed),
// never a crash.
//
// Thread-safety: none.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tools/tool_catalog.h"  // kMcpToolPrefix

namespace odin {  // The environment variable that hands an MCP worker its server: a JSON
// object with name, command, args and env.
constexpr char kMcpServerEnv[] = "ODIN_MCP_SERVER";

// The protocol revisions Odin speaks, newest first.
extern const char* const kMcpProtocolVersions[3];

struct McpTool {
  std::string name;
  std::string description;
  std::string input_schema_json;  // the tool's JSON schema ({"type": "object"} if none)
  bool read_only = false;         // annotations.readOnlyHint
  bool destructive = true;        // annotations.destructiveHint (the protocol's default: true)
};

// A root the client offers (roots/list): a file:// URI and a name.
struct McpRoot {
  std::string uri;
  std::string name;
};

// A tool call's answer.
struct McpCallResult {
  bool is_error = false;        // the tool's own error (isError), or the session's
  std::string text;             // the text content, joined; other content types described
  std::string structured_json;  // structuredContent, if any
  std::string error;            // a JSON-RPC error or a failed session, "" otherwise
};

class McpClient {
 public:
  struct Callbacks {
    // The tools are known (after initialize and every tools/list page).
    std::function<void()> on_ready;
    // A call's progress (notifications/progress): progress, total (0 when
    // unknown) and the message.
    std::function<void(uint64_t call, double progress, double total, const std::string& message)> on_progress;
    std::function<void(uint64_t call, const McpCallResult& result)> on_result;
    // The session failed (a malformed message, an unsupported revision, an
    // error answer to initialize); nothing more will happen.
    std::function<void(const std::string& why)> on_failed;
  };

  McpClient(std::string client_name, std::string client_version, Callbacks callbacks);

  // The roots to answer roots/list with; before Start (none: the client
  // declares no roots capability).
  void OfferRoots(std::vector<McpRoot> roots) { roots_ = std::move(roots); }
  // Queues initialize.
  void Start();
  // Takes what the server wrote: complete lines are handled, a partial one
  // is kept. A line longer than max_line_bytes fails the session.
  void Feed(std::string_view bytes);
  // Handles one whole message (the HTTP transport's unit).
  void HandleMessage(const std::string& message);
  // What to send next, each message one line ending in "\n"; empties the queue.
  std::string TakeOutput();

  // Queues tools/call; returns its id. REQUIRES: ready().
  uint64_t CallTool(const std::string& name, const std::string& arguments_json);
  // notifications/cancelled for a call in flight; its result will not be
  // delivered.
  void Cancel(uint64_t call, const std::string& reason);

  bool ready() const { return ready_; }
  bool failed() const { return failed_; }
  const std::string& protocol_version() const { return protocol_version_; }
  const std::string& server_name() const { return server_name_; }
  const std::vector<McpTool>& tools() const { return tools_; }

  static constexpr size_t kMaxLineBytes = 64u << 20;

 private:
  enum class Pending { kInitialize, kToolsList, kToolCall };
  void Send(const std::string& json_line);
  void Fail(const std::string& why);
  void OnResponse(uint64_t id, const nlohmann::json& message);
  void ListTools(const std::string& cursor);

  std::string client_name_, client_version_;
  Callbacks cb_;
  std::string in_;   // a partial line
  std::string out_;  // queued lines
  uint64_t next_id_ = 1;
  std::map<uint64_t, Pending> pending_;
  bool ready_ = false;
  bool failed_ = false;
  std::string protocol_version_;
  std::string server_name_;
  std::vector<McpTool> tools_;
  std::vector<McpTool> listing_;  // tools of the tools/list pages so far
  std::vector<McpRoot> roots_;
};

}  // namespace odin
