// The S3 store's part of a Put (PutPipeline does the rest): the content goes
// up as fixed-size multipart parts while it arrives, never held whole; Stage
// completes the data and puts the tree and the FEC area, and Publish puts the
// descriptor, only if absent, so that the blob appears whole or not at all.
// A small blob (S3StoreOptions::record_max_bytes) is held whole instead, and
// Publish puts it as one record at the descriptor's key, only if absent.
// Private to the S3 store's library.

#ifndef VERITYD_SERVER_STORE_S3_S3_PUT_SINK_H_
#define VERITYD_SERVER_STORE_S3_S3_PUT_SINK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/tree/descriptor.h"
#include "server/store/blob_sink.h"
#include "server/store/s3/part_budget.h"
#include "server/store/s3/s3_store.h"

namespace verity::server {

// Not thread-safe, like every sink; its parts complete on the S3 client's
// thread. The store and the budget must outlive it. Its waits (for a part
// slot, for parts in flight) are why S3Store's Puts run on their own
// executor (S3StoreOptions::put_executor).
//
// Memory: under the store's PartBudget, at most two parts in flight and one
// filling; and the FEC area, at most kMaxStreamedFecBytes.
class S3Store::PutSink final : public BlobSink {
 public:
  // With `expected` (the client's expected_digest), the data goes straight to
  // that blob's data object; without, to a staging object that Stage copies
  // into place once the digest is known. `fec_stream`: the store's FEC area
  // encoded as the content arrives (FecStreamFor); without it, Stage reads
  // the data object back to encode it, if the store has fec_roots.
  // `record`: the Put's size is at most record_max_bytes (its content is
  // held in memory, outside the PartBudget, and `fec_stream` is given if
  // the store has fec_roots).
  PutSink(const S3Store& store, PartBudget& budget,
          const std::optional<ParsedDigest>& expected,
          std::optional<FecStreamEncoder> fec_stream, bool record);
  PutSink(const PutSink&) = delete;
  PutSink& operator=(const PutSink&) = delete;
  ~PutSink() override { Discard(); }

  absl::Status Append(absl::Span<const uint8_t> data) override;
  // Unless the blob is stored and served already (and not marked damaged):
  // the data object (the last part and CompleteMultipartUpload, or one PUT
  // for less than a part, then the copy out of staging), then the tree and
  // the FEC area. Then the signature, if the Put has one, whether or not the
  // blob was stored.
  absl::Status Stage(const SealedBlob& blob) override;
  // The descriptor (or the record), if absent; the quarantine and the
  // damage mark lifted; the name.
  absl::StatusOr<PutResult> Publish(const SealedBlob& blob) override;
  void Abort() override { Discard(); }

 private:
  // Uploads buffer_ as the next part, waiting while two are in flight.
  absl::Status StartPart();
  absl::Status WaitForParts() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PutData(const ParsedDigest& digest);
  // Builds the record of the blob from the content held (record_bytes_).
  absl::Status StageRecord(const SealedBlob& blob);
  // Puts the descriptor or the record: only if absent unless it replaces a
  // quarantined or damaged one. False if another Put's landed first.
  absl::StatusOr<bool> Commit(const SealedBlob& blob);
  // What a Put that stored the blob new knows of it, without a Stat.
  BlobInfo NewBlobInfo(const SealedBlob& blob) const;
  absl::Status PutSignature(const SealedBlob& blob);
  // Puts the blob's FEC area, if the store writes one: the stream's, or
  // ReadBackFec's.
  absl::Status PutFec(const SealedBlob& blob);
  // The FEC area of the blob's data object, read back from S3 a part at a
  // time, and of its tree; nullopt, logged, if it would be over
  // kMaxStreamedFecBytes.
  absl::StatusOr<std::optional<std::string>> ReadBackFec(
      const SealedBlob& blob);
  // Moves the staged data object to `final_key`, server-side.
  absl::Status MoveIntoPlace(const std::string& final_key);
  absl::Status CreateUpload();
  void AbortUpload();
  void ReleaseSlot();
  // Waits for the parts in flight, aborts the upload, frees the buffer and
  // its slot. Idempotent.
  void Discard();

  const S3Store& store_;
  PartBudget& budget_;
  const bool record_;
  std::string record_bytes_;    // Stage's record, for Publish
  const std::string data_key_;  // the blob's data object, or a staging one
  std::string upload_id_;       // empty until the first part
  std::string buffer_;
  bool holds_slot_ = false;  // buffer_ is charged to the PartBudget
  int parts_ = 0;            // started so far
  std::optional<FecStreamEncoder> fec_stream_;
  // What Stage found: the blob stored (its descriptor there), quarantined,
  // marked damaged.
  bool stored_ = false;
  bool quarantined_ = false;
  bool damaged_ = false;

  absl::Mutex mu_;
  absl::CondVar part_done_;
  std::vector<std::string> etags_ ABSL_GUARDED_BY(mu_);  // by part number - 1
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status part_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_PUT_SINK_H_
