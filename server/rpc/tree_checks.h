// What the server asks its store for many blobs at once: which of them it
// lacks (FindMissing), and whether a tree manifest a Put stores lists only
// stored blobs of the sizes it says, so that a tree's name never points at
// files that are not there. A remote store (S3) is asked on the server's
// lookup pool, a few of each call's at a time, so that many calls hold no
// more of the store's attention than the pool's threads.

#ifndef VERITYD_SERVER_RPC_TREE_CHECKS_H_
#define VERITYD_SERVER_RPC_TREE_CHECKS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

// At most this many lookups of one call run at once on the lookup pool.
inline constexpr int kLookupWindow = 16;

// The digests of `digests` the store does not hold, in their order.
// Blocking: the store's Has per digest, on `lookups` (null: one at a time on
// the caller's thread, for a local store, where each is a lookup in memory).
absl::StatusOr<std::vector<ParsedDigest>> FindMissingBlobs(
    const Store& store, const std::vector<ParsedDigest>& digests,
    Executor* lookups);

// INVALID_ARGUMENT if `manifest` does not parse (ParseTreeManifest) or a
// file's size disagrees with its stored blob; FAILED_PRECONDITION naming the
// first file whose blob is not stored. Blocking: the store's DataSize per
// distinct blob, on `lookups` as FindMissingBlobs.
absl::Status CheckStoredTree(const Store& store, absl::string_view manifest,
                             Executor* lookups);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_TREE_CHECKS_H_
