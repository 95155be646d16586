// Implements FileBlobSink: write as data arrives, then make the staged blob
// durable before the store installs it.

#include "server/store/file/file_blob_sink.h"

#include <fcntl.h>

#include <utility>

#include "lib/status_macros.h"
#include "server/store/file/file_blob.h"

namespace verity::server {
namespace {

// Writeback of the data file is started every this many bytes.
constexpr uint64_t kWritebackBytes = 8 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<FileBlobSink>> FileBlobSink::Create(
    FileSystem& fs, std::string dir, InstallFn install) {
  const std::string data_path = JoinPath(dir, "data");
  absl::StatusOr<UniqueFd> data_fd =
      OpenFile(fs, data_path, O_WRONLY | O_CREAT | O_EXCL);
  if (!data_fd.ok()) {
    fs.RemoveRecursively(dir).IgnoreError();  // tmp/ is also emptied at Open
    return data_fd.status();
  }
  return std::unique_ptr<FileBlobSink>(new FileBlobSink(
      fs, std::move(dir), std::move(install), *std::move(data_fd)));
}

FileBlobSink::FileBlobSink(FileSystem& fs, std::string dir, InstallFn install,
                           UniqueFd data_fd)
    : fs_(fs),
      dir_(std::move(dir)),
      install_(std::move(install)),
      data_fd_(std::move(data_fd)) {}

void FileBlobSink::Discard() {
  if (discarded_) return;
  discarded_ = true;
  data_fd_ = UniqueFd();
  // A leftover is harmless: the store empties tmp/ when it opens.
  fs_.RemoveRecursively(dir_).IgnoreError();
}

absl::Status FileBlobSink::Append(absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(WriteAll(fs_, data_fd_.get(), data, JoinPath(dir_, "data")));
  size_ += data.size();
  if (size_ - written_back_ >= kWritebackBytes) {
    fs_.StartWriteback(data_fd_.get(), written_back_, size_ - written_back_);
    written_back_ = size_;
  }
  return absl::OkStatus();
}

absl::Status FileBlobSink::Stage(const SealedBlob& blob) {
  const std::string data_path = JoinPath(dir_, "data");
  RETURN_IF_ERROR(fs_.Fsync(data_fd_.get(), data_path));
  RETURN_IF_ERROR(data_fd_.Close(data_path));
  ASSIGN_OR_RETURN(const std::string descriptor,
                   blob.tree.descriptor.Serialize());
  RETURN_IF_ERROR(
      WriteNewFileDurably(fs_, JoinPath(dir_, "tree"), blob.tree.tree));
  RETURN_IF_ERROR(
      WriteNewFileDurably(fs_, JoinPath(dir_, "descriptor"), descriptor));
  if (!blob.fsverity_signature.empty()) {
    RETURN_IF_ERROR(WriteNewFileDurably(fs_, JoinPath(dir_, kSignatureFileName),
                                        blob.fsverity_signature));
  }
  return FsyncDir(fs_, dir_);
}

absl::StatusOr<PutResult> FileBlobSink::Publish(const SealedBlob& blob) {
  absl::StatusOr<PutResult> result = install_(dir_, blob);
  // Renamed into place, or not needed: a blob stored already.
  Discard();
  return result;
}

}  // namespace verity::server
