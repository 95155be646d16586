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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "server/store/store.h"

namespace verity::server {

// TryReadNow() is never here; ReadAsync() and Rewrite() are the local
// blob's. Counts the asynchronous reads answered with the local blob's bytes,
// per part and per place; can fail every read, as an unreachable store does,
// or hold every answer, as a store slower than what happens meanwhile.
// Thread-safe.
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

  // While set, every read answers UNAVAILABLE (later, as a read does).
  void FailReads(bool fail) ABSL_LOCKS_EXCLUDED(mu_);
  // While set, every answer is held until Release().
  void HoldAnswers(bool hold) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `n` answers are held.
  void AwaitHeld(size_t n) const ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers every held answer, on this thread.
  void Release() const ABSL_LOCKS_EXCLUDED(mu_);

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
  bool fail_ ABSL_GUARDED_BY(mu_) = false;
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  mutable std::vector<absl::AnyInvocable<void() &&>> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_
