// Implements `verity rm` with one Delete RPC; prints nothing on success.

#include "client/rm_command.h"

#include "client/command_line.h"
#include "client/grpc_status.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity rm DIGEST_OR_NAME\n";

absl::Status Delete(const CommandLine& line, const client::BlobRef& blob) {
  ASSIGN_OR_RETURN(auto stub, client::CreateStub(line.connection));
  grpc::ClientContext context;
  client::ApplyDeadline(line.connection, &context);
  verity::v1::DeleteRequest request;
  blob.SetIn(&request);
  verity::v1::DeleteResponse response;
  return client::FromGrpcStatus(stub->Delete(&context, request, &response));
}

}  // namespace

int RunRmCommand(int argc, char** argv, std::FILE* /*out*/, std::FILE* err) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("rm", blob.status(), kUsage, err);
  return ReportStatus("rm", Delete(*line, *blob), err);
}

}  // namespace verity::cli
