// The collector's lease: one shared record of the store (Store::WriteRecord,
// a compare-and-set), so that one garbage collection at a time sweeps a
// store that many replicas share, and so that a write making blobs
// reachable can tell whether a sweep may be deleting them.
//
// Its body: "holder <id>\nexpires <unix seconds>\ncutoff <unix seconds>\n".
// The sweep deletes only blobs last used before `cutoff`; a holder that
// stops renewing loses the lease at `expires`, and the next collection
// starts over (a mark and sweep is safe to repeat).

#ifndef VERITYD_SERVER_UPKEEP_LEASE_H_
#define VERITYD_SERVER_UPKEEP_LEASE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/store.h"

namespace verity::server {

// The shared record's key.
inline constexpr absl::string_view kCollectorLeaseKey = "collector-lease";

// What a lease says. Plain value; times to the second.
struct LeaseTerms {
  std::string holder;
  absl::Time expires;
  absl::Time cutoff;
};

std::string EncodeLease(const LeaseTerms& terms);
// DATA_LOSS unless `body` is what EncodeLease makes.
absl::StatusOr<LeaseTerms> DecodeLease(absl::string_view body);

// A lease held. Not thread-safe.
class CollectorLease {
 public:
  // Takes the lease for `holder` until now + ttl, with `cutoff`, unless
  // another holder's has not expired: ABORTED naming that holder and when
  // it expires. One of `holder`'s own (a previous life of this replica,
  // killed mid-collection) and one that does not parse are taken over.
  static absl::StatusOr<CollectorLease> Acquire(Store& store,
                                                absl::string_view holder,
                                                absl::Time cutoff,
                                                absl::Time now,
                                                absl::Duration ttl);

  // Extends it to now + ttl. ABORTED if it was taken over (it had expired).
  absl::Status Renew(absl::Time now);
  // Ends it now, so the next collection need not wait. Best effort.
  void Release();

  const LeaseTerms& terms() const { return terms_; }

 private:
  CollectorLease(Store& store, LeaseTerms terms, std::string version,
                 absl::Duration ttl)
      : store_(&store),
        terms_(std::move(terms)),
        version_(std::move(version)),
        ttl_(ttl) {}

  Store* store_;
  LeaseTerms terms_;
  std::string version_;
  absl::Duration ttl_;
};

// The terms of a lease that has not expired at `now`: a sweep may be under
// way; nullopt if none.
absl::StatusOr<std::optional<LeaseTerms>> ActiveLease(const Store& store,
                                                      absl::Time now);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_LEASE_H_
