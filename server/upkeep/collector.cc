// Implements garbage collection's mark and sweep.

#include "server/upkeep/collector.h"

#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/upkeep/lease.h"
#include "server/upkeep/roots.h"

namespace verity::server {
namespace {

constexpr size_t kBlobsPerPage = 1000;

// Deletes the unreachable blob `digest` if it was last used before `cutoff`
// (a dry run: tells whether it would), keeping the lease first: whether it
// went.
absl::StatusOr<bool> Sweep(const ParsedDigest& digest, const Store& store,
                           const SweepDelete& remove,
                           const std::function<absl::Status()>& keep_lease,
                           absl::Time cutoff, bool dry_run) {
  if (dry_run) {
    ASSIGN_OR_RETURN(const absl::Time used, store.LastUsed(digest));
    return used < cutoff;
  }
  RETURN_IF_ERROR(keep_lease());
  return remove(digest, cutoff);
}

// Sweeps one page of blobs into `report`, `keep_lease` before each delete:
// a page of slow deletes must not outlive the lease that guards them.
absl::Status SweepPage(const std::vector<BlobInfo>& page,
                       const ReachableBlobs& reached, const Store& store,
                       const SweepDelete& remove,
                       const std::function<absl::Status()>& keep_lease,
                       absl::Time cutoff, bool dry_run, CollectReport& report) {
  for (const BlobInfo& info : page) {
    ASSIGN_OR_RETURN(const ParsedDigest digest, ParseDigest(info.digest));
    report.blobs++;
    report.bytes += info.descriptor.data_size;
    if (reached.Find(digest) != nullptr) {
      report.reachable++;
      report.reachable_bytes += info.descriptor.data_size;
      continue;
    }
    const absl::StatusOr<bool> old =
        Sweep(digest, store, remove, keep_lease, cutoff, dry_run);
    if (absl::IsNotFound(old.status())) continue;  // deleted meanwhile
    RETURN_IF_ERROR(old.status());
    if (*old) {
      report.freed++;
      report.freed_bytes += info.descriptor.data_size;
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
  for (const ParsedDigest& digest : page) {
    report.quarantined++;
    // A root's: a Put of its content lifts the quarantine.
    if (reached.Find(digest) != nullptr) continue;
    const absl::StatusOr<bool> old =
        Sweep(digest, store, remove, keep_lease, cutoff, dry_run);
    if (absl::IsNotFound(old.status())) continue;
    RETURN_IF_ERROR(old.status());
    if (*old) report.quarantined_freed++;
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormatCollectReport(const CollectReport& report, bool dry_run) {
  return absl::StrCat(
      dry_run ? "dry_run " : "", "blobs=", report.blobs,
      " bytes=", report.bytes, " reachable=", report.reachable,
      " reachable_bytes=", report.reachable_bytes,
      " quarantined=", report.quarantined,
      " quarantined_freed=", report.quarantined_freed, " freed=", report.freed,
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
      ASSIGN_OR_RETURN(const std::vector<BlobInfo> page,
                       store.List(after, kBlobsPerPage));
      RETURN_IF_ERROR(SweepPage(page, reached, store, remove, keep_lease,
                                cutoff, options.dry_run, report));
      if (page.size() < kBlobsPerPage) break;
      after = page.back().digest;
    }
    after.clear();
    while (true) {
      RETURN_IF_ERROR(keep_lease());
      ASSIGN_OR_RETURN(const std::vector<ParsedDigest> page,
                       store.ListQuarantined(after, kBlobsPerPage));
      RETURN_IF_ERROR(SweepQuarantined(page, reached, store, remove, keep_lease,
                                       cutoff, options.dry_run, report));
      if (page.size() < kBlobsPerPage) return absl::OkStatus();
      after = page.back().ToString();
    }
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
