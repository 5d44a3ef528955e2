#include "base/zmq_endpoint.h"

#include <zmq.h>

#include <cerrno>

namespace odin {
namespace {

// The one place ZeroMQ errors become Status.
Status ZmqError(std::string_view context, int err) {
  std::string detail = zmq_strerror(err);
  switch (err) {
    case EAGAIN: return Status::ResourceExhausted(context, detail);
    case EHOSTUNREACH: return Status::NotFound(context, detail);
    case EINTR: return Status::Cancelled(context, detail);
    case ETERM: return Status::Unavailable(context, detail);
    case EADDRINUSE: return Status::AlreadyExists(context, detail);
    case ENOENT:
    case EINVAL:
    case EPROTONOSUPPORT: return Status::InvalidArgument(context, detail);
    default: return Status::IOError(context, detail);
  }
}

StatusOr<std::pair<void*, void*>> NewSocket(int type) {
  void* ctx = zmq_ctx_new();
  if (ctx == nullptr) return ZmqError("zmq_ctx_new", zmq_errno());
  void* s = zmq_socket(ctx, type);
  if (s == nullptr) {
    int err = zmq_errno();
    zmq_ctx_term(ctx);
    return ZmqError("zmq_socket", err);
  }
  int linger = 0;  // never block process exit on undelivered messages
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  return std::make_pair(ctx, s);
}

}  // namespace

StatusOr<CurveKeyPair> GenerateCurveKeyPair() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) return ZmqError("zmq_curve_keypair", zmq_errno());
  return CurveKeyPair{pub, sec};
}

StatusOr<std::string> CurvePublicKey(const std::string& secret_key) {
  if (!IsCurveKey(secret_key)) return Status::InvalidArgument("CURVE key", "not a Z85 key of 40 characters");
  char pub[41];
  if (zmq_curve_public(pub, secret_key.c_str()) != 0) return ZmqError("zmq_curve_public", zmq_errno());
  return std::string(pub);
}

bool IsCurveKey(const std::string& text) {
  static const std::string kZ85 =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (text.size() != 40) return false;
  for (char c : text) {
    if (kZ85.find(c) == std::string::npos) return false;
  }
  uint8_t binary[32];
  return zmq_z85_decode(binary, text.c_str()) != nullptr;
}

ZmqEndpoint::~ZmqEndpoint() {
  if (zap_ != nullptr) zmq_close(zap_);
  zmq_close(socket_);
  zmq_ctx_term(context_);
}

