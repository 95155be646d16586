// Implements RemoteBlob.

#include "server/store/testing/remote_blob.h"

#include <algorithm>
#include <utility>

namespace verity::server {

RemoteBlob::RemoteBlob(std::shared_ptr<const Blob> local)
    : Blob(*local), local_(std::move(local)) {}

void RemoteBlob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                           ReadDone done) const {
  {
    absl::MutexLock lock(&mu_);
    ++reads_[{part, offset}];
  }
  local_->ReadAsync(part, offset, std::move(into), std::move(done));
}

int RemoteBlob::reads(BlobPart part) const {
  absl::MutexLock lock(&mu_);
  int reads = 0;
  for (const auto& [place, count] : reads_) {
    if (place.first == part) reads += count;
  }
  return reads;
}

int RemoteBlob::reads_at(BlobPart part, uint64_t offset) const {
  absl::MutexLock lock(&mu_);
  const auto it = reads_.find({part, offset});
  return it == reads_.end() ? 0 : it->second;
}

int RemoteBlob::most_reads_of_one_place() const {
  absl::MutexLock lock(&mu_);
  int most = 0;
  for (const auto& [place, count] : reads_) most = std::max(most, count);
  return most;
}

void RemoteBlob::ResetCounts() {
  absl::MutexLock lock(&mu_);
  reads_.clear();
}

}  // namespace verity::server
