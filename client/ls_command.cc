// Implements `verity ls` with one List RPC per page.

#include "client/ls_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/command_line.h"
#include "client/grpc_status.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity ls\n";

// Prints one page; returns its next_page_token.
absl::StatusOr<std::string> ListPage(verity::v1::Verity::StubInterface& stub,
                                     const CommandLine& line,
                                     const std::string& token, std::FILE* out) {
  grpc::ClientContext context;
  client::ApplyDeadline(line.connection, &context);
  verity::v1::ListRequest request;
  request.set_page_token(token);
  verity::v1::ListResponse response;
  RETURN_IF_ERROR(
      client::FromGrpcStatus(stub.List(&context, request, &response)));
  std::string text;
  for (const verity::v1::BlobInfo& info : response.blobs()) {
    ASSIGN_OR_RETURN(const client::CheckedBlobInfo checked,
                     client::CheckBlobInfo(info));
    text += FormatListLine(checked, info);
  }
  std::fwrite(text.data(), 1, text.size(), out);
  return response.next_page_token();
}

absl::Status List(const CommandLine& line, std::FILE* out) {
  ASSIGN_OR_RETURN(auto stub, client::CreateStub(line.connection));
  std::string token;
  do {
    ASSIGN_OR_RETURN(std::string next, ListPage(*stub, line, token, out));
    // Tokens are opaque, but one that repeats would loop forever.
    if (!next.empty() && next == token) {
      return absl::InternalError(
          "the server returned the same page token twice");
    }
    token = std::move(next);
  } while (!token.empty());
  return absl::OkStatus();
}

}  // namespace

std::string FormatListLine(const client::CheckedBlobInfo& checked,
                           const verity::v1::BlobInfo& info) {
  std::string line = absl::StrCat(
      FormatDigest(checked.digest.algorithm, AsBytes(checked.digest.digest)),
      " ", checked.descriptor.data_size);
  if (!info.names().empty()) {
    absl::StrAppend(&line, " ", absl::StrJoin(info.names(), " "));
  }
  return line + "\n";
}

int RunLsCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("ls takes no arguments");
  }
  if (!line.ok()) return UsageError("ls", line.status(), kUsage, err);
  return ReportStatus("ls", List(*line, out), err);
}

}  // namespace verity::cli
