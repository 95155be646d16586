// One Put into the S3 store: the content is hashed as it arrives and goes up
// as fixed-size multipart parts while it arrives, never held whole; on Commit
// the tree and then the descriptor follow, the descriptor only if absent, so
// that the blob appears whole or not at all.

#ifndef VERITYD_SERVER_STORE_S3_S3_PUT_WRITER_H_
#define VERITYD_SERVER_STORE_S3_S3_PUT_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/merkle_builder.h"
#include "lib/merkle_params.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/store.h"

namespace verity::server {

class S3Store;

// Bounds the part buffers of every Put of one store together: a Put takes a
// slot before it fills a part and returns it when the part is uploaded.
// Thread-safe.
class PartBudget {
 public:
  explicit PartBudget(int slots) : free_(slots) {}
  void Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  int free_ ABSL_GUARDED_BY(mu_);
};

// Not thread-safe, like every PutWriter; its parts complete on the S3
// client's thread. The store must outlive it. Destroying it without a
// successful Commit aborts the multipart upload.
//
// Memory: the Merkle tree (1/128 of the data for SHA-256 and 4 KiB blocks)
// and, under the store's PartBudget, at most two parts in flight and one
// filling.
class S3PutWriter final : public PutWriter {
 public:
  // With `expected` (the client's expected_digest), the data goes straight to
  // that blob's data object; without, to a staging object that Commit copies
  // into place once the digest is known.
  S3PutWriter(S3Store* store, const MerkleParams& params,
              std::optional<ParsedDigest> expected);
  ~S3PutWriter() override;

  absl::Status Append(absl::Span<const uint8_t> data) override;
  absl::StatusOr<PutResult> Commit(const std::optional<ParsedDigest>& expected,
                                   absl::string_view name) override;
  uint64_t size() const override { return size_; }

 private:
  // Uploads buffer_ as the next part, waiting while two are in flight.
  absl::Status StartPart();
  absl::Status WaitForParts() ABSL_LOCKS_EXCLUDED(mu_);
  // Puts the data object: the last part and CompleteMultipartUpload, or one
  // PUT for content smaller than a part; then moves it in place if staged.
  absl::Status PutData(const ParsedDigest& digest);
  absl::Status CreateUpload();
  // Stores the data, the tree and the descriptor of `digest`, unless it is
  // stored and served already, and points `name` at it.
  absl::StatusOr<PutResult> Install(const ParsedDigest& digest,
                                    const MerkleTree& tree,
                                    absl::string_view name);
  void AbortUpload();
  absl::Status Fail(absl::Status status);

  S3Store* const store_;
  const std::optional<ParsedDigest> expected_;
  const std::string data_key_;  // the blob's data object, or a staging one
  MerkleBuilder builder_;
  std::string upload_id_;  // empty until the first part
  std::string buffer_;
  bool holds_slot_ = false;  // buffer_ is charged to the PartBudget
  int parts_ = 0;            // started so far
  uint64_t size_ = 0;
  bool finished_ = false;
  absl::Status failure_;

  absl::Mutex mu_;
  absl::CondVar part_done_;
  std::vector<std::string> etags_ ABSL_GUARDED_BY(mu_);  // by part number - 1
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status part_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_PUT_WRITER_H_
