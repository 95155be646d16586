// Implements the fixture helpers on TestServer's PutBlob.

#include "tests/sdk/sdk_fixture.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

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

void WriteTestFile(const std::string& path, const std::string& data,
                   mode_t mode) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  out.close();
  if (!out || chmod(path.c_str(), mode) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
}

sdk::ClientOptions FastRetryOptions(const std::string& target) {
  sdk::ClientOptions options;
  options.target = target;
  options.retry.initial_backoff = absl::Milliseconds(1);
  options.retry.max_backoff = absl::Milliseconds(10);
  return options;
}

}  // namespace verity::testing
