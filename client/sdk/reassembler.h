// Puts the parts of a parallel fetch back in order for a sink that needs
// order, with a bounded buffer: parts running ahead wait rather than grow
// memory, and their stalled streams push back on the server.

#ifndef VERITYD_CLIENT_SDK_REASSEMBLER_H_
#define VERITYD_CLIENT_SDK_REASSEMBLER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace verity::client {

// Parts are numbered 0..n-1 in content order; part i's bytes are delivered
// after all of part i-1's. The part being delivered (the head) goes straight
// to `deliver` when nothing is queued before it; a later part queues up to
// `max_buffered_per_part` bytes (at least one write), then its writer
// waits. `deliver` runs on one thread at a time, with no lock held.
//
// Thread-safe; each part must be written by one thread at a time.
class Reassembler {
 public:
  using Deliver = std::function<absl::Status(absl::Span<const uint8_t>)>;

  Reassembler(int parts, uint64_t max_buffered_per_part, Deliver deliver);

  Reassembler(const Reassembler&) = delete;
  Reassembler& operator=(const Reassembler&) = delete;

  // Part `part`'s next bytes. Blocks while the part's queue is full. Returns
  // the first error of `deliver` or the status given to Abort(), once there
  // is one.
  absl::Status Write(int part, absl::Span<const uint8_t> data)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Part `part` has written everything.
  absl::Status FinishPart(int part) ABSL_LOCKS_EXCLUDED(mu_);

  // Fails every waiting and later call with `status` (the first error wins).
  void Abort(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  // After every part finished: OK if everything was delivered.
  absl::Status Done() const ABSL_LOCKS_EXCLUDED(mu_);

  // The most bytes queued at once, for tests of the bound.
  uint64_t peak_buffered_bytes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Part {
    std::deque<std::string> chunks;
    uint64_t bytes = 0;
    bool finished = false;
  };

  bool HasRoom(int part, size_t size) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Enqueue(int part, absl::Span<const uint8_t> data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Drain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DeliverUnlocked(absl::Span<const uint8_t> data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint64_t max_buffered_per_part_;
  const Deliver deliver_;
  mutable absl::Mutex mu_;
  std::vector<Part> parts_ ABSL_GUARDED_BY(mu_);
  size_t head_ ABSL_GUARDED_BY(mu_) = 0;
  // A thread is in deliver_; only it may deliver, which keeps the order.
  bool delivering_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  uint64_t buffered_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t peak_buffered_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_REASSEMBLER_H_