StatusOr<std::unique_ptr<ZmqEndpoint>> ZmqEndpoint::CreateRouter() {
  ASSIGN_OR_RETURN(auto cs, NewSocket(ZMQ_ROUTER));
  std::unique_ptr<ZmqEndpoint> ep(new ZmqEndpoint(cs.first, cs.second, true));
  int one = 1;
  zmq_setsockopt(ep->socket_, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
  // ZMQ_ROUTER_HANDOVER stays off: an id belongs to the connection that took
  // it first, and a restarted worker gets a new id.
  return ep;
}

StatusOr<std::unique_ptr<ZmqEndpoint>> ZmqEndpoint::BindRouter(const std::string& endpoint) {
  ASSIGN_OR_RETURN(std::unique_ptr<ZmqEndpoint> ep, CreateRouter());
  RETURN_IF_ERROR(ep->Bind(endpoint));
  return ep;
}

Status ZmqEndpoint::Bind(const std::string& endpoint) {
  if (zmq_bind(socket_, endpoint.c_str()) != 0) return ZmqError("bind " + endpoint, zmq_errno());
  return Status::OK();
}

void ZmqEndpoint::Unbind(const std::string& endpoint) { zmq_unbind(socket_, endpoint.c_str()); }

StatusOr<std::unique_ptr<ZmqEndpoint>> ZmqEndpoint::ConnectDealer(const std::string& endpoint,
                                                                  const std::string& identity) {
  ASSIGN_OR_RETURN(auto cs, NewSocket(ZMQ_DEALER));
  std::unique_ptr<ZmqEndpoint> ep(new ZmqEndpoint(cs.first, cs.second, false));
  zmq_setsockopt(ep->socket_, ZMQ_ROUTING_ID, identity.data(), identity.size());
  if (zmq_connect(ep->socket_, endpoint.c_str()) != 0) {
    return ZmqError("connect " + endpoint, zmq_errno());
  }
  return ep;
}

StatusOr<std::unique_ptr<ZmqEndpoint>> ZmqEndpoint::BindCurveRouter(const std::string& endpoint,
                                                                    const CurveKeyPair& server,
                                                                    const std::set<std::string>& allowed) {
  if (endpoint.compare(0, 6, "tcp://") != 0) {
    return Status::InvalidArgument("listen address " + endpoint, "must be tcp://HOST:PORT");
  }
  if (!IsCurveKey(server.secret_key)) return Status::InvalidArgument("the coordinator's secret key", "not a CURVE key");
  ASSIGN_OR_RETURN(std::unique_ptr<ZmqEndpoint> ep, CreateRouter());
  for (const std::string& key : allowed) {
    uint8_t binary[32];
    if (!IsCurveKey(key) || zmq_z85_decode(binary, key.c_str()) == nullptr) {
      return Status::InvalidArgument("allowed host key " + key.substr(0, 8) + "...", "not a CURVE public key");
    }
    ep->allowed_.insert(std::string(reinterpret_cast<char*>(binary), 32));
  }
  // The ZAP handler must be bound before the first handshake: without one,
  // libzmq lets every CURVE client in.
  ep->zap_ = zmq_socket(ep->context_, ZMQ_REP);
  if (ep->zap_ == nullptr) return ZmqError("zmq_socket (ZAP)", zmq_errno());
  int linger = 0;
  zmq_setsockopt(ep->zap_, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind(ep->zap_, "inproc://zeromq.zap.01") != 0) return ZmqError("bind ZAP handler", zmq_errno());
  int one = 1;
  zmq_setsockopt(ep->socket_, ZMQ_CURVE_SERVER, &one, sizeof one);
  if (zmq_setsockopt(ep->socket_, ZMQ_CURVE_SECRETKEY, server.secret_key.c_str(), 40) != 0) {
    return ZmqError("the coordinator's secret key", zmq_errno());
  }
  const char domain[] = "odin";
  zmq_setsockopt(ep->socket_, ZMQ_ZAP_DOMAIN, domain, sizeof domain - 1);
  // A handshake that does not finish promptly is dropped.
  int handshake_ms = 10000;
  zmq_setsockopt(ep->socket_, ZMQ_HANDSHAKE_IVL, &handshake_ms, sizeof handshake_ms);
  // No single message from a host can exhaust our memory: the largest a
  // host relays is a worker's result, which the worker caps well below.
  int64_t max_message = int64_t{64} << 20;
  zmq_setsockopt(ep->socket_, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
  // And not many at once: past this, ZeroMQ stops reading a host's
  // connection (TCP pushes back) until we catch up.
  int queued = 256;
  zmq_setsockopt(ep->socket_, ZMQ_RCVHWM, &queued, sizeof queued);
  RETURN_IF_ERROR(ep->Bind(endpoint));
  return ep;
}

StatusOr<std::unique_ptr<ZmqEndpoint>> ZmqEndpoint::ConnectCurveDealer(const std::string& endpoint,
                                                                       const std::string& identity,
                                                                       const CurveKeyPair& client,
                                                                       const std::string& server_public) {
  if (!IsCurveKey(client.secret_key) || !IsCurveKey(client.public_key)) {
    return Status::InvalidArgument("the host's key pair", "not CURVE keys");
  }
  if (!IsCurveKey(server_public)) return Status::InvalidArgument("the coordinator's public key", "not a CURVE key");
  ASSIGN_OR_RETURN(auto cs, NewSocket(ZMQ_DEALER));
  std::unique_ptr<ZmqEndpoint> ep(new ZmqEndpoint(cs.first, cs.second, false));
  zmq_setsockopt(ep->socket_, ZMQ_ROUTING_ID, identity.data(), identity.size());
  zmq_setsockopt(ep->socket_, ZMQ_CURVE_SERVERKEY, server_public.c_str(), 40);
  zmq_setsockopt(ep->socket_, ZMQ_CURVE_PUBLICKEY, client.public_key.c_str(), 40);
  zmq_setsockopt(ep->socket_, ZMQ_CURVE_SECRETKEY, client.secret_key.c_str(), 40);
  // A dead link is noticed at the TCP level as well (the protocol's own
  // heartbeats decide; these keep NAT and firewalls from dropping it idle).
  int keepalive = 1;
  zmq_setsockopt(ep->socket_, ZMQ_TCP_KEEPALIVE, &keepalive, sizeof keepalive);
  if (zmq_connect(ep->socket_, endpoint.c_str()) != 0) return ZmqError("connect " + endpoint, zmq_errno());
  return ep;
}

std::string ZmqEndpoint::LastEndpoint() const {
  char buf[256];
  size_t len = sizeof buf;
  if (zmq_getsockopt(socket_, ZMQ_LAST_ENDPOINT, buf, &len) != 0) return "";
  return std::string(buf, len > 0 && buf[len - 1] == '\0' ? len - 1 : len);
}

void ZmqEndpoint::AnswerZap() {
  for (;;) {
    // Request: version, request id, domain, address, identity, mechanism,
    // then the mechanism's credentials (CURVE: the client's public key).
    std::vector<std::string> frames;
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    bool more = true;
    while (more) {
      if (zmq_msg_recv(&msg, zap_, ZMQ_DONTWAIT) < 0) break;
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
      more = zmq_msg_more(&msg);
    }
    zmq_msg_close(&msg);
    if (frames.empty()) return;
    std::string request_id = frames.size() > 1 ? frames[1] : "";
    bool curve = frames.size() >= 7 && frames[0] == "1.0" && frames[5] == "CURVE";
    bool ok = curve && frames[6].size() == 32 && allowed_.count(frames[6]) > 0;
    if (!ok && refused_keys_.size() < 100) {
      char z85[41] = "";
      if (curve && frames[6].size() == 32) zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(frames[6].data()), 32);
      refused_keys_.push_back(curve ? z85 : "(no CURVE key)");
    }
    // The user id is the key itself: every message of the connection then
    // carries it (TryReceive's user_id), so a host is bound to its key.
    char user[41] = "";
    if (ok) zmq_z85_encode(user, reinterpret_cast<const uint8_t*>(frames[6].data()), 32);
    const std::string reply[] = {"1.0", request_id, ok ? "200" : "400", ok ? "OK" : "key not allowed", user, ""};
    for (int i = 0; i < 6; ++i) {
      zmq_send(zap_, reply[i].data(), reply[i].size(), i < 5 ? ZMQ_SNDMORE : 0);
    }
  }
}

Status ZmqEndpoint::Send(std::string_view peer, std::string_view payload) {
  if (router_) {
    if (zmq_send(socket_, peer.data(), peer.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
      return ZmqError("send to " + std::string(peer), zmq_errno());
    }
  }
  if (zmq_send(socket_, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    return ZmqError("send", zmq_errno());
  }
  return Status::OK();
}

StatusOr<bool> ZmqEndpoint::Poll(Duration timeout, std::vector<PollFd>* fds, bool want_send) {
  std::vector<zmq_pollitem_t> items;
  items.reserve(1 + (fds ? fds->size() : 0));
  items.push_back({socket_, 0, static_cast<short>(ZMQ_POLLIN | (want_send ? ZMQ_POLLOUT : 0)), 0});
  if (zap_ != nullptr) AnswerZap();  // handshakes waiting since the last poll
  if (fds != nullptr) {
    for (const PollFd& f : *fds) {
      short events = static_cast<short>((f.want_read ? ZMQ_POLLIN : 0) | (f.want_write ? ZMQ_POLLOUT : 0));
      items.push_back({nullptr, f.fd, events, 0});
    }
  }
  if (zap_ != nullptr) items.push_back({zap_, 0, ZMQ_POLLIN, 0});
  long ms = timeout < Duration::zero() ? -1 : static_cast<long>((ToMillis(timeout + microseconds(999))));
  int rc = zmq_poll(items.data(), static_cast<int>(items.size()), ms);
  if (rc < 0) {
    if (zmq_errno() == EINTR) return false;
    return ZmqError("poll", zmq_errno());
  }
  if (zap_ != nullptr && (items.back().revents & ZMQ_POLLIN) != 0) AnswerZap();
  if (fds != nullptr) {
    for (size_t i = 0; i < fds->size(); ++i) {
      (*fds)[i].readable = (items[i + 1].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) != 0;
      (*fds)[i].writable = (items[i + 1].revents & ZMQ_POLLOUT) != 0;
    }
  }
  writable_ = (items[0].revents & ZMQ_POLLOUT) != 0;
  return (items[0].revents & ZMQ_POLLIN) != 0;
}

void ZmqEndpoint::SetLinger(Duration linger) {
  int ms = static_cast<int>(ToMillis(linger));
  zmq_setsockopt(socket_, ZMQ_LINGER, &ms, sizeof ms);
}

std::vector<int> ZmqEndpoint::WaitFds() const {
  std::vector<int> fds;
  for (void* s : {socket_, zap_}) {
    if (s == nullptr) continue;
    int fd = -1;
    size_t len = sizeof fd;
    if (zmq_getsockopt(s, ZMQ_FD, &fd, &len) == 0) fds.push_back(fd);
  }
  return fds;
}

bool ZmqEndpoint::Readable() const {
  for (void* s : {socket_, zap_}) {
    if (s == nullptr) continue;
    int events = 0;
    size_t len = sizeof events;
    if (zmq_getsockopt(s, ZMQ_EVENTS, &events, &len) == 0 && (events & ZMQ_POLLIN) != 0) return true;
  }
  return false;
}

StatusOr<bool> ZmqEndpoint::TryReceive(std::string* peer, std::string* payload, std::string* user_id) {
  if (zap_ != nullptr) AnswerZap();
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  std::vector<std::string> frames;
  for (;;) {
    if (zmq_msg_recv(&msg, socket_, ZMQ_DONTWAIT) < 0) {
      int err = zmq_errno();
      zmq_msg_close(&msg);
      if (err == EAGAIN && frames.empty()) return false;
      return ZmqError("receive", err);
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    if (!zmq_msg_more(&msg)) {
      // The payload frame carries the connection's metadata (a ROUTER's
      // routing-id frame may not).
      if (user_id != nullptr) {
        const char* id = zmq_msg_gets(&msg, "User-Id");
        *user_id = id != nullptr ? id : "";
      }
      break;
    }
  }
  zmq_msg_close(&msg);
  // ROUTER: [peer, payload]; DEALER: [payload]. Anything else is malformed and
  // reported as an empty payload, which fails to parse and is treated as a
  // protocol violation by the caller.
  if (router_) {
    *peer = frames[0];
    *payload = frames.size() == 2 ? std::move(frames[1]) : std::string();
  } else {
    peer->clear();
    *payload = frames.size() == 1 ? std::move(frames[0]) : std::string();
  }
  return true;
}

}  // namespace odin
