// Start-up calibration of the inline limit on the machine verityd runs on:
// the cost of hashing a 4 KiB block against the cost of handing work to the
// verification pool, instead of a guessed constant.

#ifndef VERITYD_SERVER_DISPATCH_CALIBRATION_H_
#define VERITYD_SERVER_DISPATCH_CALIBRATION_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "server/dispatch/verify_pool.h"

namespace verity::server {

struct Calibration {
  absl::Duration hash_4k;  // SHA-256 of one 4 KiB block
  absl::Duration handoff;  // median wait from submit to a pool thread start
  uint64_t urgent_limit_bytes = 0;  // UrgentInlineLimit() of the two

  // e.g. "hash 3.1 us/4 KiB, handoff 8.2 us -> 8192 bytes inline"
  std::string ToString() const;
};

// Takes a few milliseconds. With no pool (inline mode) the handoff is zero.
Calibration Calibrate(VerifyPool* pool);

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_CALIBRATION_H_
