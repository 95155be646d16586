// What a store must keep: the blobs its roots reach. The roots are every
// name's retained versions (Store::History); a version whose blob is a tree
// manifest reaches each file the manifest lists. What nothing reaches is
// garbage, which `verity rm` may delete without --force and garbage
// collection deletes once old enough.

#ifndef VERITYD_SERVER_UPKEEP_ROOTS_H_
#define VERITYD_SERVER_UPKEEP_ROOTS_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

// How a root reaches a blob. Plain value.
struct RootPath {
  std::string name;
  size_t version = 0;  // in the name's history: 0 is what it points at now
  // The file's path in that version's tree; empty: the version's own blob.
  std::string tree_path;
};

// `path` for messages: `name "N" (version K of its history)`, then
// `, file P of its tree` for a tree's file.
std::string DescribeRootPath(const RootPath& path);

// The blobs the roots reach, each with the first path found to it.
class ReachableBlobs {
 public:
  // Records `path` to `digest` unless one is recorded already.
  void Add(const ParsedDigest& digest, const RootPath& path);
  // The path recorded to `digest`; nullptr if nothing reaches it.
  const RootPath* Find(const ParsedDigest& digest) const;
  size_t size() const { return paths_.size(); }
  // The names marked from, and the trees read (each once however many
  // versions name it).
  size_t names() const { return names_; }
  size_t trees() const { return trees_; }
  void CountName() { ++names_; }
  void CountTree() { ++trees_; }

 private:
  absl::flat_hash_map<std::string, RootPath> paths_;  // by digest text
  size_t names_ = 0;
  size_t trees_ = 0;
};

// The bytes of the tree manifest that `digest`'s blob is, read whole and
// checked against its digest (DATA_LOSS if they do not hash to it); nullopt
// if the blob is not a tree (its content does not parse as a manifest, marked
// or not) or is gone. Blocking store I/O.
absl::StatusOr<std::optional<std::string>> ReadStoredTree(
    const Store& store, const ParsedDigest& digest);

// Marks from every root of `store`. A version's blob is a tree if its
// content is a tree manifest, marked or not (a store written before marks
// has trees without): its first bytes are read, and if they begin as a
// manifest does, the whole, checked against its digest (the store is not
// trusted) and parsed. A version whose blob is gone reaches nothing more.
// Any error fails the whole mark (a quarantined version, a manifest that
// cannot be read): nothing may then be taken for unreachable. Blocking store
// I/O: never on a gRPC thread.
// `between_pages` (if given) runs before each page of names, and its error
// ends the mark (a collector renews its lease there).
absl::StatusOr<ReachableBlobs> MarkReachable(
    const Store& store,
    const std::function<absl::Status()>& between_pages = nullptr);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_ROOTS_H_
