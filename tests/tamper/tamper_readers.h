// Test-only: reads a range through a (tamper) server the ways tamper_test
// checks, and records every byte each reader released.

#ifndef VERITYD_TESTS_TAMPER_TAMPER_READERS_H_
#define VERITYD_TESTS_TAMPER_TAMPER_READERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "tests/tamper/tamper_cases.h"

namespace verity::tamper {

// What a read released and how it ended. Plain value.
struct Released {
  absl::Status status;
  // (offset from the start of the range, bytes), in the order released.
  std::vector<std::pair<uint64_t, std::string>> writes;
};

// Reads [offset, offset + length) (length 0: to the end) of the blob
// `digest` from the server at `address` with a fresh client.
Released ReadThrough(Reader reader, const std::string& address,
                     const std::string& digest, uint64_t offset,
                     uint64_t length);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_TAMPER_READERS_H_
