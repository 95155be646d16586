// A stored blob opened for reading: its descriptor, checked against the
// digest it is stored under, and its open data and Merkle tree files.

#ifndef VERITYD_SERVER_STORE_BLOB_H_
#define VERITYD_SERVER_STORE_BLOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/descriptor.h"
#include "lib/file_util.h"
#include "lib/merkle_params.h"

namespace verity::server {

// What the store knows about a blob without opening it. Plain value.
struct BlobInfo {
  std::string digest;  // FormatDigest text, e.g. "sha256:<hex>"
  Descriptor descriptor;
  uint64_t tree_size = 0;          // bytes of the serialized Merkle tree
  std::vector<std::string> names;  // names pointing at it, sorted
};

// Immutable and thread-safe. Keeps its files open, so a blob deleted or
// quarantined after it was opened stays readable through this object.
class Blob {
 public:
  // Opens the blob directory `dir` (files data, tree, descriptor) and checks,
  // without reading the data, that the descriptor is 256 canonical bytes that
  // hash to `digest` and that the data and tree files have the sizes it
  // implies. NOT_FOUND if `dir` does not exist; DATA_LOSS naming the problem
  // if the blob is damaged; INTERNAL for other I/O errors.
  static absl::StatusOr<std::shared_ptr<const Blob>> Open(
      const std::string& dir, const ParsedDigest& digest);

  const ParsedDigest& digest() const { return digest_; }
  const std::string& digest_text() const { return digest_text_; }
  const Descriptor& descriptor() const { return descriptor_; }
  const TreeGeometry& geometry() const { return geometry_; }
  const MerkleParams& params() const { return params_; }

  // Fill all of `out` from `offset`. OUT_OF_RANGE if the range extends past
  // the size the descriptor records; DATA_LOSS naming the blob and offset if
  // the file on disk is shorter than that (truncated since it was opened);
  // INTERNAL for I/O errors.
  absl::Status ReadData(uint64_t offset, absl::Span<uint8_t> out) const;
  absl::Status ReadTree(uint64_t offset, absl::Span<uint8_t> out) const;

  // Asks the kernel to start reading tree bytes [offset, offset + length) into
  // the page cache, and returns without waiting for them. Best effort.
  void PrefetchTree(uint64_t offset, uint64_t length) const;

 private:
  Blob(const ParsedDigest& digest, const Descriptor& descriptor,
       const MerkleParams& params, const TreeGeometry& geometry,
       UniqueFd data_fd, UniqueFd tree_fd);

  absl::Status Read(int fd, absl::string_view file, uint64_t file_size,
                    uint64_t offset, absl::Span<uint8_t> out) const;

  const ParsedDigest digest_;
  const std::string digest_text_;
  const Descriptor descriptor_;
  const MerkleParams params_;
  const TreeGeometry geometry_;
  const UniqueFd data_fd_;
  const UniqueFd tree_fd_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_BLOB_H_
