// Implements garbage collection's mark and sweep.

#include "server/upkeep/collector.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "lib/tlog/log_sequencer.h"
#include "server/store/store_log_storage.h"
#include "server/upkeep/lease.h"
#include "server/upkeep/roots.h"

namespace verity::server {
namespace {

constexpr size_t kBlobsPerPage = 1000;
// Unreachable blobs deleted at a time: the lease is kept between batches, so
// that a batch of slow deletes cannot outlive it.
constexpr size_t kDeletesPerBatch = 250;

// Of the unreachable `blobs`, which went (a dry run: would go): last used
// before `cutoff`. Deletes a batch at a time, `keep_lease` before each.
absl::StatusOr<std::vector<bool>> SweepUnreachable(
    const std::vector<ParsedDigest>& blobs, const Store& store,
    const SweepDelete& remove, const std::function<absl::Status()>& keep_lease,
    absl::Time cutoff, bool dry_run) {
  std::vector<bool> gone(blobs.size());
  for (size_t at = 0; at < blobs.size(); at += kDeletesPerBatch) {
    const size_t end = std::min(blobs.size(), at + kDeletesPerBatch);
    const absl::Span<const ParsedDigest> batch =
        absl::MakeConstSpan(blobs).subspan(at, end - at);
    if (dry_run) {
      // One gone meanwhile is InfiniteFuture: not counted.
      ASSIGN_OR_RETURN(const std::vector<absl::Time> used,
                       store.LastUsedOf(batch));
      for (size_t i = at; i < end; ++i) gone[i] = used[i - at] < cutoff;
      continue;
    }
    RETURN_IF_ERROR(keep_lease());
    ASSIGN_OR_RETURN(const std::vector<ParsedDigest> deleted,
                     remove(batch, cutoff));
    // In the order given: one walk finds them.
    size_t next = 0;
    for (size_t i = at; i < end && next < deleted.size(); ++i) {
      if (blobs[i] == deleted[next]) {
        gone[i] = true;
        ++next;
      }
    }
  }
  return gone;
}

// Sweeps one page of blobs into `report`.
absl::Status SweepPage(const std::vector<StoredBlob>& page,
                       const ReachableBlobs& reached, const Store& store,
                       const SweepDelete& remove,
                       const std::function<absl::Status()>& keep_lease,
                       absl::Time cutoff, bool dry_run, CollectReport& report) {
  std::vector<ParsedDigest> unreachable;
  std::vector<uint64_t> sizes;
  for (const StoredBlob& blob : page) {
    report.blobs++;
    report.bytes += blob.data_size;
    if (reached.Find(blob.digest) != nullptr) {
      report.reachable++;
      report.reachable_bytes += blob.data_size;
      continue;
    }
    unreachable.push_back(blob.digest);
    sizes.push_back(blob.data_size);
  }
  ASSIGN_OR_RETURN(const std::vector<bool> gone,
                   SweepUnreachable(unreachable, store, remove, keep_lease,
                                    cutoff, dry_run));
  for (size_t i = 0; i < gone.size(); ++i) {
    if (gone[i]) {
      report.freed++;
      report.freed_bytes += sizes[i];
    } else {
      report.young++;
    }
  }
  return absl::OkStatus();
}

// Sweeps one page of quarantined blobs into `report`, as SweepPage does.
absl::Status SweepQuarantined(const std::vector<ParsedDigest>& page,
                              const ReachableBlobs& reached, const Store& store,
                              const SweepDelete& remove,
                              const std::function<absl::Status()>& keep_lease,
                              absl::Time cutoff, bool dry_run,
                              CollectReport& report) {
  std::vector<ParsedDigest> unreachable;
  for (const ParsedDigest& digest : page) {
    report.quarantined++;
    // A root's: a Put of its content lifts the quarantine.
    if (reached.Find(digest) == nullptr) unreachable.push_back(digest);
  }
  ASSIGN_OR_RETURN(const std::vector<bool> gone,
                   SweepUnreachable(unreachable, store, remove, keep_lease,
                                    cutoff, dry_run));
  report.quarantined_freed += std::count(gone.begin(), gone.end(), true);
  return absl::OkStatus();
}

// Sweeps what no blob owns (Store::SweepLeftovers) into `report`.
absl::Status SweepLeftovers(Store& store,
                            const std::function<absl::Status()>& keep_lease,
                            absl::Time cutoff, bool dry_run,
                            CollectReport& report) {
  std::string after;
  do {
    RETURN_IF_ERROR(keep_lease());
    ASSIGN_OR_RETURN(const LeftoverPage page,
                     store.SweepLeftovers(after, cutoff, dry_run));
    report.leftovers += page.objects;
    report.leftover_bytes += page.bytes;
    after = page.next;
  } while (!after.empty());
  return absl::OkStatus();
}

// Sweeps the transparency log's staged batches that no append needs
// (lib/tlog) into `report`'s leftovers. A log state that does not decode
// leaves them all: the log reports it.
absl::Status SweepLogBatches(Store& store,
                             const std::function<absl::Status()>& keep_lease,
                             absl::Time cutoff, bool dry_run,
                             CollectReport& report) {
  RETURN_IF_ERROR(keep_lease());
  StoreLogStorage log(store);
  absl::StatusOr<tlog::SweptBatches> swept =
      tlog::SweepStagedBatches(log, cutoff, dry_run);
  if (absl::IsDataLoss(swept.status())) return absl::OkStatus();
  RETURN_IF_ERROR(swept.status());
  report.leftovers += swept->objects;
  report.leftover_bytes += swept->bytes;
  return absl::OkStatus();
}

}  // namespace

std::string FormatCollectReport(const CollectReport& report, bool dry_run) {
  return absl::StrCat(
      dry_run ? "dry_run " : "", "blobs=", report.blobs,
      " bytes=", report.bytes, " reachable=", report.reachable,
      " reachable_bytes=", report.reachable_bytes,
      " quarantined=", report.quarantined,
      " quarantined_freed=", report.quarantined_freed,
      " leftovers=", report.leftovers,
      " leftover_bytes=", report.leftover_bytes, " freed=", report.freed,
      " freed_bytes=", report.freed_bytes, " young=", report.young,
      " names=", report.names, " trees=", report.trees,
      " took=", absl::FormatDuration(report.took));
}

absl::StatusOr<CollectReport> Collect(Store& store, const SweepDelete& remove,
                                      const CollectOptions& options,
                                      absl::Time now) {
  const absl::Time start = absl::Now();
  // A name written after the mark began may reach a blob only if that blob
  // was used since: the cutoff is a grace before the mark.
  const absl::Time cutoff = now - options.grace;
  std::optional<StoreLease> lease;
  if (!options.dry_run) {
    ASSIGN_OR_RETURN(lease,
                     StoreLease::Acquire(store, kCollectorLease, options.holder,
                                         cutoff, now, options.lease_ttl));
  }
  // Before each page and each delete: stop if asked, and keep the lease.
  const std::function<absl::Status()> keep_lease = [&]() -> absl::Status {
    if (options.cancel != nullptr && options.cancel->load()) {
      return absl::CancelledError("the garbage collection was stopped");
    }
    return lease.has_value() ? lease->RenewIfDue(absl::Now())
                             : absl::OkStatus();
  };
  CollectReport report;
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(const ReachableBlobs reached,
                     MarkReachable(store, keep_lease));
    report.names = reached.names();
    report.trees = reached.trees();
    std::string after;
    while (true) {
      RETURN_IF_ERROR(keep_lease());
      ASSIGN_OR_RETURN(const std::vector<StoredBlob> page,
                       store.ListStored(after, kBlobsPerPage));
      RETURN_IF_ERROR(SweepPage(page, reached, store, remove, keep_lease,
                                cutoff, options.dry_run, report));
      if (page.size() < kBlobsPerPage) break;
      after = page.back().digest.ToString();
    }
    after.clear();
    while (true) {
      RETURN_IF_ERROR(keep_lease());
      ASSIGN_OR_RETURN(const std::vector<ParsedDigest> page,
                       store.ListQuarantined(after, kBlobsPerPage));
      RETURN_IF_ERROR(SweepQuarantined(page, reached, store, remove, keep_lease,
                                       cutoff, options.dry_run, report));
      if (page.size() < kBlobsPerPage) break;
      after = page.back().ToString();
    }
    RETURN_IF_ERROR(
        SweepLeftovers(store, keep_lease, cutoff, options.dry_run, report));
    return SweepLogBatches(store, keep_lease, cutoff, options.dry_run, report);
  }();
  if (lease.has_value()) lease->Release();
  RETURN_IF_ERROR(status);
  report.took = absl::Now() - start;
  return report;
}

absl::Status CheckNotSwept(const Store& store,
                           const std::vector<UsedBlob>& blobs, absl::Time now) {
  if (blobs.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::optional<LeaseTerms> sweep,
                   ActiveLease(store, kCollectorLease, now));
  if (!sweep.has_value()) return absl::OkStatus();
  for (const UsedBlob& blob : blobs) {
    if (blob.used_before < sweep->cutoff) {
      return absl::UnavailableError(absl::StrCat(
          "blob ", blob.digest.ToString(),
          " may be deleted by the garbage collection under way (by ",
          sweep->holder, "); retry once it is done"));
    }
  }
  return absl::OkStatus();
}

}  // namespace verity::server
