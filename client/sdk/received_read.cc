// Implements ReceivedReadResponse over ParseReadResponsePieces, and makes
// the calls the way the generated stub does (the same internal factory gRPC's
// generated code uses for a message type of its own serialization traits).

#include "client/sdk/received_read.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/read_response_pieces.h"

namespace verity::client {
namespace {

// The methods' full names, as in verity.proto.
constexpr char kReadMethod[] = "/verity.v1.Verity/Read";
constexpr char kReadSmallMethod[] = "/verity.v1.Verity/ReadSmall";

}  // namespace

absl::Status ReceivedReadResponse::Parse() {
  // Dump takes a reference to each slice, no copy.
  if (!buffer_.Dump(&slices_).ok()) {
    return absl::DataLossError("a Read response could not be read");
  }
  pieces_.clear();
  for (const grpc::Slice& slice : slices_) {
    pieces_.emplace_back(slice.begin(), slice.size());
  }
  absl::Status parsed =
      ParseReadResponsePieces(ByteChain(pieces_), &head_, &data_);
  if (!parsed.ok()) {
    return absl::DataLossError(
        absl::StrCat("a malformed Read response: ", parsed.message()));
  }
  return absl::OkStatus();
}

ReceivedReadCaller::ReceivedReadCaller(
    std::shared_ptr<grpc::ChannelInterface> channel)
    : channel_(std::move(channel)),
      read_(kReadMethod, grpc::internal::RpcMethod::SERVER_STREAMING, channel_),
      read_small_(kReadSmallMethod, grpc::internal::RpcMethod::NORMAL_RPC,
                  channel_) {}

std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>>
ReceivedReadCaller::Start(grpc::ClientContext* context,
                          const v1::ReadRequest& request) const {
  return std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>>(
      grpc::internal::ClientReaderFactory<ReceivedReadResponse>::Create(
          channel_.get(), read_, context, request));
}

grpc::Status ReceivedReadCaller::ReadSmall(
    grpc::ClientContext* context, const v1::ReadRequest& request,
    ReceivedReadResponse* response) const {
  grpc::Status status =
      grpc::internal::BlockingUnaryCall<v1::ReadRequest, ReceivedReadResponse>(
          channel_.get(), read_small_, context, request, response);
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    small_reads_served_.store(false);
  }
  return status;
}

}  // namespace verity::client
