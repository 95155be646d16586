// The object layout of an S3 store under its prefix (docs/storage.md has the
// why of each object):
//
// clang-format off
//   PREFIX/blobs/<alg>/<hex>/data          the content
//   PREFIX/blobs/<alg>/<hex>/tree          the Merkle tree, `fsverity digest --out-merkle-tree` layout
//   PREFIX/blobs/<alg>/<hex>/descriptor    the 256-byte descriptor, written last and only if absent:
//                                          the blob exists exactly when it does. For a small blob,
//                                          the whole blob as one record (blob_record.h) instead,
//                                          ending in the record's footer; it has no other object
//   PREFIX/blobs/<alg>/<hex>/fec           its FEC area (Reed-Solomon parity, `veritysetup --fec-device`
//                                          bytes), if the Put that stored it had --fec_roots
//   PREFIX/blobs/<alg>/<hex>/fsverity_signature  the blob's detached fs-verity signature, if a Put gave one
//   PREFIX/blobs/<alg>/<hex>/tree_manifest  empty: a Put stored the blob as a tree manifest; written after
//                                          the descriptor, deleted before it
//   PREFIX/blobs/<alg>/<hex>/names/<h>     a hint that name <h> points here; its body is the name
//   PREFIX/names/<h>                       a name: "<digest text>\n<name>", then NUL and its statement if it has
//                                          one (name_index.h); written conditionally on its ETag
//   PREFIX/quarantine/<alg>-<hex>          the blob is out of service; the body says why
//   PREFIX/damaged/<alg>-<hex>             FEC repaired blocks of the blob that are still bad in its
//                                          objects; the body says which. A Put of it replaces them
//   PREFIX/uploads/<id>                    the data of a Put whose digest was not known in advance
//   PREFIX/used/<alg>-<hex>                when the blob was last relied on (Store::MarkUsed): unix seconds
//                                          by a verityd clock; none: not seen by garbage collection yet
//   PREFIX/upkeep/<key>                    a record every replica shares (the upkeep leases, the scrub
//                                          position), written conditionally on its ETag
// clang-format on
//
// (<alg> is sha256|sha512, <hex> the lowercase digest hex, <h> the lowercase
// hex SHA-256 of a name.)

#ifndef VERITYD_SERVER_STORE_S3_S3_LAYOUT_H_
#define VERITYD_SERVER_STORE_S3_S3_LAYOUT_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"

namespace verity::server {

enum class BlobObject {
  kData,
  kTree,
  kDescriptor,
  kSignature,
  kFec,
  kTreeManifestMark
};

// Immutable value; thread-safe.
class S3Layout {
 public:
  // `prefix` is "" or ends with '/' (S3Layout adds one otherwise).
  explicit S3Layout(std::string prefix);

  const std::string& prefix() const { return prefix_; }
  std::string blobs_prefix() const { return prefix_ + "blobs/"; }
  std::string uploads_prefix() const { return prefix_ + "uploads/"; }

  // PREFIX/blobs/<alg>/<hex>/
  std::string BlobPrefix(const ParsedDigest& digest) const;
  std::string BlobKey(const ParsedDigest& digest, BlobObject what) const;
  // PREFIX/blobs/<alg>/<hex>/names/
  std::string NameHintPrefix(const ParsedDigest& digest) const;
  std::string NameHintKey(const ParsedDigest& digest,
                          absl::string_view name) const;
  std::string NameKey(absl::string_view name) const;
  // PREFIX/names/: every name object's key begins so.
  std::string names_prefix() const { return prefix_ + "names/"; }
  std::string QuarantineKey(const ParsedDigest& digest) const;
  // PREFIX/quarantine/: every quarantine mark's key begins so.
  std::string QuarantinePrefix() const { return prefix_ + "quarantine/"; }
  std::string DamagedKey(const ParsedDigest& digest) const;
  std::string UploadKey(absl::string_view id) const;
  std::string UsedKey(const ParsedDigest& digest) const;
  std::string RecordKey(absl::string_view key) const;
  std::string LogKey(absl::string_view path) const;

  // The digest whose object `key` is (one of BlobKey's, a name hint, or any
  // other key under its BlobPrefix), with the size of that prefix if
  // `prefix_size`; nullopt for any other key.
  std::optional<ParsedDigest> ParseBlobKey(absl::string_view key,
                                           size_t* prefix_size = nullptr) const;
  // The digest whose descriptor `key` is; nullopt for any other key.
  std::optional<ParsedDigest> ParseDescriptorKey(absl::string_view key) const;
  // Where a listing of blobs after digest text `after` starts (ListObjectsV2
  // start-after): past every object of that blob.
  std::string ListStartAfter(absl::string_view after) const;

 private:
  std::string prefix_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_LAYOUT_H_
