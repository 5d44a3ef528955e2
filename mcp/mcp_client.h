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
// tools/list, and for a server that declares resources resources/list and
// resources/templates/list (each following nextCursor, for at most
// kMaxPages pages and kMaxItems items), until all are known. Then tool
// calls, each with a progress token, and resource reads; Cancel sends
// notifications/cancelled.
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

// A resource a server lists, and a template of resources it can read.
struct McpResource {
  std::string uri;
  std::string name;
  std::string description;
  std::string mime_type;
  int64_t size = -1;  // bytes, -1 if not said
};
struct McpResourceTemplate {
  std::string uri_template;
  std::string name;
  std::string description;
  std::string mime_type;
};

// A prompt a server lists, and its arguments.
struct McpPromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};
struct McpPrompt {
  std::string name;
  std::string description;
  std::vector<McpPromptArgument> arguments;
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
    // The tools (and resources) are known: after initialize and the first
    // listing's pages.
    std::function<void()> on_ready;
    // A call's progress (notifications/progress): progress, total (0 when
    // unknown) and the message.
    std::function<void(uint64_t call, double progress, double total, const std::string& message)> on_progress;
    std::function<void(uint64_t call, const McpCallResult& result)> on_result;
    // The session failed (a malformed message, an unsupported revision, an
    // error answer to initialize); nothing more will happen.
    std::function<void(const std::string& why)> on_failed;
    // The server asks the user something (elicitation/create): answer with
    // AnswerRequest(request_id_json, ...). Unset: the client declines.
    std::function<void(const std::string& request_id_json, const std::string& message,
                       const std::string& requested_schema_json)>
        on_elicitation;
    // A later listing, after the server said its list changed (coalesced:
    // notifications during a listing make one more), is in.
    std::function<void()> on_listing_changed;
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
  // Queues resources/read; returns its id, answered like a call: the
  // contents as text, each part in a <resource> element (a blob of text in
  // UTF-8 decoded, any other blob described). REQUIRES: ready().
  uint64_t ReadResource(const std::string& uri);
  // Queues prompts/get with the arguments (a JSON object of strings);
  // returns its id, answered like a call: the prompt's messages as text
  // (an assistant's turn marked, an embedded resource as a read shows it).
  // REQUIRES: ready().
  uint64_t GetPrompt(const std::string& name, const std::string& arguments_json);
  // Answers a request of the server's (its id as on_elicitation gave it)
  // with result, a JSON object.
  void AnswerRequest(const std::string& request_id_json, const std::string& result_json);
  // notifications/cancelled for a call in flight; its result will not be
  // delivered.
  void Cancel(uint64_t call, const std::string& reason);

  bool ready() const { return ready_; }
  bool failed() const { return failed_; }
  const std::string& protocol_version() const { return protocol_version_; }
  const std::string& server_name() const { return server_name_; }
  const std::vector<McpTool>& tools() const { return tools_; }
  // Whether the server declared resources, and what it listed.
  bool offers_resources() const { return offers_resources_; }
  const std::vector<McpResource>& resources() const { return resources_; }
  const std::vector<McpResourceTemplate>& resource_templates() const { return templates_; }
  bool offers_prompts() const { return offers_prompts_; }
  const std::vector<McpPrompt>& prompts() const { return prompts_; }

  static constexpr size_t kMaxLineBytes = 64u << 20;
  // A listing's bounds: a server that pages on for ever is cut off here.
  static constexpr int kMaxPages = 100;
  static constexpr size_t kMaxItems = 10000;
  static constexpr int kMaxRelists = 100;

 private:
  enum class Pending {
    kInitialize,
    kToolsList,
    kResourcesList,
    kTemplatesList,
    kPromptsList,
    kToolCall,
    kResourceRead,
    kPromptGet
  };
  // A call's kind: answered through on_result.
  static bool IsCall(Pending kind) {
    return kind == Pending::kToolCall || kind == Pending::kResourceRead || kind == Pending::kPromptGet;
  }
  void Send(const std::string& json_line);
  void Fail(const std::string& why);
  void OnResponse(uint64_t id, const nlohmann::json& message);
  void List(Pending kind, const std::string& cursor);
  // The next listing after kind's last page, or ready.
  void Listed(Pending kind);
  void OnListPage(Pending kind, const nlohmann::json& result);
  // A notifications/*/list_changed for kind.
  void ListChanged(Pending kind);

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
  bool offers_resources_ = false;
  std::vector<McpResource> resources_, resources_listing_;
  std::vector<McpResourceTemplate> templates_, templates_listing_;
  bool offers_prompts_ = false;
  std::vector<McpPrompt> prompts_, prompts_listing_;
  std::map<Pending, int> pages_;           // of each listing under way
  std::map<Pending, bool> listing_again_;  // a list_changed came during that kind's listing
  int relists_ = 0;                        // followed list_changed notifications, kMaxRelists at most
  std::vector<McpRoot> roots_;
};

}  // namespace odin
