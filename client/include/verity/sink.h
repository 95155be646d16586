// Where a fetch puts verified bytes: the Sink interface, and sinks for
// memory, files (replaced atomically) and in-order callbacks.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_SINK_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_SINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace verity::sdk {

// Receives the bytes of one Fetch, only ever bytes already verified against
// the trusted digest. A sink serves one Fetch; the caller owns it and keeps
// it alive for the call.
//
// Calls come from the fetching threads: Start, then Write calls, then
// Finish or Abort. Unless SupportsRandomAccess(), Write calls come one at a
// time and in order, each `offset` the end of the previous write. A random
// access sink receives the parts of a parallel fetch concurrently, each part
// in order, the parts never overlapping.
class Sink {
 public:
  virtual ~Sink() = default;

  virtual bool SupportsRandomAccess() const { return false; }

  // Called once, before any Write, with the number of bytes the fetch
  // delivers. An error ends the fetch.
  virtual absl::Status Start(uint64_t /*size*/) { return absl::OkStatus(); }

  // `data` is verified content at `offset` bytes from the start of the
  // range. An error ends the fetch and is returned by it.
  virtual absl::Status Write(uint64_t offset,
                             absl::Span<const uint8_t> data) = 0;

  // Called once after every byte of the range was verified and written.
  virtual absl::Status Finish() { return absl::OkStatus(); }

  // Called instead of Finish when the fetch fails, possibly after Start and
  // some writes.
  virtual void Abort() {}
};

// Collects the range in memory. Random access, so a parallel fetch writes in
// place. Thread-compatible, except for the SDK's concurrent writes to
// disjoint parts during a fetch.
class MemorySink final : public Sink {
 public:
  // Start fails with RESOURCE_EXHAUSTED for a range over `max_size` bytes.
  explicit MemorySink(uint64_t max_size = UINT64_MAX) : max_size_(max_size) {}

  bool SupportsRandomAccess() const override { return true; }
  absl::Status Start(uint64_t size) override;
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override;
  // Empties the buffer: a failed fetch leaves nothing to mistake for content.
  void Abort() override { data_.clear(); }

  // The whole range after a successful fetch; empty after a failed one.
  const std::string& data() const { return data_; }
  std::string Release() { return std::move(data_); }

 private:
  const uint64_t max_size_;
  std::string data_;
};

// Writes the range to a file that appears only when all of it is verified:
// the content goes to a temporary file beside the target, which replaces the
// target on Finish. A failed fetch leaves the target as it was (absent, or
// with its old content) and removes the temporary. Random access (pwrite).
// Thread-compatible, except for the SDK's concurrent writes to disjoint
// parts during a fetch. Owns the temporary file.
class FileSink final : public Sink {
 public:
  // Creates the temporary file in the directory of `path`.
  static absl::StatusOr<std::unique_ptr<FileSink>> Create(
      absl::string_view path);
  ~FileSink() override;

  bool SupportsRandomAccess() const override { return true; }
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override;
  // fsyncs the content, renames it over the target, fsyncs the directory.
  absl::Status Finish() override;
  void Abort() override;

  // The temporary file that becomes the target on Finish(). A program that
  // may be killed by a signal removes it in its handler (`verity get` does);
  // after Finish() or Abort() it no longer exists under this name.
  const std::string& temp_path() const;

 private:
  class Impl;
  explicit FileSink(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

// Passes verified chunks, in order, to a callback: the way to stream a blob
// onward without holding it. A parallel fetch reassembles the parts in order
// first, buffering a bounded amount. The callback runs on one thread at a
// time; an error from it ends the fetch. Thread-compatible.
class CallbackSink final : public Sink {
 public:
  using Callback = std::function<absl::Status(absl::Span<const uint8_t>)>;

  explicit CallbackSink(Callback callback) : callback_(std::move(callback)) {}

  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override;

 private:
  Callback callback_;
  uint64_t next_ = 0;  // the offset the next write must have
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_SINK_H_
