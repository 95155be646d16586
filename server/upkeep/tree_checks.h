// What the server asks its store for many blobs at once: which of them it
// lacks (FindMissing), and whether a tree manifest a Put stores lists only
// stored blobs of the sizes it says, so that a tree's name never points at
// files that are not there. A remote store (S3) is asked on the server's
// lookup pool, a few of each call's at a time, so that many calls hold no
// more of the store's attention than the pool's threads.

#ifndef VERITYD_SERVER_UPKEEP_TREE_CHECKS_H_
#define VERITYD_SERVER_UPKEEP_TREE_CHECKS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

// At most this many lookups of one call run at once on the lookup pool.
inline constexpr int kLookupWindow = 16;

// How often a blob relied on is marked used again (Store::MarkUsed): half
// the garbage collection grace, which a `put DIR` must finish within.
inline absl::Duration UseRefresh(absl::Duration gc_grace) {
  return gc_grace / 2;
}

// The digests of `digests` the store does not hold, in their order; each
// held one is marked used at `now` (REAPI: a FindMissing refreshes what it
// finds). Blocking: the store's Has and MarkUsed per digest, on `lookups`
// (null: one at a time on the caller's thread).
absl::StatusOr<std::vector<ParsedDigest>> FindMissingBlobs(
    const Store& store, const std::vector<ParsedDigest>& digests,
    Executor* lookups, absl::Time now, absl::Duration gc_grace);

// INVALID_ARGUMENT if `manifest` does not parse (ParseTreeManifest) or a
// file's size disagrees with its stored blob; FAILED_PRECONDITION naming the
// first file whose blob is not stored. Each file's blob is marked used at
// `now`, and then UNAVAILABLE if a garbage collection under way may delete
// one (CheckNotSwept). Blocking: the store's DataSize and MarkUsed per
// distinct blob, on `lookups` as FindMissingBlobs.
absl::Status CheckStoredTree(const Store& store, absl::string_view manifest,
                             Executor* lookups, absl::Time now,
                             absl::Duration gc_grace);

// After a Put found `digest` stored: marks it used at `now`; UNAVAILABLE if
// it was deleted since (a retry stores it anew) or is being deleted.
absl::Status MarkFoundUsed(const Store& store, const ParsedDigest& digest,
                           absl::Time now, absl::Duration gc_grace);

// Before a write that makes `digest` reachable (a named Put, SetName) or
// finds it stored (any Put with its digest): marks it used at `now` if it is
// stored; if `becomes_root`, then UNAVAILABLE if a collection under way may
// delete it. OK if it is not stored (a Put then stores it new).
absl::Status MarkStoredUsed(const Store& store, const ParsedDigest& digest,
                            bool becomes_root, absl::Time now,
                            absl::Duration gc_grace);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_TREE_CHECKS_H_
