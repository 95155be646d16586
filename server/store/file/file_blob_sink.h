// The file store's part of a Put (PutPipeline does the rest): the content goes
// to a staging directory (or, for a small blob, a staging record) as it
// arrives, is made durable there with its tree and descriptor (by the store's
// SyncFn: one syncfs that Puts in flight share), and is then handed to the
// store to rename into place.

#ifndef VERITYD_SERVER_STORE_FILE_FILE_BLOB_SINK_H_
#define VERITYD_SERVER_STORE_FILE_FILE_BLOB_SINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/fec/dm_verity_fec.h"
#include "server/store/blob_sink.h"
#include "server/store/store.h"

namespace verity::server {

// Makes what the sink wrote durable: its files and its directory.
using SyncFn = std::function<absl::Status()>;

// Moves `path`, the staged `blob` (its directory of data, tree and descriptor
// files, or its record, made durable by the SyncFn), into the store, or finds
// the blob there already; then records its name. The sink removes whatever
// the function leaves of `path`.
using PublishFn = std::function<absl::StatusOr<PutResult>(
    const std::string& path, const SealedBlob& blob)>;

// Not thread-safe. Abort, and Publish whatever its outcome, remove the
// staging directory at once, freeing its disk space.
class FileBlobSink final : public BlobSink {
 public:
  // How the blob is staged: a directory of files, or one record
  // (server/store/blob_record.h).
  enum class Shape { kDirectory, kRecord };

  // Takes ownership of `path`, an existing empty staging directory (kRecord:
  // a path in the staging directory, where the record is created), and
  // creates the data file, all through `fs`, which must outlive the sink;
  // Stage makes them durable with `sync`.
  // `fec_roots`: the FEC area Stage writes (0: none), encoded by
  // `fec_stream` as the content arrives if given (the Put's size known),
  // else from the staged content read back.
  static absl::StatusOr<std::unique_ptr<FileBlobSink>> Create(
      FileSystem& fs, Shape shape, std::string path, SyncFn sync,
      PublishFn publish, int fec_roots = 0,
      std::optional<FecStreamEncoder> fec_stream = std::nullopt);

  FileBlobSink(const FileBlobSink&) = delete;
  FileBlobSink& operator=(const FileBlobSink&) = delete;
  ~FileBlobSink() override { Discard(); }

  // RESOURCE_EXHAUSTED if the disk or quota is full; INTERNAL for other I/O
  // errors.
  absl::Status Append(absl::Span<const uint8_t> data) override;
  // Writes the FEC area (finishing the stream's, or reading the data back,
  // from the page cache while its writeback goes on), the tree and the
  // descriptor (as files, or after the record's data), then makes them, the
  // data and the directory durable.
  absl::Status Stage(const SealedBlob& blob) override;
  absl::StatusOr<PutResult> Publish(const SealedBlob& blob) override;
  void Abort() override { Discard(); }

 private:
  FileBlobSink(FileSystem& fs, Shape shape, std::string path, SyncFn sync,
               PublishFn publish, int fec_roots,
               std::optional<FecStreamEncoder> fec_stream, UniqueFd data_fd);

  absl::Status StageFiles(const SealedBlob& blob);
  absl::Status StageRecord(const SealedBlob& blob);
  // The FEC area (empty: none): the stream's, finished with blob.tree, or
  // one encoded over the staged data read back and blob.tree, handed to
  // `write` as it is encoded.
  absl::Status EncodeFec(const SealedBlob& blob, const FecWriteFn& write);

  // Closes the data file and removes what was staged, once.
  void Discard();

  FileSystem& fs_;
  const Shape shape_;
  const std::string path_;
  const std::string data_path_;
  const SyncFn sync_;
  const PublishFn publish_;
  const int fec_roots_;
  std::optional<FecStreamEncoder> fec_stream_;
  UniqueFd data_fd_;
  uint64_t size_ = 0;
  // Data bytes whose writeback was started while the Put went on, so that
  // Stage's sync waits for the last few MiB only, not the whole blob.
  uint64_t written_back_ = 0;
  bool discarded_ = false;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_FILE_BLOB_SINK_H_
