// Implements Calibrate(): medians of repeated small measurements, so one
// preemption does not skew them.

#include "server/dispatch/calibration.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "lib/hash/hash.h"
#include "lib/tree/block_hasher.h"
#include "lib/tree/merkle_params.h"
#include "server/dispatch/dispatch_policy.h"

namespace verity::server {
namespace {

absl::Duration Median(std::vector<absl::Duration> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Per 4 KiB block, as verification hashes: BlockHasher::HashBlocks, two
// blocks at a time where the CPU has SHA-NI.
absl::Duration HashCost() {
  constexpr int kBlocks = 64;
  const BlockHasher hasher(MerkleParams{});
  const std::string data(kBlocks * hasher.block_size(), '\x5a');
  std::string digests(kBlocks * hasher.digest_size(), '\0');
  std::vector<absl::Duration> samples;
  for (int round = 0; round < 9; ++round) {
    const absl::Time start = absl::Now();
    hasher.HashBlocks(AsBytes(data), AsMutableBytes(&digests));
    samples.push_back((absl::Now() - start) / kBlocks);
  }
  return Median(std::move(samples));
}

absl::Duration HandoffCost(VerifyPool* pool) {
  if (pool == nullptr) return absl::ZeroDuration();
  std::vector<absl::Duration> samples;
  for (int i = 0; i < 31; ++i) {
    absl::Notification ran;
    pool->Submit(CurrentCpu(), PriorityClass::kRt,
                 [&](absl::Duration queue_wait) {
                   samples.push_back(queue_wait);
                   ran.Notify();
                 });
    ran.WaitForNotification();
  }
  return Median(std::move(samples));
}

}  // namespace

std::string Calibration::ToString() const {
  return absl::StrFormat("hash %.1f us/4 KiB, handoff %.1f us -> %d bytes",
                         absl::ToDoubleMicroseconds(hash_4k),
                         absl::ToDoubleMicroseconds(handoff),
                         urgent_limit_bytes);
}

Calibration Calibrate(VerifyPool* pool) {
  Calibration calibration;
  calibration.hash_4k = HashCost();
  calibration.handoff = HandoffCost(pool);
  calibration.urgent_limit_bytes =
      UrgentInlineLimit(calibration.hash_4k, calibration.handoff);
  return calibration;
}

}  // namespace verity::server
