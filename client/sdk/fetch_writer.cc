// Implements FetchWriter.

#include "client/sdk/fetch_writer.h"

#include "lib/base/status_macros.h"

namespace verity::client {

void FetchWriter::SplitInto(int parts) {
  if (parts > 1 && !sink_.SupportsRandomAccess()) {
    reassembler_ = std::make_unique<Reassembler>(
        parts, kReassemblyBytesPerPart, [this](absl::Span<const uint8_t> data) {
          RETURN_IF_ERROR(sink_.Write(delivered_, data));
          delivered_ += data.size();
          return absl::OkStatus();
        });
  }
}

absl::Status FetchWriter::Start(uint64_t end) {
  absl::MutexLock lock(&mu_);
  if (!started_) {
    started_ = true;
    start_status_ = sink_.Start(end - begin_);
  }
  return start_status_;
}

absl::Status FetchWriter::Write(int part, uint64_t offset,
                                absl::Span<const uint8_t> data) {
  if (reassembler_ != nullptr) return reassembler_->Write(part, data);
  return sink_.Write(offset - begin_, data);
}

absl::Status FetchWriter::FinishPart(int part) {
  if (reassembler_ == nullptr) return absl::OkStatus();
  return reassembler_->FinishPart(part);
}

void FetchWriter::Abort(const absl::Status& status) {
  if (reassembler_ != nullptr) reassembler_->Abort(status);
}

absl::Status FetchWriter::Settle(absl::Status status) {
  if (status.ok() && reassembler_ != nullptr) status = reassembler_->Done();
  if (status.ok()) status = sink_.Finish();
  if (!status.ok()) sink_.Abort();
  return status;
}

}  // namespace verity::client
