// Implements the fixture helpers on TestServer's PutBlob.

#include "tests/sdk/sdk_fixture.h"

#include <cstdio>
#include <cstdlib>

namespace verity::testing {

StoredBlob PutRandomBlob(TestServer& server, size_t size, uint32_t seed,
                         const MerkleParams& params) {
  std::string data = RandomBytes(size, seed);
  absl::StatusOr<v1::PutResponse> put = PutBlob(server.stub(), data, params);
  absl::StatusOr<sdk::Digest> digest =
      put.ok() ? sdk::Digest::Parse(put->info().digest())
               : absl::StatusOr<sdk::Digest>(put.status());
  if (!digest.ok()) {
    std::fprintf(stderr, "put failed: %s\n",
                 digest.status().ToString().c_str());
    std::abort();
  }
  return {std::move(data), *std::move(digest)};
}

sdk::ClientOptions FastRetryOptions(const std::string& target) {
  sdk::ClientOptions options;
  options.target = target;
  options.retry.initial_backoff = absl::Milliseconds(1);
  options.retry.max_backoff = absl::Milliseconds(10);
  return options;
}

}  // namespace verity::testing
