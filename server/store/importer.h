// Bulk import: stores every regular file under a directory in a Store,
// named by its path relative to that directory.

#ifndef VERITYD_SERVER_STORE_IMPORTER_H_
#define VERITYD_SERVER_STORE_IMPORTER_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/merkle_params.h"
#include "server/store/store.h"

namespace verity::server {

// What an import did. Plain value.
struct ImportStats {
  // Files put (already_present ones included) and their data bytes.
  uint64_t files = 0;
  uint64_t bytes = 0;
  // Of `files`, those whose content was stored already.
  uint64_t already_present = 0;
  // Symlinks not followed (dangling, looping, leading out of the directory
  // or to something other than a regular file) and paths that are not valid
  // blob names.
  uint64_t refused = 0;
  // FIFOs, sockets and devices.
  uint64_t skipped = 0;
};

// Walks `dir` recursively without following symlinked directories, so it
// cannot loop. A symlink is followed only if its target (realpath) is a
// regular file inside `dir`; it is stored under the symlink's own path.
// Refused and skipped entries are logged through the store's log and
// counted. NOT_FOUND if `dir` does not exist, FAILED_PRECONDITION if it is
// not a directory. CANCELLED once *cancel turns true (checked between
// files). Any other error (unreadable file, full disk) stops the
// import and is returned, naming the file; what was put before stays
// stored. Not safe against a concurrent writer swapping files for symlinks
// under `dir`.
absl::StatusOr<ImportStats> ImportDirectory(
    Store* store, absl::string_view dir, const MerkleParams& params,
    const std::atomic<bool>* cancel = nullptr);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_IMPORTER_H_
