// Implements RemoteBlob.

#include "server/store/remote_blob_testing.h"

#include <utility>

namespace verity::server {

RemoteBlob::RemoteBlob(std::shared_ptr<const Blob> local)
    : Blob(*local), local_(std::move(local)) {}

RemoteBlob::~RemoteBlob() {
  absl::MutexLock lock(&mu_);
  for (std::thread& thread : threads_) {
    // A read's callback may hold the last reference, as with a real store:
    // then this runs on that read's thread, which ends right after.
    if (thread.get_id() == std::this_thread::get_id()) {
      thread.detach();
    } else {
      thread.join();
    }
  }
}

void RemoteBlob::Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out,
                      ReadDone done) const {
  ++reads_[static_cast<int>(part)];
  absl::MutexLock lock(&mu_);
  threads_.emplace_back(
      [this, part, offset, out, done = std::move(done)]() mutable {
        local_->Read(part, offset, out, std::move(done));
      });
}

}  // namespace verity::server
