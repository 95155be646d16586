// The counters behind sdk::ClientStats, bumped without locks on the read
// path.

#ifndef VERITYD_CLIENT_SDK_FETCH_COUNTERS_H_
#define VERITYD_CLIENT_SDK_FETCH_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "verity/client.h"

namespace verity::client {

// Thread-safe. Relaxed ordering: each counter is exact, but a snapshot taken
// during a fetch may mix counts from slightly different moments.
struct FetchCounters {
  std::atomic<uint64_t> read_streams{0};
  std::atomic<uint64_t> small_reads{0};
  std::atomic<uint64_t> batch_reads{0};
  std::atomic<uint64_t> batch_blobs{0};
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> requests_with_held_tree_blocks{0};
  std::atomic<uint64_t> tree_blocks_received{0};
  std::atomic<uint64_t> tree_blocks_hashed{0};
  std::atomic<uint64_t> data_bytes_verified{0};
  std::atomic<uint64_t> bytes_delivered{0};

  static void Add(std::atomic<uint64_t>& counter, uint64_t n) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }

  // The tree cache fields are left for the caller.
  sdk::ClientStats Snapshot() const {
    sdk::ClientStats stats;
    stats.read_streams = read_streams.load(std::memory_order_relaxed);
    stats.small_reads = small_reads.load(std::memory_order_relaxed);
    stats.batch_reads = batch_reads.load(std::memory_order_relaxed);
    stats.batch_blobs = batch_blobs.load(std::memory_order_relaxed);
    stats.retries = retries.load(std::memory_order_relaxed);
    stats.requests_with_held_tree_blocks =
        requests_with_held_tree_blocks.load(std::memory_order_relaxed);
    stats.tree_blocks_received =
        tree_blocks_received.load(std::memory_order_relaxed);
    stats.tree_blocks_hashed =
        tree_blocks_hashed.load(std::memory_order_relaxed);
    stats.data_bytes_verified =
        data_bytes_verified.load(std::memory_order_relaxed);
    stats.bytes_delivered = bytes_delivered.load(std::memory_order_relaxed);
    return stats;
  }
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_FETCH_COUNTERS_H_
