// What a backend does for a Put: keep the content as it arrives, then store it
// as a blob. Everything else of a Put (hashing, the size limit, the name and
// digest checks, the order of the steps, what a failure ends) is PutPipeline's
// (put_pipeline.h), written once for every backend.

#ifndef VERITYD_SERVER_STORE_BLOB_SINK_H_
#define VERITYD_SERVER_STORE_BLOB_SINK_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_builder.h"
#include "server/store/store.h"

namespace verity::server {

// A Put's content, hashed and checked: what a sink stores. Plain value.
struct SealedBlob {
  ParsedDigest digest;
  std::string digest_text;  // digest.ToString()
  MerkleTree tree;          // its descriptor and serialized tree
  // name.name is a valid name, or empty: no name to record; its statement
  // fits.
  NameWrite name;
  // Stored with the blob, replacing the one it had; empty: the stored one
  // stays. At most kMaxFsveritySignatureSize bytes.
  std::string fsverity_signature;
  bool tree_manifest = false;  // PutCommit::tree_manifest
};

// One Put's storage. Not thread-safe. PutPipeline calls Append for each piece
// of content in order; then, only for content that hashed to the digest
// expected and with a valid name, Stage and, if it succeeded, Publish. After
// any failure, and for a Put abandoned before Publish succeeded, it calls
// Abort instead, once. A sink never sees a call after Abort, nor after
// Publish succeeded.
class BlobSink {
 public:
  virtual ~BlobSink() = default;

  // Keeps `data`, the next bytes of the content. RESOURCE_EXHAUSTED if the
  // space is full; INTERNAL or UNAVAILABLE for I/O errors.
  virtual absl::Status Append(absl::Span<const uint8_t> data) = 0;

  // Makes the content, blob.tree and blob.fsverity_signature durable as
  // blob.digest's, but not yet visible: from here on a crash must leave the
  // blob whole or absent. A sink may skip what the store serves already.
  virtual absl::Status Stage(const SealedBlob& blob) = 0;

  // The commit point: makes the staged blob visible, all of it at once (or
  // finds it stored and served already: PutResult::already_present, and then
  // replaces its signature if blob.fsverity_signature is set), then writes
  // blob.name as Store::SetName does (its check included). Returns only once
  // that is durable. If the blob is stored but the name fails, the error is
  // returned, the blob stays and the name is as it was.
  virtual absl::StatusOr<PutResult> Publish(const SealedBlob& blob) = 0;

  // Discards at once whatever this Put holds that is not part of a stored
  // blob (a staging directory, a multipart upload, part buffers), so that a
  // failed Put frees its space now, not when its writer goes.
  virtual void Abort() = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_BLOB_SINK_H_
