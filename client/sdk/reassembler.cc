// Implements Reassembler. Whichever thread finds the head's data ready
// delivers it, so a finished part never waits for its successor's writer.
// Invariant whenever mu_ is free: unless delivering_ or failed, the head's
// queue is empty and the head is not a finished part with a successor.

#include "client/sdk/reassembler.h"

#include <algorithm>
#include <utility>

namespace verity::client {

Reassembler::Reassembler(int parts, uint64_t max_buffered_per_part,
                         Deliver deliver)
    : max_buffered_per_part_(max_buffered_per_part),
      deliver_(std::move(deliver)),
      parts_(std::max(parts, 1)) {}

absl::Status Reassembler::Write(int part, absl::Span<const uint8_t> data) {
  absl::MutexLock lock(&mu_);
  const auto ready = [this, part, &data]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !status_.ok() || HasRoom(part, data.size());
  };
  mu_.Await(absl::Condition(&ready));
  if (!status_.ok()) return status_;
  if (static_cast<size_t>(part) == head_ && !delivering_ &&
      parts_[part].chunks.empty()) {
    // The common case for the head: no copy.
    if (absl::Status status = DeliverUnlocked(data); !status.ok()) {
      return status;
    }
  } else {
    Enqueue(part, data);
  }
  return Drain();
}

absl::Status Reassembler::FinishPart(int part) {
  absl::MutexLock lock(&mu_);
  parts_[part].finished = true;
  return Drain();
}

void Reassembler::Abort(absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (status_.ok()) {
    status_ = status.ok() ? absl::CancelledError("aborted") : std::move(status);
  }
}

absl::Status Reassembler::Done() const {
  absl::MutexLock lock(&mu_);
  if (!status_.ok()) return status_;
  if (head_ + 1 != parts_.size() || !parts_[head_].finished ||
      !parts_[head_].chunks.empty() || delivering_) {
    return absl::InternalError("reassembly ended before every part arrived");
  }
  return absl::OkStatus();
}

uint64_t Reassembler::peak_buffered_bytes() const {
  absl::MutexLock lock(&mu_);
  return peak_buffered_;
}

bool Reassembler::HasRoom(int part, size_t size) const {
  const uint64_t queued = parts_[part].bytes;
  return queued == 0 || queued + size <= max_buffered_per_part_;
}

void Reassembler::Enqueue(int part, absl::Span<const uint8_t> data) {
  parts_[part].chunks.emplace_back(data.begin(), data.end());
  parts_[part].bytes += data.size();
  buffered_ += data.size();
  peak_buffered_ = std::max(peak_buffered_, buffered_);
}

absl::Status Reassembler::Drain() {
  while (status_.ok() && !delivering_) {
    Part& head = parts_[head_];
    if (!head.chunks.empty()) {
      const std::string chunk = std::move(head.chunks.front());
      head.chunks.pop_front();
      head.bytes -= chunk.size();
      buffered_ -= chunk.size();
      DeliverUnlocked(
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(chunk.data()),
                              chunk.size()))
          .IgnoreError();  // recorded in status_
    } else if (head.finished && head_ + 1 < parts_.size()) {
      ++head_;
    } else {
      break;
    }
  }
  return status_;
}

absl::Status Reassembler::DeliverUnlocked(absl::Span<const uint8_t> data) {
  delivering_ = true;
  mu_.Unlock();
  absl::Status status = deliver_(data);
  mu_.Lock();
  delivering_ = false;
  if (!status.ok() && status_.ok()) status_ = status;
  return status;
}

}  // namespace verity::client
