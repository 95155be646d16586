// A blob of the file store opened for reading: its descriptor, checked
// against the digest it is stored under, and its open data and tree files, or
// its one record (server/store/blob_record.h).

#ifndef VERITYD_SERVER_STORE_FILE_FILE_BLOB_H_
#define VERITYD_SERVER_STORE_FILE_FILE_BLOB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/executor.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/blob_record.h"
#include "server/store/store.h"

namespace verity::server {

// A blob of the file store: its descriptor, checked against the digest it is
// stored under, and its open data and tree files. Immutable and thread-safe.
// Keeps its files open, so a blob deleted or quarantined after it was opened
// stays readable through this object. Every read is local: pread(2) through
// `fs` (one call per chunk, not per block), mostly from the page cache; an
// asynchronous one runs on `reads`, which the blob shares with its store (it
// may outlive the store). `fs` must outlive the blob (the process's own, or a
// test's that outlives the test's store).
// The file beside data, tree and descriptor that holds the blob's detached
// fs-verity signature, if it has one.
inline constexpr absl::string_view kSignatureFileName = "fsverity_signature";
// The empty file beside them that marks a blob stored as a tree manifest
// (BlobInfo::tree_manifest).
inline constexpr absl::string_view kTreeManifestFileName = "tree_manifest";

// Whether the blob directory `dir` holds the tree manifest mark. DATA_LOSS
// naming the blob if the mark is there but not an empty regular file.
absl::StatusOr<bool> HasTreeManifestMark(FileSystem& fs, const std::string& dir,
                                         absl::string_view digest_text);
// Each part is a file of the blob directory named PartName(part). The FEC
// area's, if the blob has one, holds exactly the bytes `veritysetup
// --fec-device` holds, and its size gives its roots (the size grows strictly
// with them).

class FileBlob final : public Blob {
 public:
  // Opens the blob at `path`: a directory (files data, tree, descriptor, and
  // fsverity_signature and fec if there are) or a record file. Checks,
  // without reading the data, that the descriptor is 256 canonical bytes
  // that hash to `digest`, that the data and tree have the sizes it implies,
  // and that the signature is of 1 to kMaxFsveritySignatureSize bytes (read
  // now: fsverity_signature()). An FEC area of a size no root count gives is
  // not used (fec_roots() is 0). NOT_FOUND if `path` does not exist;
  // DATA_LOSS naming the problem if the blob is damaged; UNIMPLEMENTED for a
  // record a later verityd wrote; INTERNAL for other I/O errors.
  static absl::StatusOr<std::shared_ptr<const FileBlob>> Open(
      FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& path,
      const ParsedDigest& digest);

  // The footer of a blob stored as one record; nullopt for a directory.
  const std::optional<RecordFooter>& record() const { return record_; }
  // A record blob's record with `signature` (empty: none) and the tree
  // manifest mark set or not: what replaces it to change either. The bytes
  // are copied as stored (their checks are the reader's).
  absl::StatusOr<std::string> RecordWith(absl::string_view signature,
                                         bool tree_manifest) const;

  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override;
  // The same pread, into `into`, on a thread of `reads`.
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override;
  // posix_fadvise(POSIX_FADV_WILLNEED): the kernel starts reading into the
  // page cache.
  void Prefetch(BlobPart part, uint64_t offset, uint64_t length) const override;
  // pwrite(2)s and fsyncs the part's file under the blob's directory, or its
  // record, opened by path: if the blob was deleted or quarantined since it
  // was opened, the rewrite fails (NOT_FOUND) rather than write to the old
  // files. (A record written again since, for a new signature, has its parts
  // where they were.)
  absl::Status Rewrite(BlobPart part, uint64_t offset,
                       absl::Span<const uint8_t> bytes) const override;

 private:
  // The blob's open files: a directory's three, or a record's one as data.
  struct Files {
    UniqueFd data;
    UniqueFd tree;
    UniqueFd fec;  // closed if there is none
  };

  FileBlob(FileSystem& fs, std::shared_ptr<Executor> reads, std::string path,
           const ParsedDigest& digest, const CheckedDescriptor& checked,
           std::string fsverity_signature, int fec_roots, Files files,
           std::optional<RecordFooter> record);

  static absl::StatusOr<std::shared_ptr<const FileBlob>> OpenDirectory(
      FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& dir,
      const ParsedDigest& digest, UniqueFd dir_fd);
  static absl::StatusOr<std::shared_ptr<const FileBlob>> OpenRecord(
      FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& path,
      const ParsedDigest& digest, UniqueFd fd, uint64_t size);

  int FdOf(BlobPart part) const;
  // Where `part` starts in the file FdOf(part).
  uint64_t BaseOf(BlobPart part) const {
    return record_.has_value() ? record_->PartOffset(part) : 0;
  }

  absl::Status ReadNow(BlobPart part, uint64_t offset,
                       absl::Span<uint8_t> out) const;

  FileSystem& fs_;
  const std::shared_ptr<Executor> reads_;
  const std::string path_;
  const Files files_;
  const std::optional<RecordFooter> record_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_FILE_BLOB_H_
