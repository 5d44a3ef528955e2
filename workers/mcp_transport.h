#pragma once
// The MCP worker's side of a server: its description (from ODIN_MCP_SERVER)
// and one run of it with its MCP session, over stdio (a child process: its
// stderr's tail kept for the reason it died; stopped between calls if it may
// write) or streamable HTTP (each message a POST; answers as JSON or an SSE
// stream; the session id from initialize on every later request).
//
// Thread-safety: none; the worker's loop owns them.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"
#include "mcp/mcp_client.h"

namespace odin {

struct McpServerDescription {
  std::string name;
  bool writable = false;          // held stopped between calls
  bool roots = true;              // the workspace offered as the root
  std::vector<std::string> argv;  // stdio
  std::vector<std::string> env;
  std::string url;                   // streamable HTTP
  std::vector<std::string> headers;  // "Name: value"
  // The user's OAuth token's header value ("Bearer ..."), from the
  // coordinator's request (never the environment); "" for none.
  std::string authorization;
};

// The server described in the environment (kMcpServerEnv); stdio servers get
// our environment (without the description) and the entry's own.
StatusOr<McpServerDescription> McpServerFromEnvironment();

class McpServerRun {
 public:
  virtual ~McpServerRun() = default;

  // A run that has started (for stdio, the process; for HTTP, initialize
  // queued), or why it could not. workspace: a stdio server's working
  // directory, and the root offered to any server that may know it.
  static StatusOr<std::unique_ptr<McpServerRun>> Start(const McpServerDescription& server, const std::string& workspace,
                                                       McpClient::Callbacks callbacks);

  McpClient& client() { return client_; }
  bool dead() const { return !death_.empty(); }
  // Why it is gone ("MCP server NAME exited with status 3; its stderr ends: ...").
  virtual std::string death() const { return death_; }
  virtual void AddWatchFds(std::vector<PollFd>* fds) = 0;
  virtual SteadyTime NextTimer() const { return SteadyTime::max(); }
  virtual void OnPolled(const std::vector<PollFd>& fds) {}
  // Moves messages both ways; notices an exit or a broken session.
  virtual void Service() = 0;
  // The call was cancelled: whatever still carries its answer may go.
  virtual void Abandon(uint64_t call) {}
  // The session's end, at most `wait` of it: for HTTP, the DELETE that
  // tells the server (its streams closed first); a stdio server is killed
  // by the run's destruction.
  virtual void End(Duration wait) {}
  // Stops a local server's processes between calls, and lets them go on.
  virtual void Pause() {}
  virtual void Resume() {}
  // OAuth (HTTP): the server refused the token (401) and the refused
  // messages wait; SetAuthorization gives the next token ("" for none: the
  // run dies, needing `odin mcp login`), and the waiting messages go again.
  virtual bool WantsAuthorization() const { return false; }
  // The token's header value it sends now ("" for none).
  virtual const std::string& authorization() const {
    static const std::string none;
    return none;
  }
  // Whether it died for want of a token (not a crash).
  bool needs_login() const { return needs_login_; }
  virtual void SetAuthorization(const std::string& header) {}

 protected:
  McpServerRun(const std::string& name, McpClient::Callbacks callbacks);
  McpClient client_;
  std::string name_;
  std::string death_;
  bool needs_login_ = false;
};

}  // namespace odin
