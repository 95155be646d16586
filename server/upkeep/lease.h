// A lease on a store's upkeep: one shared record of the store
// (Store::WriteRecord, a compare-and-set), so that one garbage collection at a
// time sweeps a store that many replicas share (and a write making blobs
// reachable can tell whether a sweep may be deleting them), and one scrub at a
// time reads it.
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

// Which lease: its shared record's key, and the work it guards (for
// messages).
struct LeaseKind {
  absl::string_view key;
  absl::string_view work;
};
inline constexpr LeaseKind kCollectorLease{"collector-lease",
                                           "garbage collection"};
inline constexpr LeaseKind kScrubLease{"scrub-lease", "scrub"};

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
class StoreLease {
 public:
  // Takes the lease for `holder` until now + ttl, with `cutoff`, unless
  // another holder's has not expired: ABORTED naming that holder and when
  // it expires, also when that holder's write came between this one's
  // read and write. One of `holder`'s own (a previous life of this replica,
  // killed mid-collection) and one that does not parse are taken over.
  static absl::StatusOr<StoreLease> Acquire(Store& store, LeaseKind kind,
                                            absl::string_view holder,
                                            absl::Time cutoff, absl::Time now,
                                            absl::Duration ttl);

  // Extends it to now + ttl. ABORTED if it was taken over (it had expired).
  absl::Status Renew(absl::Time now);
  // Renew(), once less than half the ttl is left: what a holder calls
  // between steps.
  absl::Status RenewIfDue(absl::Time now);
  // Ends it now, so the next holder need not wait. Best effort.
  void Release();

  const LeaseTerms& terms() const { return terms_; }

 private:
  StoreLease(Store& store, LeaseKind kind, LeaseTerms terms,
             std::string version, absl::Duration ttl)
      : store_(&store),
        kind_(kind),
        terms_(std::move(terms)),
        version_(std::move(version)),
        ttl_(ttl) {}

  Store* store_;
  LeaseKind kind_;
  LeaseTerms terms_;
  std::string version_;
  absl::Duration ttl_;
};

// The terms of a lease that has not expired at `now`: a sweep may be under
// way; nullopt if none.
absl::StatusOr<std::optional<LeaseTerms>> ActiveLease(const Store& store,
                                                      LeaseKind kind,
                                                      absl::Time now);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_LEASE_H_
