// What happens when a read finds its blob damaged in the store: the log, the
// corruption counter and, under --on_corruption=quarantine, the quarantine;
// unless the blob is gone from the store (deleted through another replica
// while it was read), which is NOT_FOUND, not damage.

#ifndef VERITYD_SERVER_RPC_CORRUPTION_REPORTER_H_
#define VERITYD_SERVER_RPC_CORRUPTION_REPORTER_H_

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "server/metrics/service_metrics.h"
#include "server/store/served_blobs.h"
#include "server/store/store.h"

namespace verity::server {

enum class OnCorruption {
  kError,       // fail the read with DATA_LOSS
  kQuarantine,  // also stop serving the blob until it is put again
};

// Thread-safe. What it is given must outlive it.
class CorruptionReporter {
 public:
  // Asks `store`, quarantines through `blobs`, counts in `metrics`, and
  // does all of it on `io`, never on the thread that found the damage (a
  // gRPC thread, or the store's own).
  CorruptionReporter(const Store* store, ServedBlobs* blobs,
                     ServiceMetrics* metrics, Executor* io,
                     OnCorruption on_corruption);

  // A read of `digest` ended with `status`, a DATA_LOSS. On the I/O
  // executor: if the blob is gone from the store, hands `then` NOT_FOUND, and
  // nothing is counted. Otherwise logs and counts the corruption and, under
  // OnCorruption::kQuarantine, stops serving the blob until it is put again,
  // then hands `then` `status`, once the blob is out of service: a client
  // told DATA_LOSS finds it quarantined on its next call.
  void Report(const ParsedDigest& digest, const absl::Status& status,
              absl::AnyInvocable<void(absl::Status) &&> then) const;

 private:
  void Count(const absl::Status& status) const;

  const Store* const store_;
  ServedBlobs* const blobs_;
  ServiceMetrics* const metrics_;
  Executor* const io_;
  const OnCorruption on_corruption_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_CORRUPTION_REPORTER_H_
