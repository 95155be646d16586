// A ReadResponse on the wire without copying its data: the small head (every
// field but `data`) is serialized by protobuf, and the data follows it as a
// gRPC slice over the chunk's own buffer, which gRPC releases once the bytes
// are written: the buffer then goes back to its pool, from gRPC's thread.
// `data` is the message's last field (number 5), so the result is byte for byte
// what protobuf would have serialized.

#ifndef VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_
#define VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_

#include <grpcpp/support/byte_buffer.h>

#include "lib/base/buffer_pool.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::server {

// The serialized `head` (whose data must be empty) followed by `data` as the
// message's data field. Takes `data`; its bytes are not copied, and it is
// destroyed (a pooled buffer returned) when gRPC releases the last reference
// to its slice.
grpc::ByteBuffer SerializeReadResponse(const v1::ReadResponse& head,
                                       Buffer data);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_RESPONSE_WIRE_H_
