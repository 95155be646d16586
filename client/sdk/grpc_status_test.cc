// gRPC codes and messages keep their meaning in absl::Status.

#include "client/sdk/grpc_status.h"

#include "gtest/gtest.h"

namespace verity::client {
namespace {

TEST(GrpcStatusTest, CodesAndMessagesSurvive) {
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  const absl::Status status =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "no blob"));
  EXPECT_EQ(status, absl::NotFoundError("no blob"));
  for (int code = 1; code <= 16; ++code) {
    EXPECT_EQ(static_cast<int>(
                  FromGrpcStatus(
                      grpc::Status(static_cast<grpc::StatusCode>(code), ""))
                      .code()),
              code);
  }
  // 31 is past every canonical code yet a value grpc::StatusCode can hold
  // (its enumerators span -1..16, so its values are -32..31): 99 would be an
  // invalid enum value, undefined behaviour.
  EXPECT_EQ(FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(31), "?"))
                .code(),
            absl::StatusCode::kUnknown);
}

}  // namespace
}  // namespace verity::client
