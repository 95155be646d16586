// Runs one Read RPC and passes on only verified bytes: the glue between the
// gRPC stream and ReadStreamVerifier.

#ifndef VERITYD_CLIENT_TESTING_VERIFIED_READ_H_
#define VERITYD_CLIENT_TESTING_VERIFIED_READ_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "client/names/blob_ref.h"
#include "client/sdk/read_stream_verifier.h"
#include "lib/tree/descriptor.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::client {

// What to read. Plain value.
struct ReadOptions {
  uint64_t offset = 0;
  uint64_t length = 0;  // 0 reads to the end of the blob, as in ReadRequest
  verity::v1::PriorityClass priority = verity::v1::PRIORITY_CLASS_NONE;
  VerifierOptions verifier;
};

// Reads `blob` and calls `sink` with verified bytes of the range, in order;
// returns the digest the content was verified against. Errors: the server's
// status (NOT_FOUND, OUT_OF_RANGE, ...), DATA_LOSS from verification, or the
// sink's own. On error the sink may have received a verified prefix.
//
// By digest, the content is proven to be that blob's. By name, the digest
// the server's first message names is trusted: that catches corruption in
// storage or transit, but a lying server can substitute any consistent blob.
// Pass the digest when that matters.
absl::StatusOr<ParsedDigest> ReadVerified(
    verity::v1::Verity::StubInterface& stub, grpc::ClientContext* context,
    const BlobRef& blob, const ReadOptions& options, const ByteSink& sink);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_TESTING_VERIFIED_READ_H_
