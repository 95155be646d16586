// The Read and ReadSmall RPCs with each response left in the slices gRPC
// received it in, so that the client hashes and delivers the data where it
// lies instead of having protobuf copy it into one string first.

#ifndef VERITYD_CLIENT_SDK_RECEIVED_READ_H_
#define VERITYD_CLIENT_SDK_RECEIVED_READ_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/sync_stream.h>

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "lib/base/byte_chain.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// One response as received. Reused from message to message, it keeps its
// vectors' memory.
class ReceivedReadResponse {
 public:
  // Parses the buffer received last: head() and data() are then valid until
  // the next message is read into this object. DATA_LOSS for a message
  // that does not parse (the server sent it).
  absl::Status Parse();

  const v1::ReadResponse& head() const { return head_; }
  ByteChain data() const { return ByteChain(data_); }

 private:
  friend class grpc::SerializationTraits<ReceivedReadResponse>;

  grpc::ByteBuffer buffer_;
  std::vector<grpc::Slice> slices_;
  std::vector<ByteChain::Piece> pieces_;
  v1::ReadResponse head_;
  std::vector<ByteChain::Piece> data_;
};

// Makes Read and ReadSmall calls on one channel, as the generated stub would,
// with responses of the type above. Thread-safe.
class ReceivedReadCaller {
 public:
  explicit ReceivedReadCaller(std::shared_ptr<grpc::ChannelInterface> channel);

  std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>> Start(
      grpc::ClientContext* context, const v1::ReadRequest& request) const;

  // One ReadSmall call: `response` holds its message if the status is OK.
  // A server without the method answers UNIMPLEMENTED, and from then on
  // small_reads_served() is false.
  grpc::Status ReadSmall(grpc::ClientContext* context,
                         const v1::ReadRequest& request,
                         ReceivedReadResponse* response) const;
  bool small_reads_served() const { return small_reads_served_.load(); }

 private:
  const std::shared_ptr<grpc::ChannelInterface> channel_;
  // Each registered with the channel once.
  const grpc::internal::RpcMethod read_;
  const grpc::internal::RpcMethod read_small_;
  mutable std::atomic<bool> small_reads_served_{true};
};

}  // namespace verity::client

// How gRPC hands a received message to ReceivedReadResponse: the buffer
// itself, not parsed. The client never sends one.
template <>
class grpc::SerializationTraits<verity::client::ReceivedReadResponse> {
 public:
  static grpc::Status Serialize(const verity::client::ReceivedReadResponse&,
                                grpc::ByteBuffer*, bool*) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "a Read response is never sent by the client");
  }
  // Takes the buffer, as every Deserialize must (gRPC releases it to this
  // call): swapped in, the previous message's buffer is freed.
  static grpc::Status Deserialize(grpc::ByteBuffer* buffer,
                                  verity::client::ReceivedReadResponse* msg) {
    msg->buffer_.Swap(buffer);
    buffer->Clear();
    return grpc::Status::OK;
  }
};

#endif  // VERITYD_CLIENT_SDK_RECEIVED_READ_H_
