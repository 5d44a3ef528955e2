#pragma once
// The one-shot listener `odin mcp login` gives the authorization server as
// its redirect: http://127.0.0.1:PORT/callback. It waits for the request
// that carries the login's state and its code, and answers the browser a
// short page. Anything else gets an error page and the wait goes on, so a
// forged request (a wrong state, another path) is refused and the login
// goes on; after 20 of them, or at the deadline, it gives up. Only
// 127.0.0.1 is bound; a request's head is read up to 8 KiB, within 5 s (a
// connection that sends slowly holds the listener no longer).

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "base/unique_fd.h"

namespace odin {

class OAuthRedirectListener {
 public:
  // Listens on 127.0.0.1:port (0: any free port).
  static StatusOr<OAuthRedirectListener> Open(int port);

  int port() const { return port_; }
  std::string redirect_uri() const { return "http://127.0.0.1:" + std::to_string(port_) + "/callback"; }
  // The code of the redirect whose state is state. PermissionDenied when
  // the authorization server refused (its error, with that state),
  // DeadlineExceeded at the deadline.
  StatusOr<std::string> Wait(const std::string& state, SteadyTime deadline);

 private:
  UniqueFd fd_;
  int port_ = 0;
};

}  // namespace odin
