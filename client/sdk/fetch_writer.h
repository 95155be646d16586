// The one path from verified bytes to the caller's Sink during a Fetch: the
// sink is started once with the fetch's size, each part's bytes land at their
// offset (in place for a random-access sink, else in order through a bounded
// Reassembler), and the sink is settled at the end: Finish on success, Abort
// on failure.

#ifndef VERITYD_CLIENT_SDK_FETCH_WRITER_H_
#define VERITYD_CLIENT_SDK_FETCH_WRITER_H_

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "client/sdk/reassembler.h"
#include "verity/sink.h"

namespace verity::client {

// What each part of an in-order sink may queue ahead of delivery.
inline constexpr uint64_t kReassemblyBytesPerPart = uint64_t{4} << 20;

// Thread-safe: the parts of a parallel fetch write concurrently, each from
// one thread. Does not own the sink.
class FetchWriter {
 public:
  // The fetch delivers blob bytes from `begin`, as one part (0) unless
  // SplitInto() says otherwise.
  FetchWriter(sdk::Sink& sink, uint64_t begin) : sink_(sink), begin_(begin) {}

  FetchWriter(const FetchWriter&) = delete;
  FetchWriter& operator=(const FetchWriter&) = delete;

  // Before any write: the fetch runs as `parts` parts, numbered in content
  // order, that write concurrently.
  void SplitInto(int parts);

  // Starts the sink, the first time only, with the fetch's end in the blob.
  absl::Status Start(uint64_t end) ABSL_LOCKS_EXCLUDED(mu_);

  // Part `part`'s next verified bytes, at blob offset `offset`. Blocks while
  // an in-order sink's queue for the part is full.
  absl::Status Write(int part, uint64_t offset, absl::Span<const uint8_t> data);

  // Part `part` has written all its bytes.
  absl::Status FinishPart(int part);

  // Fails the parts still writing, with `status`.
  void Abort(const absl::Status& status);

  // Ends the fetch with `status`: on OK, checks that every part arrived and
  // finishes the sink; otherwise, or if that fails, aborts it. Returns the
  // fetch's outcome.
  absl::Status Settle(absl::Status status);

 private:
  sdk::Sink& sink_;
  const uint64_t begin_;
  // Only for a parallel fetch into an in-order sink.
  std::unique_ptr<Reassembler> reassembler_;
  uint64_t delivered_ = 0;  // used by one delivering thread at a time
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status start_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_FETCH_WRITER_H_
