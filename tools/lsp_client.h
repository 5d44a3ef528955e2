#pragma once
// LspServer: one language server process, spoken to over its stdin and stdout
// with JSON-RPC 2.0 in Content-Length frames, as the Language Server Protocol
// specification has it.
//
// Start() spawns the server and sends `initialize`; once the answer arrives it
// sends `initialized` and ready() turns true. Documents are synced whole
// (didOpen, then didChange with the full text and a new version each time).
// Requests from the server get answers a quiet client would give
// (workspace/configuration: null for every item; progress and capability
// registration: null; anything else: MethodNotFound), so no server waits on us.
// Every textDocument/publishDiagnostics is kept, numbered in arrival order,
// with the document version the server reported, if any.
//
// Passive: nothing happens outside Service(). Writes never block: what the
// server's pipe does not take waits in an outbox. Thread-safety: none.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/zmq_endpoint.h"

namespace odin {

struct LspDiagnostic {
  uint32_t line = 0;      // 1-based
  uint32_t column = 0;    // 1-based, in UTF-16 code units as LSP counts them
  uint32_t severity = 1;  // 1 error, 2 warning, 3 information, 4 hint (missing: error)
  std::string code;
  std::string message;
  std::string source;
};

struct PublishedDiagnostics {
  std::optional<int64_t> version;  // as the server reported it
  std::vector<LspDiagnostic> items;
  uint64_t seq = 0;  // arrival number, over all documents
  SteadyTime at{};
};

// A location a server answered a request with.
struct LspLocation {
  std::string path;     // absolute
  uint32_t line = 0;    // 1-based
  uint32_t column = 0;  // 1-based, in UTF-16 code units
};

// Diagnostics a client asked for (pulled), rather than waited for.
struct PulledDiagnostics {
  bool error = false;  // the server answered with an error: message says which
  std::string message;
  std::vector<LspDiagnostic> items;
};

// The answer to a textDocument/references request.
struct LspReferences {
  bool error = false;  // the server answered with an error: message says which
  std::string message;
  std::vector<LspLocation> locations;
};

struct LspServerOptions {
  std::vector<std::string> command;  // argv; the program as an absolute path
  std::vector<std::string> env;
  std::string root;    // the workspace; also the server's cwd
  int stderr_fd = -1;  // where the server's stderr goes; -1: /dev/null
};

class LspServer {
 public:
  // Spawns the server and sends initialize. NotFound / PermissionDenied if
  // the program cannot run.
  static StatusOr<std::unique_ptr<LspServer>> Start(const LspServerOptions& options, Clock* clock);
  // Kills the server (its whole process group) and reaps it.
  ~LspServer();
  LspServer(const LspServer&) = delete;
  LspServer& operator=(const LspServer&) = delete;

  // Answered initialize (and was sent initialized).
  bool ready() const { return ready_; }
  // The process ended, or broke the protocol; why.
  bool dead() const { return dead_; }
  const std::string& death() const { return death_; }
  SteadyTime started_at() const { return started_at_; }

  // The fds to wait on: output always, input while the outbox holds bytes,
  // and the exit notification.
  void AddWatchFds(std::vector<PollFd>* fds) const;
  // Reads and handles what arrived, writes what it can, notices an exit.
  void Service();
  // For callers without a poll loop of their own (tests, benchmarks): waits
  // on the server's fds and services it until done() holds, the server dies
  // or limit passes. Returns done().
  bool RunUntil(const std::function<bool()>& done, Duration limit);

  void DidOpen(const std::string& path, const std::string& language_id, int64_t version, const std::string& text);
  void DidChange(const std::string& path, int64_t version, const std::string& text);
  void DidClose(const std::string& path);

  // Whether the server said, in its answer to initialize, that it finds
  // references (capabilities.referencesProvider).
  bool finds_references() const { return finds_references_; }
  // Sends textDocument/references for the position (0-based line, UTF-16
  // column) of an open document, the declaration left out. Returns the
  // request's id, for References().
  int64_t AskReferences(const std::string& path, uint32_t line, uint32_t character);
  // The answer to that request, once it came; null before.
  const LspReferences* References(int64_t id) const;
  // Forgets an answer (or a request whose answer is no longer wanted).
  void ForgetReferences(int64_t id);

  // Whether the server can be asked for a document's diagnostics. Publishes
  // alone cannot say "still clean": typescript-language-server publishes
  // nothing when a file's diagnostics were empty and stay empty. Where the
  // server runs tsserver requests for its client (executeCommand
  // "typescript.tsserverRequest"), the client asks tsserver for the
  // syntactic and semantic diagnostics of the text it last sent, which
  // tsserver answers in order after the change.
  bool pulls_diagnostics() const { return runs_tsserver_requests_; }
  // Asks for the diagnostics of an open document (absolute path); returns
  // the id for Pulled().
  int64_t PullDiagnostics(const std::string& path);
  // The answer, once every part came; null before.
  const PulledDiagnostics* Pulled(int64_t id) const;
  void ForgetPulled(int64_t id);

  // The latest diagnostics published for path (absolute), if any.
  const PublishedDiagnostics* Latest(const std::string& path) const;
  // Publishes received so far, over all documents.
  uint64_t publish_count() const { return publish_seq_; }

 private:
  LspServer(Clock* clock) : clock_(clock) {}
  void Send(const std::string& json_text);
  void Notify(const std::string& method, const std::string& params_json);
  void HandleMessage(const std::string& body);
  void Die(const std::string& why);

  Clock* clock_;
  std::string root_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int to_server_ = -1;    // its stdin
  int from_server_ = -1;  // its stdout
  std::string outbox_;
  std::string inbox_;
  bool ready_ = false;
  bool dead_ = false;
  std::string death_;
  SteadyTime started_at_{};
  int64_t next_id_ = 1;
  int64_t initialize_id_ = 0;
  bool finds_references_ = false;
  std::map<int64_t, std::optional<LspReferences>> references_;  // asked; answered once set
  bool runs_tsserver_requests_ = false;
  struct Pull {
    int parts_left = 0;
    PulledDiagnostics answer;
  };
  std::map<int64_t, Pull> pulls_;             // by the id PullDiagnostics returned
  std::map<int64_t, int64_t> pull_requests_;  // request id -> its pull's id
  uint64_t publish_seq_ = 0;
  std::map<std::string, PublishedDiagnostics> published_;  // by absolute path
};

// file:// URIs, percent-encoded the way VS Code does.
std::string PathToUri(const std::string& path);
// The absolute path of a file:// URI; "" if it is not one.
std::string UriToPath(const std::string& uri);

}  // namespace odin
