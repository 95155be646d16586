// Statuses from the server keep their meaning as the CLI's exit codes.

#include "client/cli/exit_codes.h"

#include "client/sdk/grpc_status.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

using ::verity::client::FromGrpcStatus;

TEST(ExitCodesTest, GrpcCodes) {
  auto exit_code = [](grpc::StatusCode code) {
    return ExitCodeFor(FromGrpcStatus(grpc::Status(code, "")));
  };
  EXPECT_EQ(exit_code(grpc::StatusCode::NOT_FOUND), kExitNotFound);
  EXPECT_EQ(exit_code(grpc::StatusCode::DATA_LOSS), kExitVerificationFailed);
  EXPECT_EQ(exit_code(grpc::StatusCode::UNAVAILABLE), kExitUnavailable);
  EXPECT_EQ(exit_code(grpc::StatusCode::DEADLINE_EXCEEDED), kExitUnavailable);
  EXPECT_EQ(exit_code(grpc::StatusCode::INVALID_ARGUMENT), kExitUsage);
  EXPECT_EQ(exit_code(grpc::StatusCode::PERMISSION_DENIED), kExitDenied);
  EXPECT_EQ(exit_code(grpc::StatusCode::UNAUTHENTICATED), kExitDenied);
  EXPECT_EQ(exit_code(grpc::StatusCode::OUT_OF_RANGE), kExitOtherError);
}

}  // namespace
}  // namespace verity::cli
