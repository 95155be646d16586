// Implements FileBlobSink: write as data arrives, then make the staged blob
// durable before the store publishes it.

#include "server/store/file/file_blob_sink.h"

#include <fcntl.h>

#include <algorithm>
#include <utility>

#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/tree/descriptor.h"
#include "server/store/blob_record.h"
#include "server/store/file/file_blob.h"

namespace verity::server {
namespace {

// Writeback of the data file is started every this many bytes.
constexpr uint64_t kWritebackBytes = 8 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<FileBlobSink>> FileBlobSink::Create(
    FileSystem& fs, Shape shape, std::string path, SyncFn sync,
    PublishFn publish, int fec_roots,
    std::optional<FecStreamEncoder> fec_stream) {
  if (fec_roots != 0) RETURN_IF_ERROR(ValidateFecRoots(fec_roots));
  const std::string data_path =
      shape == Shape::kRecord ? path : JoinPath(path, "data");
  // Readable too: the FEC area is computed from the staged data.
  absl::StatusOr<UniqueFd> data_fd =
      OpenFile(fs, data_path, O_RDWR | O_CREAT | O_EXCL);
  if (!data_fd.ok()) {
    fs.RemoveRecursively(path).IgnoreError();  // tmp/ is also emptied at Open
    return data_fd.status();
  }
  return std::unique_ptr<FileBlobSink>(new FileBlobSink(
      fs, shape, std::move(path), std::move(sync), std::move(publish),
      fec_roots, std::move(fec_stream), *std::move(data_fd)));
}

FileBlobSink::FileBlobSink(FileSystem& fs, Shape shape, std::string path,
                           SyncFn sync, PublishFn publish, int fec_roots,
                           std::optional<FecStreamEncoder> fec_stream,
                           UniqueFd data_fd)
    : fs_(fs),
      shape_(shape),
      path_(std::move(path)),
      data_path_(shape == Shape::kRecord ? path_ : JoinPath(path_, "data")),
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
  fs_.RemoveRecursively(path_).IgnoreError();
}

absl::Status FileBlobSink::Append(absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(WriteAll(fs_, data_fd_.get(), data, data_path_));
  if (fec_stream_.has_value()) RETURN_IF_ERROR(fec_stream_->Update(data));
  size_ += data.size();
  if (size_ - written_back_ >= kWritebackBytes) {
    fs_.StartWriteback(data_fd_.get(), written_back_, size_ - written_back_);
    written_back_ = size_;
  }
  return absl::OkStatus();
}

absl::Status FileBlobSink::Stage(const SealedBlob& blob) {
  RETURN_IF_ERROR(shape_ == Shape::kRecord ? StageRecord(blob)
                                           : StageFiles(blob));
  // One syncfs for the data, the files and the directory, shared with the
  // Puts in flight: five fsyncs each, before.
  return sync_();
}

absl::Status FileBlobSink::StageFiles(const SealedBlob& blob) {
  if (fec_roots_ != 0) {
    const std::string fec_path =
        JoinPath(path_, std::string(PartName(BlobPart::kFec)));
    std::optional<UniqueFd> fec;
    RETURN_IF_ERROR(
        EncodeFec(blob, [&](absl::Span<const uint8_t> bytes) -> absl::Status {
          if (!fec.has_value()) {
            ASSIGN_OR_RETURN(
                fec, OpenFile(fs_, fec_path, O_WRONLY | O_CREAT | O_EXCL));
          }
          return WriteAll(fs_, fec->get(), bytes, fec_path);
        }));
    if (fec.has_value()) RETURN_IF_ERROR(fec->Close(fec_path));
  }
  RETURN_IF_ERROR(data_fd_.Close(data_path_));
  ASSIGN_OR_RETURN(const std::string descriptor,
                   blob.tree.descriptor.Serialize());
  RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(path_, "tree"), blob.tree.tree));
  RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(path_, "descriptor"), descriptor));
  if (!blob.fsverity_signature.empty()) {
    RETURN_IF_ERROR(WriteNewFile(fs_, JoinPath(path_, kSignatureFileName),
                                 blob.fsverity_signature));
  }
  if (blob.tree_manifest) {
    RETURN_IF_ERROR(
        WriteNewFile(fs_, JoinPath(path_, kTreeManifestFileName), ""));
  }
  return absl::OkStatus();
}

absl::Status FileBlobSink::StageRecord(const SealedBlob& blob) {
  std::string fec;
  if (fec_roots_ != 0) {
    RETURN_IF_ERROR(EncodeFec(blob, [&](absl::Span<const uint8_t> bytes) {
      fec.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      return absl::OkStatus();
    }));
  }
  ASSIGN_OR_RETURN(const std::string descriptor,
                   blob.tree.descriptor.Serialize());
  const std::string tail =
      RecordTail(size_, blob.tree.tree, fec, descriptor,
                 blob.fsverity_signature, blob.tree_manifest);
  RETURN_IF_ERROR(
      PwriteAll(fs_, data_fd_.get(), size_, AsBytes(tail), data_path_));
  return data_fd_.Close(data_path_);
}

absl::Status FileBlobSink::EncodeFec(const SealedBlob& blob,
                                     const FecWriteFn& write) {
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   GeometryOf(blob.tree.descriptor));
  if (FecBlocks(geometry) == 0) return absl::OkStatus();  // an empty blob
  if (fec_stream_.has_value()) {
    ASSIGN_OR_RETURN(const std::string fec,
                     FinishFecArea(*fec_stream_, blob.tree.tree));
    return write(AsBytes(fec));
  }
  const uint64_t bs = geometry.block_size();
  const uint64_t data_blocks = geometry.data_block_count();
  const absl::Span<const uint8_t> tree = AsBytes(blob.tree.tree);
  const auto read = [&](uint64_t first, uint64_t count,
                        absl::Span<uint8_t> out) -> absl::Status {
    // Data blocks (the last one zero-padded), then tree blocks.
    uint64_t done = 0;
    if (first < data_blocks) {
      const uint64_t blocks = std::min(count, data_blocks - first);
      const absl::Span<uint8_t> into = out.first(blocks * bs);
      ASSIGN_OR_RETURN(const size_t n, PreadUpTo(fs_, data_fd_.get(),
                                                 first * bs, into, data_path_));
      // A record's data is followed by nothing yet: n is the data's.
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
  return ::verity::EncodeFec(fec_roots_, geometry.block_size(),
                             FecBlocks(geometry), read, write);
}

absl::StatusOr<PutResult> FileBlobSink::Publish(const SealedBlob& blob) {
  absl::StatusOr<PutResult> result = publish_(path_, blob);
  // Renamed into place, or not needed: a blob stored already.
  Discard();
  return result;
}

}  // namespace verity::server
