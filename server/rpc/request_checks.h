// The checks of the Verity service's requests that need no store: what a Read,
// a Put header, a List, a Stat or a Delete may ask for. Every refusal is
// INVALID_ARGUMENT; the reactors and unary calls apply these first, then look
// the blob up.

#ifndef VERITYD_SERVER_RPC_REQUEST_CHECKS_H_
#define VERITYD_SERVER_RPC_REQUEST_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/priority_class.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "lib/tree/read_plan.h"
#include "proto/limits.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::server {

// The calls' limits (proto/limits.h).
using ::verity::v1::kMaxBatchReadBlobs;
using ::verity::v1::kMaxBatchReadBytes;
using ::verity::v1::kMaxBatchUpdateBlobBytes;
using ::verity::v1::kMaxBatchUpdateBlobs;
using ::verity::v1::kMaxBatchUpdateBytes;
using ::verity::v1::kMaxFindMissingDigests;

// The most blobs a List page holds; also the page size of page_size 0.
inline constexpr size_t kMaxListPageSize = 1000;

// The blob a request names: by digest (parsed) or by name (valid, and resolved
// by the store later). Plain value.
struct BlobSelector {
  bool by_name = false;
  ParsedDigest digest;  // unless by_name
  std::string name;     // if by_name
};

// `digest` is the request's digest text, `name` its name, `by_name` whether
// its oneof holds the name.
absl::StatusOr<BlobSelector> CheckBlobSelector(absl::string_view digest,
                                               absl::string_view name,
                                               bool by_name);

// A Read as asked: the blob, the class it is served in, and the bytes
// [offset, offset + *length), or to the end of the blob without a length
// (ReadRequest.length 0). The range is checked against the blob later.
struct CheckedRead {
  BlobSelector blob;
  PriorityClass priority_class = PriorityClass::kNone;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

// Refuses an unknown priority class, more than `max_have_tree_blocks` held
// tree blocks, a request naming no valid blob, and a range whose end
// overflows (whatever the blob, see ValidateRange).
absl::StatusOr<CheckedRead> CheckReadRequest(
    const v1::ReadRequest& request,
    size_t max_have_tree_blocks = kMaxHaveTreeBlocks);

// A Put's header, with fs-verity's defaults applied.
struct CheckedPutHeader {
  MerkleParams params;
  std::optional<ParsedDigest> expected;  // expected_digest, if given
  std::string name;                      // empty: no name
  std::string name_statement;            // empty: none; only with a name
  std::string fsverity_signature;        // empty: none
  std::optional<uint64_t> size;          // content_size, if given
  bool tree_manifest = false;
};

// Refuses invalid tree params, a malformed expected digest or one of another
// algorithm than the params, an invalid name, a name statement without a
// name or over kMaxNameStatementSize bytes (what it says is NamePolicy's to
// check), and a signature that CheckFsveritySignatureFormat refuses.
absl::StatusOr<CheckedPutHeader> CheckPutHeader(const v1::PutHeader& header);

// A SetName as asked.
struct CheckedSetName {
  ParsedDigest digest;
  std::string name;
  std::string name_statement;  // empty: none
};

// Refuses an invalid name, a malformed digest, and a statement over
// kMaxNameStatementSize bytes.
absl::StatusOr<CheckedSetName> CheckSetNameRequest(
    const v1::SetNameRequest& request);

// The digests a FindMissing asks about, in its order, each once. Refuses
// more than kMaxFindMissingDigests and a malformed digest.
absl::StatusOr<std::vector<ParsedDigest>> CheckFindMissingRequest(
    const v1::FindMissingRequest& request);

// The data bytes of a BatchUpdate's blobs. INVALID_ARGUMENT for more than
// kMaxBatchUpdateBlobs blobs or kMaxBatchUpdateBytes of data.
absl::StatusOr<uint64_t> CheckBatchUpdateRequest(
    const v1::BatchUpdateRequest& request);

// One blob of a BatchUpdate, as asked.
struct CheckedBatchBlob {
  MerkleParams params;
  ParsedDigest digest;
};

// Refuses a blob whose params or digest a Put's header would refuse (the
// digest is required), and one over kMaxBatchUpdateBlobBytes.
absl::StatusOr<CheckedBatchBlob> CheckBatchUpdateBlob(
    const v1::BatchUpdateRequest::Blob& blob);

// A BatchRead's requests, one per digest in its order, each a whole-blob
// read by a client that holds the blob's whole tree, at the call's class.
// Refuses more than kMaxBatchReadBlobs digests, a malformed one and an
// invalid class.
absl::StatusOr<std::vector<v1::ReadRequest>> CheckBatchReadRequest(
    const v1::BatchReadRequest& request);

// The blobs one List page holds: page_size, at most kMaxListPageSize, which
// page_size 0 also means.
size_t ListPageSize(const v1::ListRequest& request);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_REQUEST_CHECKS_H_
