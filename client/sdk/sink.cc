// Implements the SDK's sinks. FileSink is AtomicFileWriter behind the Sink
// interface; MemorySink sizes its buffer at Start so that parts can be
// written in place.

#include "verity/sink.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/sdk/atomic_file.h"
#include "lib/base/status_macros.h"

namespace verity::sdk {

absl::Status MemorySink::Start(uint64_t size) {
  if (size > max_size_ || size > data_.max_size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a range of ", size,
                     " bytes exceeds the memory sink's limit of ", max_size_));
  }
  data_.assign(size, '\0');
  return absl::OkStatus();
}

absl::Status MemorySink::Write(uint64_t offset,
                               absl::Span<const uint8_t> data) {
  if (offset > data_.size() || data.size() > data_.size() - offset) {
    return absl::InternalError(absl::StrCat("a write at ", offset, " of ",
                                            data.size(), " bytes overruns the ",
                                            data_.size(), "-byte range"));
  }
  if (!data.empty()) std::memcpy(&data_[offset], data.data(), data.size());
  return absl::OkStatus();
}

class FileSink::Impl {
 public:
  explicit Impl(std::unique_ptr<client::AtomicFileWriter> writer)
      : writer(std::move(writer)) {}

  // Null once aborted, which removes the temporary file.
  std::unique_ptr<client::AtomicFileWriter> writer;
  const std::string temp_path = writer->temp_path();
};

absl::StatusOr<std::unique_ptr<FileSink>> FileSink::Create(
    absl::string_view path) {
  ASSIGN_OR_RETURN(std::unique_ptr<client::AtomicFileWriter> writer,
                   client::AtomicFileWriter::Create(path));
  return std::unique_ptr<FileSink>(
      new FileSink(std::make_unique<Impl>(std::move(writer))));
}

FileSink::FileSink(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FileSink::~FileSink() = default;

const std::string& FileSink::temp_path() const { return impl_->temp_path; }

absl::Status FileSink::Write(uint64_t offset, absl::Span<const uint8_t> data) {
  if (impl_->writer == nullptr) {
    return absl::FailedPreconditionError("the file sink was aborted");
  }
  return impl_->writer->WriteAt(offset, data);
}

absl::Status FileSink::Finish() {
  if (impl_->writer == nullptr) {
    return absl::FailedPreconditionError("the file sink was aborted");
  }
  return impl_->writer->Commit();
}

void FileSink::Abort() { impl_->writer.reset(); }

absl::Status CallbackSink::Write(uint64_t offset,
                                 absl::Span<const uint8_t> data) {
  // The SDK delivers in order; anything else would be a bug worth stopping.
  if (offset != next_) {
    return absl::InternalError(
        absl::StrCat("write at ", offset, " where ", next_, " was due"));
  }
  next_ += data.size();
  return callback_(data);
}

}  // namespace verity::sdk
