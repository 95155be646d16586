// What the server asks its store for many blobs at once: which of them it
// lacks (FindMissing), and whether a tree manifest a Put stores lists only
// stored blobs of the sizes it says, so that a tree's name never points at
// files that are not there. A remote store (S3) is asked many at a time.

#ifndef VERITYD_SERVER_RPC_TREE_CHECKS_H_
#define VERITYD_SERVER_RPC_TREE_CHECKS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

// The digests of `digests` the store does not hold, in their order.
// Blocking: the store's Has per digest.
absl::StatusOr<std::vector<ParsedDigest>> FindMissingBlobs(
    const Store& store, const std::vector<ParsedDigest>& digests);

// INVALID_ARGUMENT if `manifest` does not parse (ParseTreeManifest) or a
// file's size disagrees with its stored blob; FAILED_PRECONDITION naming the
// first file whose blob is not stored. Blocking: the store's Stat per
// distinct blob.
absl::Status CheckStoredTree(const Store& store, absl::string_view manifest);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_TREE_CHECKS_H_
