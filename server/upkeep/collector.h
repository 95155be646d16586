// Garbage collection: one mark from the store's roots (roots.h) and one
// sweep of its blobs, deleting those nothing reaches and nobody used within
// the grace (Store::LastUsed, refreshed by MarkUsed), under the collector's
// lease (lease.h). Safe to kill at any point and to run again: the sweep
// deletes only what the mark found unreachable, and a name written since the
// mark began makes only blobs reachable that were used since (a tree Put's
// check, a Put that found its blob, SetName all mark theirs used, and refuse
// while a sweep whose cutoff is above a blob's time runs: CheckNotSwept).

#ifndef VERITYD_SERVER_UPKEEP_COLLECTOR_H_
#define VERITYD_SERVER_UPKEEP_COLLECTOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

struct CollectOptions {
  // Unreachable blobs used within this long are kept.
  absl::Duration grace = absl::Hours(1);
  // Counts what would go, deletes nothing (and takes no lease).
  bool dry_run = false;
  // Who collects, in the lease and the log (e.g. the replica's address).
  std::string holder = "verityd";
  // How long the lease lasts unless renewed (renewed, once half of it is
  // gone, before the next page or delete).
  absl::Duration lease_ttl = absl::Minutes(2);
  // If set and true, the collection stops before its next page or delete
  // (CANCELLED).
  const std::atomic<bool>* cancel = nullptr;
};

// What one collection found and did. Plain value.
struct CollectReport {
  size_t blobs = 0;    // stored blobs the sweep saw
  uint64_t bytes = 0;  // their data bytes
  size_t reachable = 0;
  uint64_t reachable_bytes = 0;
  size_t names = 0;  // names marked from
  size_t trees = 0;  // trees read
  // Unreachable and unused within the grace: freed (a dry run: would be).
  size_t freed = 0;
  uint64_t freed_bytes = 0;
  // Unreachable, but used within the grace: kept for now.
  size_t young = 0;
  // Quarantined blobs the sweep saw, and of them those freed (unreachable,
  // and quarantined and unused within the grace; a dry run: would be).
  size_t quarantined = 0;
  size_t quarantined_freed = 0;
  // Objects no blob owns (a Put or a delete cut short, a staged upload)
  // written before the cutoff: freed (a dry run: would be).
  size_t leftovers = 0;
  uint64_t leftover_bytes = 0;
  absl::Duration took;
};

// "blobs=N bytes=N reachable=N reachable_bytes=N quarantined=N
// quarantined_freed=N leftovers=N leftover_bytes=N freed=N freed_bytes=N
// young=N names=N trees=N took=D" (with "dry_run " first for a dry run).
std::string FormatCollectReport(const CollectReport& report, bool dry_run);

// How the sweep deletes: Store::DeleteUnusedSince, through whatever must
// hear of it (ServedBlobs drops its open copies).
using SweepDelete = std::function<absl::StatusOr<std::vector<ParsedDigest>>(
    absl::Span<const ParsedDigest>, absl::Time)>;

// One collection at `now`. ABORTED if another holds the lease (or took it
// over midway: the sweep stops); the mark's errors (a tree that cannot be
// read: nothing is deleted then). Blocking store I/O: for a thread of its
// own.
absl::StatusOr<CollectReport> Collect(Store& store, const SweepDelete& remove,
                                      const CollectOptions& options,
                                      absl::Time now);

// For a write about to make `blobs` reachable (a tree Put's files, a named
// Put's or SetName's blob), each marked used already, with the times
// MarkUsed returned (their times before): UNAVAILABLE naming the first that
// a sweep under way may delete (its time before was under the sweep's
// cutoff), so that the write is retried once the sweep is done.
struct UsedBlob {
  ParsedDigest digest;
  absl::Time used_before;
};
absl::Status CheckNotSwept(const Store& store,
                           const std::vector<UsedBlob>& blobs, absl::Time now);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_COLLECTOR_H_
