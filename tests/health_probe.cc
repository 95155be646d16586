// health_probe HOST:PORT: one grpc.health.v1 Check of the whole server (service
// ""), like grpc_health_probe, which Debian does not ship. Prints the status
// (or the RPC's error); exits 0 if SERVING, 1 for any other status, 2 if the
// call fails. For the container tests.

#include <chrono>
#include <cstdio>
#include <string>

#include "grpcpp/grpcpp.h"
#include "tests/testing/health.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: health_probe HOST:PORT\n");
    return 2;
  }
  auto channel =
      grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status =
      stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) {
    std::printf("error %d: %s\n", static_cast<int>(status.error_code()),
                status.error_message().c_str());
    return 2;
  }
  std::printf("%s\n", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                          response.status())
                          .c_str());
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? 0
             : 1;
}
