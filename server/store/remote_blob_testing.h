// Test support: a Blob whose reads behave as a network store's do, answered
// later on another thread, around a local blob that holds the bytes.

#ifndef VERITYD_SERVER_STORE_REMOTE_BLOB_TESTING_H_
#define VERITYD_SERVER_STORE_REMOTE_BLOB_TESTING_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/store.h"

namespace verity::server {

// Nothing is local; every Read() completes on a thread of its own. Counts the
// reads. Thread-safe; joins its threads when destroyed.
class RemoteBlob final : public Blob {
 public:
  explicit RemoteBlob(std::shared_ptr<const Blob> local);
  ~RemoteBlob() override;

  bool IsLocal(BlobPart, uint64_t, uint64_t) const override { return false; }
  void Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out,
            ReadDone done) const override;
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}

  int reads(BlobPart part) const {
    return reads_[static_cast<int>(part)].load();
  }

 private:
  const std::shared_ptr<const Blob> local_;
  mutable std::atomic<int> reads_[2] = {0, 0};
  mutable absl::Mutex mu_;
  mutable std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_REMOTE_BLOB_TESTING_H_
