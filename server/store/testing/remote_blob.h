// Test support: a Blob whose bytes are never here, as a network store's are:
// every read is asynchronous, around a local blob that holds the bytes.

#ifndef VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_
#define VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/store.h"

namespace verity::server {

// TryReadNow() is never here; ReadAsync() and Rewrite() are the local
// blob's. Counts the asynchronous reads, per part and per place. Thread-safe.
class RemoteBlob final : public Blob {
 public:
  explicit RemoteBlob(std::shared_ptr<const Blob> local);

  std::optional<absl::Status> TryReadNow(BlobPart, uint64_t,
                                         absl::Span<uint8_t>) const override {
    return std::nullopt;
  }
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override ABSL_LOCKS_EXCLUDED(mu_);
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}
  absl::Status Rewrite(BlobPart part, uint64_t offset,
                       absl::Span<const uint8_t> bytes) const override {
    return local_->Rewrite(part, offset, bytes);
  }

  int reads(BlobPart part) const ABSL_LOCKS_EXCLUDED(mu_);
  // Reads of `part` from `offset`.
  int reads_at(BlobPart part, uint64_t offset) const ABSL_LOCKS_EXCLUDED(mu_);
  // The most reads of one place of any part.
  int most_reads_of_one_place() const ABSL_LOCKS_EXCLUDED(mu_);
  void ResetCounts() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::shared_ptr<const Blob> local_;
  mutable absl::Mutex mu_;
  mutable std::map<std::pair<BlobPart, uint64_t>, int> reads_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_
