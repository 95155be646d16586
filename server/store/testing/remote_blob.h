// Test support: a Blob whose bytes are never here, as a network store's are:
// every read is asynchronous, around a local blob that holds the bytes.

#ifndef VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_
#define VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "server/store/store.h"

namespace verity::server {

// TryReadNow() is never here; ReadAsync() is the local blob's. Counts the
// asynchronous reads. Thread-safe.
class RemoteBlob final : public Blob {
 public:
  explicit RemoteBlob(std::shared_ptr<const Blob> local);

  std::optional<absl::Status> TryReadNow(BlobPart, uint64_t,
                                         absl::Span<uint8_t>) const override {
    return std::nullopt;
  }
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override;
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}

  int reads(BlobPart part) const {
    return reads_[static_cast<int>(part)].load();
  }

 private:
  const std::shared_ptr<const Blob> local_;
  mutable std::atomic<int> reads_[2] = {0, 0};
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_REMOTE_BLOB_H_
