// One Put, for every backend: the content is hashed as it arrives and handed
// to the backend's BlobSink, and the limit, the name and digest checks, the
// commit order and the failure that ends the Put are decided here, once.

#ifndef VERITYD_SERVER_STORE_PUT_PIPELINE_H_
#define VERITYD_SERVER_STORE_PUT_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_builder.h"
#include "lib/tree/merkle_params.h"
#include "server/store/blob_sink.h"
#include "server/store/store.h"

namespace verity::server {

// INVALID_ARGUMENT for params ValidateMerkleParams rejects or a block size
// outside [kMinServedBlockSize, kMaxServedBlockSize]: every BeginPut's check.
absl::Status ValidatePutParams(const MerkleParams& params);

struct PutPipelineOptions {
  // The largest blob the store accepts; at most kMaxDataSize.
  uint64_t max_bytes = kMaxDataSize;
  // The digest BeginPut was given, if any: Commit checks the content against
  // it as well as against its own `expected`.
  std::optional<ParsedDigest> expected;
  // What executor() returns; must outlive the writer. nullptr: none.
  Executor* executor = nullptr;
  // The content's size BeginPut was given, if any: content of another size
  // fails the Put with INVALID_ARGUMENT.
  std::optional<uint64_t> size;
};

// RESOURCE_EXHAUSTED if a Put's declared `size` exceeds `max_bytes`: every
// BeginPut's check.
absl::Status CheckPutSize(std::optional<uint64_t> size, uint64_t max_bytes);

// A PutWriter over a BlobSink (see PutWriter and BlobSink for the contract).
// Not thread-safe. Owns the sink; the store the sink writes to must outlive
// it.
//
// Commit's order: the name (and the sizes of its statement and of the
// signature) is checked, the tree finished, the digest checked
// against both expectations; only then does the sink Stage the blob, and
// only after that Publish it. Any failure Aborts the sink at once and is
// returned by every later call; after a successful Commit, they return
// FAILED_PRECONDITION.
//
// Memory: the Merkle tree, built here, about data_size * digest_size /
// block_size bytes (1/128 of the data for SHA-256 with 4 KiB blocks), and
// whatever the sink buffers.
class PutPipeline final : public PutWriter {
 public:
  // `params` must pass ValidatePutParams.
  PutPipeline(const MerkleParams& params, PutPipelineOptions options,
              std::unique_ptr<BlobSink> sink);
  PutPipeline(const PutPipeline&) = delete;
  PutPipeline& operator=(const PutPipeline&) = delete;
  // Aborts the sink unless Commit succeeded.
  ~PutPipeline() override;

  // RESOURCE_EXHAUSTED past max_bytes, with nothing of `data` kept; else
  // the sink's error.
  absl::Status Append(absl::Span<const uint8_t> data) override;
  // Stage, then Publish.
  absl::StatusOr<PutResult> Commit(const PutCommit& commit) override;
  using PutWriter::Commit;
  // Commit in two steps, for a store that stages many Puts before it
  // publishes any (FileStore::PutBatch): Stage hashes and checks the content
  // and stages it through the sink; Publish publishes what Stage staged.
  // A failure of either ends the Put, as Commit's does.
  absl::Status Stage(const PutCommit& commit);
  absl::StatusOr<PutResult> Publish();
  uint64_t size() const override { return size_; }
  Executor* executor() const override { return options_.executor; }

 private:
  // The hashed content, once the name and the digest are checked.
  absl::StatusOr<SealedBlob> Seal(const PutCommit& commit);
  // Ends the Put with `status`: Aborts the sink and remembers it.
  absl::Status Fail(absl::Status status);
  // What a call after the end returns.
  absl::Status Ended() const;

  const PutPipelineOptions options_;
  const std::unique_ptr<BlobSink> sink_;
  MerkleBuilder builder_;
  uint64_t size_ = 0;
  // What Stage staged, for Publish.
  std::optional<SealedBlob> staged_;
  bool finished_ = false;
  absl::Status failure_;  // OK once finished_: committed
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_PUT_PIPELINE_H_
