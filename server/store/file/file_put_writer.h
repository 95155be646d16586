// One Put in progress: streams a blob into a staging directory, hashing it
// as it arrives, and makes it durable before handing it to the store.

#ifndef VERITYD_SERVER_STORE_FILE_FILE_PUT_WRITER_H_
#define VERITYD_SERVER_STORE_FILE_FILE_PUT_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/descriptor.h"
#include "lib/file_system.h"
#include "lib/file_util.h"
#include "lib/merkle_builder.h"
#include "lib/merkle_params.h"
#include "server/store/store.h"

namespace verity::server {

// A blob whose staging directory holds its data, tree and descriptor files,
// all fsync'd along with the directory itself.
struct StagedBlob {
  std::string dir;
  ParsedDigest digest;
  std::string digest_text;
  Descriptor descriptor;
  uint64_t tree_size = 0;
  std::string name;  // empty: no name to record
};

// Moves a staged blob into the store, or finds it there already. The writer
// removes whatever the function leaves of the staging directory.
using InstallFn = std::function<absl::StatusOr<PutResult>(const StagedBlob&)>;

// Not thread-safe. The store that made it must outlive it. Any failure ends
// the Put: the staging directory is removed at once (freeing the disk space)
// and every later call returns the same error. Destroying the writer without
// a successful Commit stores nothing.
//
// Memory: the Merkle tree is built in memory, about data_size * digest_size
// / block_size bytes (1/128 of the data for SHA-256 with 4 KiB blocks).
class FilePutWriter final : public PutWriter {
 public:
  // Takes ownership of `dir`, an existing empty staging directory, and
  // creates its data file, all through `fs`, which must outlive the writer.
  // Used by FileStore::BeginPut; `params` must be valid and `max_bytes` at
  // most kMaxDataSize.
  static absl::StatusOr<std::unique_ptr<FilePutWriter>> Create(
      FileSystem& fs, std::string dir, const MerkleParams& params,
      uint64_t max_bytes, InstallFn install);

  FilePutWriter(const FilePutWriter&) = delete;
  FilePutWriter& operator=(const FilePutWriter&) = delete;
  ~FilePutWriter() override;

  // RESOURCE_EXHAUSTED if the blob would exceed the store's max_blob_bytes
  // or the disk or quota is full; INTERNAL for other I/O errors.
  absl::Status Append(absl::Span<const uint8_t> data) override;

  // Completes the Put. INVALID_ARGUMENT if `name` is neither empty (no name)
  // nor a valid name; DATA_LOSS if `expected` is given and the content does
  // not hash to it. Returns only once the blob is durable. If the blob is
  // stored but recording the name fails, the error is returned and the blob
  // stays stored.
  absl::StatusOr<PutResult> Commit(const std::optional<ParsedDigest>& expected,
                                   absl::string_view name) override;

  uint64_t size() const override { return size_; }

 private:
  FilePutWriter(FileSystem& fs, std::string dir, const MerkleParams& params,
                uint64_t max_bytes, InstallFn install, UniqueFd data_fd);

  // Writes the tree and descriptor and syncs everything.
  absl::StatusOr<StagedBlob> Stage(const std::optional<ParsedDigest>& expected,
                                   absl::string_view name);
  // Ends the Put: closes the data file and removes the staging directory.
  void Finish();
  // Finish()es and remembers `status` for later calls.
  absl::Status Fail(absl::Status status);
  absl::Status Ended() const;

  FileSystem& fs_;
  const std::string dir_;
  const uint64_t max_bytes_;
  const InstallFn install_;
  UniqueFd data_fd_;
  MerkleBuilder builder_;
  uint64_t size_ = 0;
  // Data bytes whose writeback was started while the Put went on, so that
  // Commit's fsync waits for the last few MiB only, not the whole blob.
  uint64_t written_back_ = 0;
  bool finished_ = false;
  absl::Status failure_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_FILE_PUT_WRITER_H_
