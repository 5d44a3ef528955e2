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

ZmqEndpoint::~ZmqEndpoint() {
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
  if (fds != nullptr) {
    for (const PollFd& f : *fds) {
      short events = static_cast<short>((f.want_read ? ZMQ_POLLIN : 0) | (f.want_write ? ZMQ_POLLOUT : 0));
      items.push_back({nullptr, f.fd, events, 0});
    }
  }
  long ms = timeout < Duration::zero() ? -1 : static_cast<long>((ToMillis(timeout + microseconds(999))));
  int rc = zmq_poll(items.data(), static_cast<int>(items.size()), ms);
  if (rc < 0) {
    if (zmq_errno() == EINTR) return false;
    return ZmqError("poll", zmq_errno());
  }
  if (fds != nullptr) {
    for (size_t i = 0; i < fds->size(); ++i) {
      (*fds)[i].readable = (items[i + 1].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) != 0;
      (*fds)[i].writable = (items[i + 1].revents & ZMQ_POLLOUT) != 0;
    }
  }
  writable_ = (items[0].revents & ZMQ_POLLOUT) != 0;
  return (items[0].revents & ZMQ_POLLIN) != 0;
}

StatusOr<bool> ZmqEndpoint::TryReceive(std::string* peer, std::string* payload) {
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
    if (!zmq_msg_more(&msg)) break;
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
