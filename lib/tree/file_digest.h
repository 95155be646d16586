// Builds the fs-verity Merkle tree and digest of a file on disk, reading it
// with pread so several threads can share one descriptor.

#ifndef VERITYD_LIB_TREE_FILE_DIGEST_H_
#define VERITYD_LIB_TREE_FILE_DIGEST_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/merkle_builder.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// Hashes the regular file open as `fd` (not closed; its offset is not
// moved) from offset 0 to its size at the time of the call. ABORTED if the
// file shrinks meanwhile; errno-derived codes for I/O errors.
absl::StatusOr<MerkleTree> BuildMerkleTreeFromFd(int fd,
                                                 const MerkleParams& params,
                                                 int threads);

// As above for the file at `path`; NOT_FOUND if it does not exist,
// FAILED_PRECONDITION if it is not a regular file.
absl::StatusOr<MerkleTree> BuildMerkleTreeFromFile(absl::string_view path,
                                                   const MerkleParams& params,
                                                   int threads);

}  // namespace verity

#endif  // VERITYD_LIB_TREE_FILE_DIGEST_H_
