// Implements the interceptor: one header added before the initial metadata
// of each call is sent.

#include "client/sdk/bearer_token_interceptor.h"

#include <utility>

namespace verity::client {
namespace {

using grpc::experimental::InterceptionHookPoints;

class BearerTokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* header)
      : header_(header) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* const header_;  // owned by the factory
};

class BearerTokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenInterceptorFactory(const std::string& token)
      : header_("Bearer " + token) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&header_);
  }

 private:
  const std::string header_;
};

}  // namespace

std::vector<
    std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
BearerTokenInterceptors(const std::string& token) {
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      factories;
  factories.push_back(std::make_unique<BearerTokenInterceptorFactory>(token));
  return factories;
}

}  // namespace verity::client
