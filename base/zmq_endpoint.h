#pragma once
// ZmqEndpoint: one ZeroMQ socket of the worker protocol, as plain byte
// messages, with every ZeroMQ error translated to Status here and nowhere else.
//
// The coordinator binds a ROUTER; each worker connects a DEALER whose routing
// id is its worker id, so the ROUTER knows who is talking. A message is one
// frame of payload (after the routing id on the ROUTER side).
//
// Thread-safety: none; one endpoint belongs to one loop.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace odin {

// One extra file descriptor to wait on alongside the socket.
struct PollFd {
  int fd = -1;
  bool want_read = true;
  bool want_write = false;
  bool readable = false;  // set by Poll
  bool writable = false;  // set by Poll
};

// A CURVE key pair, each key in Z85 (40 characters).
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};
StatusOr<CurveKeyPair> GenerateCurveKeyPair();
// The public key that belongs to a Z85 secret key.
StatusOr<std::string> CurvePublicKey(const std::string& secret_key);
// Whether text is a Z85 CURVE key (40 characters of Z85's alphabet).
bool IsCurveKey(const std::string& text);

class ZmqEndpoint {
 public:
  ~ZmqEndpoint();
  ZmqEndpoint(const ZmqEndpoint&) = delete;
  ZmqEndpoint& operator=(const ZmqEndpoint&) = delete;

  // A ROUTER bound to endpoint (e.g. "ipc:///tmp/odin-x/w.sock"). Routing
  // ids are never handed over: a second connection under an id already
  // connected is ignored, so no one takes over a worker's id.
  static StatusOr<std::unique_ptr<ZmqEndpoint>> BindRouter(const std::string& endpoint);
  // The same ROUTER with no endpoint yet (see Bind).
  static StatusOr<std::unique_ptr<ZmqEndpoint>> CreateRouter();
  // Binds one more endpoint, or unbinds one.
  Status Bind(const std::string& endpoint);
  void Unbind(const std::string& endpoint);
  // A DEALER connected to endpoint, with the given routing id.
  static StatusOr<std::unique_ptr<ZmqEndpoint>> ConnectDealer(const std::string& endpoint, const std::string& identity);

  // A ROUTER bound to a tcp:// endpoint that speaks CURVE only, as the
  // server with this key pair. Only clients whose public key (Z85) is in
  // allowed complete the handshake: a ZAP handler in the socket's own
  // context answers the library's questions during Poll. A client with
  // another key, with none (plaintext) or with the wrong server key never
  // gets a message through in either direction.
  static StatusOr<std::unique_ptr<ZmqEndpoint>> BindCurveRouter(const std::string& endpoint, const CurveKeyPair& server,
                                                                const std::set<std::string>& allowed);
  // A DEALER that connects to a CURVE server whose public key it knows.
  static StatusOr<std::unique_ptr<ZmqEndpoint>> ConnectCurveDealer(const std::string& endpoint,
                                                                   const std::string& identity,
                                                                   const CurveKeyPair& client,
                                                                   const std::string& server_public);
  // The endpoint a bound socket listens on (tcp://...:PORT once bound to
  // port 0 or "*").
  std::string LastEndpoint() const;
  // Client keys refused by the ZAP handler so far (Z85), for the log.
  const std::vector<std::string>& refused_keys() const { return refused_keys_; }

  // Sends one message. On a ROUTER, peer names the recipient; on a DEALER it is
  // ignored. Returns ResourceExhausted iff the message would block (the peer's
  // queue is full) and NotFound iff a ROUTER has no such peer.
  Status Send(std::string_view peer, std::string_view payload);

  // Waits up to timeout (negative: forever) until a message can be received,
  // the socket can send (if want_send), or one of fds is ready. Fills the
  // fds' readable/writable flags. Returns whether a message is waiting.
  StatusOr<bool> Poll(Duration timeout, std::vector<PollFd>* fds, bool want_send = false);

  // Receives one message without blocking. Returns false iff none is waiting.
  // user_id, if given, gets the sender's authenticated identity: on a CURVE
  // server, its public key (Z85) as the ZAP handler let it in; else "".
  StatusOr<bool> TryReceive(std::string* peer, std::string* payload, std::string* user_id = nullptr);

  // For a loop that waits on other sockets too: the file descriptors to
  // wait on (ZMQ_FD: readable means "look again", not "a message"), and
  // whether a message (or, on a CURVE server, a handshake question) is
  // waiting now. Check Readable before each wait.
  std::vector<int> WaitFds() const;
  bool Readable() const;

  // How long closing waits to deliver what is queued (0 by default: never
  // block the process's exit).
  void SetLinger(Duration linger);

  // True iff the last Poll reported the socket writable.
  bool writable() const { return writable_; }

 private:
  ZmqEndpoint(void* context, void* socket, bool router) : context_(context), socket_(socket), router_(router) {}

  // Answers the ZAP requests waiting on zap_ (CURVE servers only).
  void AnswerZap();

  void* context_;  // zmq context; owned
  void* socket_;   // zmq socket; owned
  bool router_;
  bool writable_ = false;
  void* zap_ = nullptr;            // the ZAP handler's REP socket; owned
  std::set<std::string> allowed_;  // client public keys (binary, 32 bytes)
  std::vector<std::string> refused_keys_;
};

}  // namespace odin
