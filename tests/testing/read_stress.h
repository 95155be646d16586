// Test-only: the read path over S3 under cache pressure. Many SDK clients read
// random ranges of a few large blobs at once from a verityd whose memory
// cache holds a slab or two, so that slabs are evicted between a read's "is
// it local?" and its read; every byte is compared with what was put, and the
// server's log is watched for the corruption it reports.

#ifndef VERITYD_TESTS_TESTING_READ_STRESS_H_
#define VERITYD_TESTS_TESTING_READ_STRESS_H_

#include <cstdint>

#include "server/server_options.h"

namespace verity::testing {

// What the stress does. Plain value; the defaults are the issue's
// reproduction: four 24 MiB blobs, eight concurrent readers, a few hundred
// reads.
struct ReadStressOptions {
  int blobs = 4;
  uint64_t blob_bytes = uint64_t{24} << 20;
  int readers = 8;
  // Reads by all readers together, spread evenly over them.
  int reads = 400;
  // Each read picks a blob and an offset uniformly, and a length
  // log-uniformly from one 4 KiB block to this, cut at the blob's end: many
  // small reads within a slab, some across several.
  uint64_t max_read_bytes = uint64_t{3} << 20;
  // The blobs' contents and every reader's ranges derive from it.
  uint32_t seed = 1;
};

// $READ_STRESS_SEED if set, else one from the clock; printed either way, with
// how to repeat it.
uint32_t ReadStressSeed();

// `options` with verityd's --memory_cache_bytes=SLABS*4MiB
// --cache_slab_bytes=4MiB --read_ahead_bytes=4MiB and no --cache_dir.
server::ServerOptions UnderCachePressure(server::ServerOptions options,
                                         int slabs);

// Starts a verityd with `options` (a store over S3; its log is captured),
// puts the blobs through the SDK, runs the readers, and fails the current
// gtest test for any read that failed or returned other bytes (naming the
// reader, blob, range and status) and for any "corruption detected" the
// server logged.
void RunReadStress(server::ServerOptions options,
                   const ReadStressOptions& stress);

}  // namespace verity::testing

#endif  // VERITYD_TESTS_TESTING_READ_STRESS_H_
