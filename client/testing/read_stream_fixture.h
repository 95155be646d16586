// Test support: the Read streams an honest server would send for a test blob,
// for tests to replay or tamper with.

#ifndef VERITYD_CLIENT_TESTING_READ_STREAM_FIXTURE_H_
#define VERITYD_CLIENT_TESTING_READ_STREAM_FIXTURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "client/sdk/read_stream_verifier.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// How the honest stream is cut into messages.
struct StreamShape {
  uint64_t blocks_per_chunk = 4;
  // TreeBlock.index values the client holds (ReadRequest.have_tree_blocks).
  absl::flat_hash_set<uint64_t> have_tree_blocks;
  // The first message carries only the digest and descriptor.
  bool descriptor_alone = false;
};

// What an honest server streams for [offset, offset + length), or to the end
// when `length` is nullopt: the first message has the digest and descriptor;
// each chunk comes with the tree blocks it needs that were not sent before,
// top-down. The range must lie inside the blob.
std::vector<verity::v1::ReadResponse> HonestReadStream(
    const TestBlob& blob, uint64_t offset, std::optional<uint64_t> length,
    const StreamShape& shape = {});

// What a ReadStreamVerifier made of a stream.
struct ReplayResult {
  absl::Status status;    // the first error, else Finish()
  std::string released;   // everything the sink received, concatenated
  uint64_t verified_end;  // verified_end() at the end
};

// Feeds `stream` to `verifier` until the first error, then calls Finish() if
// there was none.
ReplayResult Replay(ReadStreamVerifier& verifier,
                    const std::vector<verity::v1::ReadResponse>& stream);

// As above, with a fresh verifier trusting `trusted`.
ReplayResult Replay(const ParsedDigest& trusted, uint64_t offset,
                    std::optional<uint64_t> length,
                    const std::vector<verity::v1::ReadResponse>& stream);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_TESTING_READ_STREAM_FIXTURE_H_
