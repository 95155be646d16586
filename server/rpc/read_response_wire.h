// A ReadResponse on the wire without copying its data: the small head (every
// field but `data`) is serialized by protobuf, and the data follows it as a
// gRPC slice over the chunk's own buffer, which gRPC releases once the bytes
// are written: the buffer then goes back to its pool, from gRPC's thread.
// `data` is the message's last field (number 5), so the result is byte for byte
// what protobuf would have serialized. A BatchReadResponse frames such
// messages, again without copying their data.

#ifndef VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_
#define VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_

#include <grpcpp/support/byte_buffer.h>

#include <vector>

#include "absl/status/status.h"
#include "lib/base/buffer_pool.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::server {

// The serialized `head` (whose data must be empty) followed by `data` as the
// message's data field. Takes `data`; its bytes are not copied, and it is
// destroyed (a pooled buffer returned) when gRPC releases the last reference
// to its slice.
grpc::ByteBuffer SerializeReadResponse(const v1::ReadResponse& head,
                                       Buffer data);

// One blob of a BatchReadResponse: why it was not read, or (OK) its
// ReadResponse as SerializeReadResponse() made it.
struct BatchReadPart {
  absl::Status status;
  grpc::ByteBuffer read;
};

// The BatchReadResponse of `parts`, in order. Each read's slices are shared
// with the result, not copied.
grpc::ByteBuffer SerializeBatchReadResponse(std::vector<BatchReadPart>& parts);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_
