// Test-only: budgets that hold per server, not per call. Four clients send
// 1,000-digest BatchRead and FindMissing calls in a loop while a fifth makes
// Stat calls and 4 KiB reads; the fifth must never be refused (no attempt
// but its first: a RESOURCE_EXHAUSTED is a failure), and its latencies are
// printed (p50, p99, worst).

#ifndef VERITYD_TESTS_TESTING_BATCH_LOAD_H_
#define VERITYD_TESTS_TESTING_BATCH_LOAD_H_

#include "absl/time/time.h"
#include "server/server_options.h"

namespace verity::testing {

// Plain value.
struct BatchLoadOptions {
  int blobs = 1000;      // stored, 4 KiB each: one full BatchRead
  int load_clients = 4;  // each: BatchRead of all, FindMissing of all and
                         // as many absent, in a loop
  absl::Duration duration = absl::Seconds(20);
};

// Starts a verityd with `options`, puts the blobs, runs the load and the
// fifth client for `load.duration`, and fails the current gtest test if any
// call of the fifth failed or any blob a BatchRead returned was not the
// blob's bytes.
void RunBatchLoad(server::ServerOptions options, const BatchLoadOptions& load);

}  // namespace verity::testing

#endif  // VERITYD_TESTS_TESTING_BATCH_LOAD_H_
