// gRPC codes keep their meaning, and so their exit codes.

#include "client/grpc_status.h"

#include "client/exit_codes.h"
#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::verity::cli::ExitCodeFor;

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

TEST(GrpcStatusTest, ExitCodes) {
  auto exit_code = [](grpc::StatusCode code) {
    return ExitCodeFor(FromGrpcStatus(grpc::Status(code, "")));
  };
  EXPECT_EQ(exit_code(grpc::StatusCode::NOT_FOUND), cli::kExitNotFound);
  EXPECT_EQ(exit_code(grpc::StatusCode::DATA_LOSS),
            cli::kExitVerificationFailed);
  EXPECT_EQ(exit_code(grpc::StatusCode::UNAVAILABLE), cli::kExitUnavailable);
  EXPECT_EQ(exit_code(grpc::StatusCode::DEADLINE_EXCEEDED),
            cli::kExitUnavailable);
  EXPECT_EQ(exit_code(grpc::StatusCode::INVALID_ARGUMENT), cli::kExitUsage);
  EXPECT_EQ(exit_code(grpc::StatusCode::PERMISSION_DENIED),
            cli::kExitOtherError);
  EXPECT_EQ(exit_code(grpc::StatusCode::OUT_OF_RANGE), cli::kExitOtherError);
}

}  // namespace
}  // namespace verity::client
