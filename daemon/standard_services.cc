#include "daemon/standard_services.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/support/server_interceptor.h>

namespace odin {

// proto/embed_descriptor.cmake's: odin/v1/coordinator.proto as a
// FileDescriptorSet.
extern const unsigned char kCoordinatorDescriptorSet[];
extern const size_t kCoordinatorDescriptorSet_size;

namespace {

namespace gx = grpc::experimental;

constexpr char kHealthPrefix[] = "/grpc.health.v1.Health/";
constexpr char kOdinPrefix[] = "/odin.v1.";

// Cancels a call that lacks the token before its handler runs.
class TokenCheck final : public gx::Interceptor {
 public:
  TokenCheck(gx::ServerRpcInfo* info, const std::string* token) : info_(info), token_(token) {}
  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      std::string method = info_->method() == nullptr ? "" : info_->method();
      // Health is open; Odin's own calls answer UNAUTHENTICATED themselves.
      bool checked_here = method.rfind(kHealthPrefix, 0) != 0 && method.rfind(kOdinPrefix, 0) != 0;
      if (checked_here && !BearerMatches(*methods->GetRecvInitialMetadata(), *token_)) {
        info_->server_context()->TryCancel();
      }
    }
    methods->Proceed();
  }

 private:
  gx::ServerRpcInfo* info_;
  const std::string* token_;
};

class TokenCheckFactory final : public gx::ServerInterceptorFactoryInterface {
 public:
  explicit TokenCheckFactory(std::string token) : token_(std::move(token)) {}
  gx::Interceptor* CreateServerInterceptor(gx::ServerRpcInfo* info) override { return new TokenCheck(info, &token_); }

 private:
  std::string token_;
};

// Reflection on a builder or not: libgrpc++_reflection registers its plugin
// for every builder of the process when it loads, the server that refuses
// other users included (review of 008df18, finding 4). The option takes
// that plugin away, and puts one back where reflection belongs.
class ReflectionOption final : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionOption(bool on) : on_(on) {}
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    std::string name = grpc::reflection::ProtoServerReflectionPlugin().name();
    plugins->erase(
        std::remove_if(plugins->begin(), plugins->end(),
                       [&](const std::unique_ptr<grpc::ServerBuilderPlugin>& p) { return p->name() == name; }),
        plugins->end());
    if (on_) plugins->push_back(std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>());
  }

 private:
  bool on_;
};

// The service's descriptors, into the pool reflection answers from: the
// lite runtime's generated code registers none. Once per process; the
// bytes must outlive it (the pool keeps pointers to them).
void RegisterServiceDescriptors() {
  static const bool registered = [] {
    google::protobuf::FileDescriptorSet set;
    if (!set.ParseFromArray(kCoordinatorDescriptorSet, static_cast<int>(kCoordinatorDescriptorSet_size))) return false;
    for (const google::protobuf::FileDescriptorProto& file : set.file()) {
      if (google::protobuf::DescriptorPool::generated_pool()->FindFileByName(file.name()) != nullptr) continue;
      auto* bytes = new std::string(file.SerializeAsString());  // kept for good
      google::protobuf::DescriptorPool::InternalAddGeneratedFile(bytes->data(), static_cast<int>(bytes->size()));
    }
    return true;
  }();
  (void)registered;
}

}  // namespace

bool BearerMatches(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const std::string& token) {
  if (token.empty()) return true;
  auto it = metadata.find("authorization");
  std::string given = it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
  std::string expected = "Bearer " + token;
  unsigned diff = given.size() ^ expected.size();
  for (size_t i = 0; i < expected.size(); ++i) diff |= (i < given.size() ? given[i] : 0) ^ expected[i];
  return diff == 0;
}

void AddStandardServices(grpc::ServerBuilder* builder, const std::string& token) {
  // Read when the builder builds; the caller turns it off again for any
  // server built after (grpc's switch is the process's).
  grpc::EnableDefaultHealthCheckService(true);
  RegisterServiceDescriptors();
  builder->SetOption(std::make_unique<ReflectionOption>(true));
  std::vector<std::unique_ptr<gx::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<TokenCheckFactory>(token));
  builder->experimental().SetInterceptorCreators(std::move(creators));
}

void WithoutStandardServices(grpc::ServerBuilder* builder) {
  grpc::EnableDefaultHealthCheckService(false);
  builder->SetOption(std::make_unique<ReflectionOption>(false));
}

}  // namespace odin
