#pragma once
// gRPC's standard services beside Odin's, so generic tools can use the
// daemon: health (grpc.health.v1.Health: SERVING while it runs; open to
// every client that reaches the socket, since probes carry no token and it
// tells nothing else) and server reflection (grpc.reflection.v1alpha: the
// service's descriptors, so grpcurl needs no .proto files).
//
// The daemon's bearer token (TCP) is checked for every call but health's,
// before any handler runs: a call of another service without it is
// cancelled there. Odin's own service answers such a call
// UNAUTHENTICATED, saying how to give the token, by the same check.

#include <map>
#include <string>

#include <grpcpp/grpcpp.h>

namespace odin {

// Whether metadata carries "authorization: Bearer TOKEN" (compared in
// constant time); true when token is "" (a unix socket: its peer was
// checked when it connected).
bool BearerMatches(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const std::string& token);

// Adds health, reflection and the token check to builder: before its
// BuildAndStart.
void AddStandardServices(grpc::ServerBuilder* builder, const std::string& token);
// Neither on builder (the server that refuses other users): before its
// BuildAndStart, after the other's.
void WithoutStandardServices(grpc::ServerBuilder* builder);

}  // namespace odin
