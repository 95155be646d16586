// A store with a quota (--max_store_bytes): a Put that would take the blobs'
// data bytes past it is refused with RESOURCE_EXHAUSTED ("the store is full")
// and nothing is stored; a Put of content stored already (its expected digest
// is) passes. Every other call goes through unchanged.
//
// What is used: a store that keeps count (the file store's Totals()) says;
// for one that does not (S3, shared by replicas), the last count from a
// listing (Recount(): at start and after each garbage collection) plus what
// this server stored since. Deletes since the count are not subtracted until
// the next: the figure errs high, so the quota refuses early, never late. A
// bucket several replicas write is held to the quota as each replica last
// counted it: each may let its own Puts pass it by what the others stored
// since.

#ifndef VERITYD_SERVER_STORE_QUOTA_STORE_H_
#define VERITYD_SERVER_STORE_QUOTA_STORE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/forwarding_store.h"

namespace verity::server {

// Thread-safe.
class QuotaStore : public ForwardingStore {
 public:
  // `max_bytes`: the most data bytes the store holds; 0: no quota. Owns
  // `inner`.
  QuotaStore(std::unique_ptr<Store> inner, uint64_t max_bytes);

  uint64_t max_bytes() const { return max_bytes_; }

  // The data bytes stored as this server knows them (see above), and those
  // Puts under way have taken of the quota.
  uint64_t Used() const ABSL_LOCKS_EXCLUDED(mu_);

  // For a store that keeps no count: counts the stored data bytes from a
  // listing (blocking: one listing of the whole store) and starts over from
  // there. OK at once for one that keeps count.
  absl::Status Recount() ABSL_LOCKS_EXCLUDED(mu_);
  // A count made elsewhere (a garbage collection's listing), of a listing
  // that began at `started`: what this server stored since then is kept.
  void Counted(uint64_t bytes, absl::Time started) ABSL_LOCKS_EXCLUDED(mu_);

  // Takes `bytes` more of the quota for a Put under way: RESOURCE_EXHAUSTED
  // "the store is full" if the store's data, the Puts under way and these
  // would pass it. Released by Release(), or kept by Stored().
  absl::Status Reserve(uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  void Release(uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // A Put's reservation of `bytes` became a stored blob (`added`: new
  // content) or was found stored already.
  void Stored(uint64_t bytes, bool added) ABSL_LOCKS_EXCLUDED(mu_);

  // Each blob takes the quota a Put of it would: one that does not fit fails
  // alone (RESOURCE_EXHAUSTED); the others are stored as one batch.
  std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs) override;

 private:
  absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) override;

  // What the store holds, without the reservations.
  uint64_t StoredBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<Store> owned_;
  const uint64_t max_bytes_;
  mutable absl::Mutex mu_;
  uint64_t counted_ ABSL_GUARDED_BY(mu_) = 0;  // at the last count
  // Bytes of new blobs this server stored since the count, by the minute
  // they were stored in: a later count of a listing that began before the
  // last of a minute's keeps that minute's (errs high).
  struct Added {
    absl::Time minute;
    absl::Time last;
    uint64_t bytes = 0;
  };
  std::deque<Added> added_ ABSL_GUARDED_BY(mu_);
  uint64_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_QUOTA_STORE_H_
