#pragma once
// The gRPC service (odin/v1/coordinator.proto): a thin adapter from requests
// to HostedSession and the ledger, and from their answers to replies.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "session/agent_session.h"
#include "session/hosted_session.h"
#include "odin/v1/coordinator.grpc.pb.h"

namespace odin {

struct ServiceOptions {
  AgentSessionFlags session;  // what each new session starts from
  std::string workspace;      // absolute root
  std::string ledger_path;
  std::string listen;  // as clients reach it, for GetStatus
  std::string token;   // non-empty: every call needs "authorization: Bearer TOKEN"
};

class CoordinatorServiceImpl final : public v1::CoordinatorService::Service {
 public:
  explicit CoordinatorServiceImpl(ServiceOptions options) : o_(std::move(options)) {}
  // Ends every session (cancelling what runs).
  void CloseSessions();

  grpc::Status CreateSession(grpc::ServerContext* ctx, const v1::CreateSessionRequest* req,
                             v1::SessionInfo* reply) override;
  grpc::Status Send(grpc::ServerContext* ctx, const v1::SendRequest* req,
                    grpc::ServerWriter<v1::SessionEvent>* writer) override;
  grpc::Status Subscribe(grpc::ServerContext* ctx, const v1::SubscribeRequest* req,
                         grpc::ServerWriter<v1::SessionEvent>* writer) override;
  grpc::Status Approve(grpc::ServerContext* ctx, const v1::ApproveRequest* req, v1::ApproveResponse* reply) override;
  grpc::Status Cancel(grpc::ServerContext* ctx, const v1::CancelRequest* req, v1::CancelResponse* reply) override;
  grpc::Status ListSessions(grpc::ServerContext* ctx, const v1::ListSessionsRequest* req,
                            v1::ListSessionsResponse* reply) override;
  grpc::Status ListExecutions(grpc::ServerContext* ctx, const v1::ListExecutionsRequest* req,
                              v1::ListExecutionsResponse* reply) override;
  grpc::Status GetExecution(grpc::ServerContext* ctx, const v1::GetExecutionRequest* req,
                            v1::Execution* reply) override;
  grpc::Status QueryMemory(grpc::ServerContext* ctx, const v1::QueryMemoryRequest* req,
                           v1::QueryMemoryResponse* reply) override;
  grpc::Status GetStatus(grpc::ServerContext* ctx, const v1::GetStatusRequest* req, v1::StatusResponse* reply) override;

 private:
  grpc::Status Authorize(grpc::ServerContext* ctx) const;
  // The session, or NOT_FOUND naming the id.
  grpc::Status Find(const std::string& id, std::shared_ptr<HostedSession>* session);

  ServiceOptions o_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<HostedSession>> sessions_;
  bool closed_ = false;
};

}  // namespace odin
