// Implements ProgressSink. The line is erased before the inner sink
// finishes, so that a message after it starts on a clean line.

#include "client/cli/progress_sink.h"

namespace verity::cli {

absl::Status ProgressSink::Start(uint64_t size) {
  if (size >= kMinProgressBytes) {
    meter_ = std::make_unique<ProgressMeter>(out_, size);
  }
  return inner_.Start(size);
}

absl::Status ProgressSink::Write(uint64_t offset,
                                 absl::Span<const uint8_t> data) {
  absl::Status status = inner_.Write(offset, data);
  if (status.ok() && meter_ != nullptr) meter_->Add(data.size());
  return status;
}

absl::Status ProgressSink::Finish() {
  if (meter_ != nullptr) meter_->Finish();
  return inner_.Finish();
}

void ProgressSink::Abort() {
  if (meter_ != nullptr) meter_->Finish();
  inner_.Abort();
}

}  // namespace verity::cli
