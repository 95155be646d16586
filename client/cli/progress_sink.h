// A Sink that shows a progress line for what passes through it to another
// sink, for `verity get` on a terminal.

#ifndef VERITYD_CLIENT_CLI_PROGRESS_SINK_H_
#define VERITYD_CLIENT_CLI_PROGRESS_SINK_H_

#include <cstdint>
#include <cstdio>
#include <memory>

#include "client/cli/progress_meter.h"
#include "verity/sink.h"

namespace verity::cli {

// Transfers at least this large get a progress line; smaller ones finish
// before it would be read.
inline constexpr uint64_t kMinProgressBytes = uint64_t{8} << 20;

// Forwards every call to `inner` (not owned) and, for a range of at least
// kMinProgressBytes, draws a ProgressMeter on `out`, erased at the end.
// Thread-safe as `inner` is.
class ProgressSink final : public sdk::Sink {
 public:
  ProgressSink(sdk::Sink& inner, std::FILE* out) : inner_(inner), out_(out) {}

  bool SupportsRandomAccess() const override {
    return inner_.SupportsRandomAccess();
  }
  absl::Status Start(uint64_t size) override;
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override;
  absl::Status Finish() override;
  void Abort() override;

 private:
  sdk::Sink& inner_;
  std::FILE* const out_;
  // Set by Start, before the concurrent writes.
  std::unique_ptr<ProgressMeter> meter_;
};

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_PROGRESS_SINK_H_
