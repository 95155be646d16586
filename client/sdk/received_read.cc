// Implements ReceivedReadResponse over ParseReadResponsePieces, and starts
// the call the way the generated stub does (the same internal factory gRPC's
// generated code uses for a message type of its own serialization traits).

#include "client/sdk/received_read.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/read_response_pieces.h"

namespace verity::client {
namespace {

// The method's full name, as in verity.proto.
constexpr char kReadMethod[] = "/verity.v1.Verity/Read";

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
      method_(kReadMethod, grpc::internal::RpcMethod::SERVER_STREAMING,
              channel_) {}

std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>>
ReceivedReadCaller::Start(grpc::ClientContext* context,
                          const v1::ReadRequest& request) const {
  return std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>>(
      grpc::internal::ClientReaderFactory<ReceivedReadResponse>::Create(
          channel_.get(), method_, context, request));
}

}  // namespace verity::client
