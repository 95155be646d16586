// Paths of the file store's on-disk layout (documented in file_store.h) and
// the start-up steps that need no index: lock, version check, directories.

#ifndef VERITYD_SERVER_STORE_FILE_STORE_LAYOUT_H_
#define VERITYD_SERVER_STORE_FILE_STORE_LAYOUT_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"

namespace verity::server {

// The contents of <root>/VERSION for the layout this code reads and writes:
// version 2 holds small blobs as records (server/store/blob_record.h).
inline constexpr absl::string_view kStoreVersionText = "verityd-store 2\n";
// Version 1's, which had blob directories only: Open reads such a store and
// says version 2 in its VERSION from then on.
inline constexpr absl::string_view kStoreVersion1Text = "verityd-store 1\n";

// Immutable value; thread-safe.
class StoreLayout {
 public:
  explicit StoreLayout(std::string root);

  const std::string& root() const { return root_; }
  std::string blobs_dir() const { return JoinPath(root_, "blobs"); }
  std::string names_dir() const { return JoinPath(root_, "names"); }
  std::string quarantine_dir() const { return JoinPath(root_, "quarantine"); }
  std::string tmp_dir() const { return JoinPath(root_, "tmp"); }
  // Shared records (Store::ReadRecord): upkeep/<key>.
  std::string upkeep_dir() const { return JoinPath(root_, "upkeep"); }
  // The transparency log's objects (Store::ReadLogObject): log/<path>.
  std::string log_dir() const { return JoinPath(root_, "log"); }

  // blobs/<alg>
  std::string AlgorithmDir(HashAlgorithm algorithm) const;
  // blobs/<alg>/<hh>
  std::string ShardDir(const ParsedDigest& digest) const;
  // blobs/<alg>/<hh>/<hex>
  std::string BlobDir(const ParsedDigest& digest) const;
  // quarantine/<alg>-<hex>
  std::string QuarantineDir(const ParsedDigest& digest) const;
  // names/<sha256 hex of name>
  std::string NameFile(absl::string_view name) const;

  // The digest of blobs/<alg>/<shard>/<hex>; nullopt unless the entry names
  // are exactly what BlobDir makes.
  static std::optional<ParsedDigest> ParseBlobDir(HashAlgorithm algorithm,
                                                  absl::string_view shard,
                                                  absl::string_view hex);
  // The digest of quarantine/<entry>, as ParseBlobDir.
  static std::optional<ParsedDigest> ParseQuarantineEntry(
      absl::string_view entry);

 private:
  std::string root_;
};

// Readies the root for a FileStore, in this order: creates it (and its
// parents) if missing; refuses (FAILED_PRECONDITION) a root that has no
// VERSION but holds other files, since emptying tmp/ of a mistyped root such
// as "/" would be a disaster; takes an exclusive flock on <root>/LOCK, held
// until the returned descriptor closes (FAILED_PRECONDITION if another store
// holds it); checks VERSION (FAILED_PRECONDITION if it is another version;
// version 1 is read as 2 and VERSION says 2 from then on) or writes it;
// creates the subdirectories; empties tmp/. Through `fs`.
absl::StatusOr<UniqueFd> PrepareStoreRoot(FileSystem& fs,
                                          const StoreLayout& layout);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_STORE_LAYOUT_H_
