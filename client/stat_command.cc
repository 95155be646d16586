// Implements `verity stat` with one Stat RPC.

#include "client/stat_command.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/blob_ref.h"
#include "client/command_line.h"
#include "client/grpc_status.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity stat DIGEST_OR_NAME\n";

absl::Status Stat(const CommandLine& line, const client::BlobRef& blob,
                  std::FILE* out) {
  ASSIGN_OR_RETURN(auto stub, client::CreateStub(line.connection));
  grpc::ClientContext context;
  client::ApplyDeadline(line.connection, &context);
  verity::v1::StatRequest request;
  blob.SetIn(&request);
  verity::v1::BlobInfo info;
  RETURN_IF_ERROR(client::FromGrpcStatus(stub->Stat(&context, request, &info)));
  ASSIGN_OR_RETURN(
      const client::CheckedBlobInfo checked,
      client::CheckBlobInfo(info, blob.digest ? &*blob.digest : nullptr));
  const std::string text = FormatStat(checked, info);
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

}  // namespace

std::string FormatStat(const client::CheckedBlobInfo& checked,
                       const verity::v1::BlobInfo& info) {
  const Descriptor& d = checked.descriptor;
  std::string text = absl::StrCat(
      "digest: ",
      FormatDigest(checked.digest.algorithm, AsBytes(checked.digest.digest)),
      "\nsize: ", d.data_size,
      "\nhash-algorithm: ", HashAlgorithmName(d.hash_algorithm),
      "\nblock-size: ", uint64_t{1} << d.log_block_size,
      "\nsalt: ", absl::BytesToHexString(d.salt),
      "\ntree-size: ", info.tree_size(), "\n");
  for (const std::string& name : info.names()) {
    absl::StrAppend(&text, "name: ", name, "\n");
  }
  return text;
}

int RunStatCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("stat", blob.status(), kUsage, err);
  return ReportStatus("stat", Stat(*line, *blob, out), err);
}

}  // namespace verity::cli
