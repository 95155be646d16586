// Implements FileBlobSink: write as data arrives, then make the staged blob
// durable before the store publishes it.

#include "server/store/file/file_blob_sink.h"

#include <fcntl.h>

#include <algorithm>
#include <utility>

#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/tree/descriptor.h"
#include "server/store/file/file_blob.h"

namespace verity::server {
namespace {

// Writeback of the data file is started every this many bytes.
constexpr uint64_t kWritebackBytes = 8 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<FileBlobSink>> FileBlobSink::Create(
    FileSystem& fs, std::string dir, SyncFn sync, PublishFn publish,
    int fec_roots, std::optional<FecStreamEncoder> fec_stream) {
  if (fec_roots != 0) RETURN_IF_ERROR(ValidateFecRoots(fec_roots));
  const std::string data_path = JoinPath(dir, "data");
  // Readable too: the FEC area is computed from the staged data.
  absl::StatusOr<UniqueFd> data_fd =
      OpenFile(fs, data_path, O_RDWR | O_CREAT | O_EXCL);
  if (!data_fd.ok()) {
    fs.RemoveRecursively(dir).IgnoreError();  // tmp/ is also emptied at Open
    return data_fd.status();
  }
  return std::unique_ptr<FileBlobSink>(
      new FileBlobSink(fs, std::move(dir), std::move(sync), std::move(publish),
                       fec_roots, std::move(fec_stream), *std::move(data_fd)));
}

FileBlobSink::FileBlobSink(FileSystem& fs, std::string dir, SyncFn sync,
                           PublishFn publish, int fec_roots,
                           std::optional<FecStreamEncoder> fec_stream,
                           UniqueFd data_fd)
    : fs_(fs),
      dir_(std::move(dir)),
      sync_(std::move(sync)),
      publish_(std::move(publish)),
      fec_roots_(fec_roots),
      fec_stream_(std::move(fec_stream)),
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
  if (fec_stream_.has_value()) RETURN_IF_ERROR(fec_stream_->Update(data));
  size_ += data.size();
  if (size_ - written_back_ >= kWritebackBytes) {
    fs_.StartWriteback(data_fd_.get(), written_back_, size_ - written_back_);
    written_back_ = size_;
  }
  return absl::OkStatus();
}

absl::Status FileBlobSink::Stage(const SealedBlob& blob) {
  const std::string data_path = JoinPath(dir_, "data");
  if (fec_roots_ != 0) RETURN_IF_ERROR(WriteFec(blob));
  RETURN_IF_ERROR(data_fd_.Close(data_path));
  ASSIGN_OR_RETURN(const std::string descriptor,
                   blob.tree.descriptor.Serialize());
  RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(dir_, "tree"), blob.tree.tree));
  RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(dir_, "descriptor"), descriptor));
  if (!blob.fsverity_signature.empty()) {
    RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(dir_, kSignatureFileName),
                                 blob.fsverity_signature));
  }
  if (blob.tree_manifest) {
    RETURN_IF_ERROR(
        WriteNewFile(fs_, JoinPath(dir_, kTreeManifestFileName), ""));
  }
  // One syncfs for the data, the files and the directory, shared with the
  // Puts in flight: five fsyncs each, before.
  return sync_();
}

absl::Status FileBlobSink::WriteFec(const SealedBlob& blob) {
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   GeometryOf(blob.tree.descriptor));
  if (FecBlocks(geometry) == 0) return absl::OkStatus();  // an empty blob
  const std::string fec_path =
      JoinPath(dir_, std::string(PartName(BlobPart::kFec)));
  if (fec_stream_.has_value()) {
    ASSIGN_OR_RETURN(const std::string fec,
                     FinishFecArea(*fec_stream_, blob.tree.tree));
    return WriteNewFile(fs_, fec_path, fec);
  }
  ASSIGN_OR_RETURN(UniqueFd fec,
                   OpenFile(fs_, fec_path, O_WRONLY | O_CREAT | O_EXCL));
  RETURN_IF_ERROR(EncodeFecReadingBack(blob, geometry, fec.get(), fec_path));
  return fec.Close(fec_path);
}

absl::Status FileBlobSink::EncodeFecReadingBack(const SealedBlob& blob,
                                                const TreeGeometry& geometry,
                                                int fec_fd,
                                                const std::string& fec_path) {
  const uint64_t bs = geometry.block_size();
  const uint64_t data_blocks = geometry.data_block_count();
  const std::string data_path = JoinPath(dir_, "data");
  const absl::Span<const uint8_t> tree = AsBytes(blob.tree.tree);
  const auto read = [&](uint64_t first, uint64_t count,
                        absl::Span<uint8_t> out) -> absl::Status {
    // Data blocks (the last one zero-padded), then tree blocks.
    uint64_t done = 0;
    if (first < data_blocks) {
      const uint64_t blocks = std::min(count, data_blocks - first);
      const absl::Span<uint8_t> into = out.first(blocks * bs);
      ASSIGN_OR_RETURN(const size_t n, PreadUpTo(fs_, data_fd_.get(),
                                                 first * bs, into, data_path));
      std::fill(into.begin() + n, into.end(), 0);
      done = blocks;
    }
    if (done < count) {
      const uint64_t at = (first + done - data_blocks) * bs;
      std::copy_n(tree.begin() + at, (count - done) * bs,
                  out.begin() + done * bs);
    }
    return absl::OkStatus();
  };
  return EncodeFec(fec_roots_, geometry.block_size(), FecBlocks(geometry), read,
                   [&](absl::Span<const uint8_t> bytes) {
                     return WriteAll(fs_, fec_fd, bytes, fec_path);
                   });
}

absl::StatusOr<PutResult> FileBlobSink::Publish(const SealedBlob& blob) {
  absl::StatusOr<PutResult> result = publish_(dir_, blob);
  // Renamed into place, or not needed: a blob stored already.
  Discard();
  return result;
}

}  // namespace verity::server
