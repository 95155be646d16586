// A serialized ReadResponse held in pieces (the slices it was received in),
// parsed without copying its data: every field but `data` is copied out and
// parsed by protobuf, and `data` is returned as the parts of the pieces that
// hold it. The counterpart of the server's read_response_wire.

#ifndef VERITYD_PROTO_READ_RESPONSE_PIECES_H_
#define VERITYD_PROTO_READ_RESPONSE_PIECES_H_

#include <vector>

#include "absl/status/status.h"
#include "lib/base/byte_chain.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity {

// Parses `message` into `head` (cleared first; its data stays empty) and the
// parts of `message` that hold the data field, into `data` (cleared first),
// which then point into `message`'s pieces. For a message protobuf accepts,
// the result is what ParseFromString gives, with the data moved out (unknown
// fields, groups among them, are skipped). INVALID_ARGUMENT for a message
// that does not parse.
absl::Status ParseReadResponsePieces(const ByteChain& message,
                                     v1::ReadResponse* head,
                                     std::vector<ByteChain::Piece>* data);

}  // namespace verity

#endif  // VERITYD_PROTO_READ_RESPONSE_PIECES_H_
