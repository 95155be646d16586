// Test-only: blobs stored in a real in-process verityd, and SDK client
// options that retry fast, for the tests in tests/sdk.

#ifndef VERITYD_TESTS_SDK_SDK_FIXTURE_H_
#define VERITYD_TESTS_SDK_SDK_FIXTURE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "lib/tree/merkle_params.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {

// A blob the server stores. Plain value.
struct StoredBlob {
  std::string data;
  sdk::Digest digest;
};

// Puts `size` pseudo-random bytes from `seed`; aborts the test run if the
// server refuses.
StoredBlob PutRandomBlob(TestServer& server, size_t size, uint32_t seed,
                         const MerkleParams& params = {});

// Writes `data` to a new file at `path` with `mode`; aborts the test run if
// it cannot.
void WriteTestFile(const std::string& path, const std::string& data,
                   mode_t mode = 0644);

// Options for `target` with retries a test does not wait for.
sdk::ClientOptions FastRetryOptions(const std::string& target);

}  // namespace verity::testing

#endif  // VERITYD_TESTS_SDK_SDK_FIXTURE_H_
