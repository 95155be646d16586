// Implements RemoteBlob.

#include "server/store/testing/remote_blob.h"

#include <algorithm>
#include <utility>

namespace verity::server {

RemoteBlob::RemoteBlob(std::shared_ptr<const Blob> local)
    : Blob(*local), local_(std::move(local)) {}

void RemoteBlob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                           ReadDone done) const {
  bool fail = false;
  {
    absl::MutexLock lock(&mu_);
    fail = fail_;
    if (!fail) ++reads_[{part, offset}];
  }
  // The local blob's thread answers either way: always later.
  local_->ReadAsync(
      part, offset, std::move(into),
      [self = std::static_pointer_cast<const RemoteBlob>(shared_from_this()),
       fail, done = std::move(done)](absl::StatusOr<Buffer> read) mutable {
        if (fail) read = absl::UnavailableError("down");
        {
          absl::MutexLock lock(&self->mu_);
          if (self->hold_) {
            self->held_.push_back(
                [done = std::move(done), read = std::move(read)]() mutable {
                  std::move(done)(std::move(read));
                });
            return;
          }
        }
        std::move(done)(std::move(read));
      });
}

void RemoteBlob::FailReads(bool fail) {
  absl::MutexLock lock(&mu_);
  fail_ = fail;
}

void RemoteBlob::HoldAnswers(bool hold) {
  absl::MutexLock lock(&mu_);
  hold_ = hold;
}

void RemoteBlob::AwaitHeld(size_t n) const {
  absl::MutexLock lock(&mu_);
  const auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return held_.size() >= n;
  };
  mu_.Await(absl::Condition(&enough));
}

void RemoteBlob::Release() const {
  std::vector<absl::AnyInvocable<void() &&>> held;
  {
    absl::MutexLock lock(&mu_);
    held.swap(held_);
  }
  for (auto& answer : held) std::move(answer)();
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
