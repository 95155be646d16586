// Uploads a local file with Put. The digest is computed locally first and
// sent as expected_digest, so the server stores nothing unless it computes
// the same digest from what it received.

#ifndef VERITYD_CLIENT_SDK_FILE_UPLOAD_H_
#define VERITYD_CLIENT_SDK_FILE_UPLOAD_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::client {

// Plain value.
// What every Put sends in its header, and the content bytes per message.
struct PutSettings {
  MerkleParams params;
  std::string name;                // empty: store without naming it
  std::string name_statement;      // with `name` only: its signed statement
  std::string fsverity_signature;  // `fsverity sign`'s, stored with the blob
  // If set, the content must have this digest, else DATA_LOSS: a file is
  // checked before anything is sent, a stream by the server as it arrives.
  std::optional<ParsedDigest> expected;
  bool tree_manifest = false;  // the content is a tree manifest
  // Bytes of content per PutRequest: large enough to amortize per-message
  // costs, well under gRPC's default 4 MiB message limit.
  size_t chunk_size = size_t{1} << 20;
};

// The header of a Put with `settings`, content size unset.
verity::v1::PutHeader PutHeaderOf(const PutSettings& settings);

struct UploadOptions : PutSettings {
  int hash_threads = 1;
};

// Plain value.
struct UploadResult {
  ParsedDigest digest;
  bool already_present = false;
  verity::v1::BlobInfo info;  // checked against `digest`
};

// Sends what `send` writes to one Put stream; `send` returns false if the
// stream broke (the call's status then says why), or an error of its own, which
// cancels the call.
using PutSender = std::function<absl::StatusOr<bool>(
    grpc::ClientWriterInterface<verity::v1::PutRequest>& writer)>;
absl::StatusOr<verity::v1::PutResponse> RunPut(
    verity::v1::Verity::StubInterface& stub, grpc::ClientContext* context,
    const PutSender& send);

// Hashes the file at `path`, then streams the same bytes (read again through
// the same descriptor) to the server. ABORTED if the file shrinks meanwhile;
// if it changes otherwise, the server's digest differs and the Put fails with
// DATA_LOSS. The BlobInfo returned is checked against the local digest.
absl::StatusOr<UploadResult> UploadFile(verity::v1::Verity::StubInterface& stub,
                                        grpc::ClientContext* context,
                                        absl::string_view path,
                                        const UploadOptions& options);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_FILE_UPLOAD_H_
