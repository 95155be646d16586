// One Read RPC of a fetch: asks for what is still missing, tells the server
// which tree blocks the client holds, and verifies the stream against the
// blob's tree shared with every other stream reading it.

#ifndef VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_
#define VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "client/sdk/fetch_counters.h"
#include "client/sdk/read_stream_verifier.h"
#include "client/sdk/tree_cache.h"
#include "lib/descriptor.h"
#include "lib/merkle_verifier.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::client {

// What every stream of one fetch reads, and where it reports. Not owned;
// everything outlives the fetch.
struct ReadTarget {
  v1::Verity::StubInterface* stub = nullptr;
  ParsedDigest trusted;
  v1::PriorityClass priority = v1::PRIORITY_CLASS_NONE;
  TreeCache* cache = nullptr;
  FetchCounters* counters = nullptr;
  VerifierOptions verifier;
};

// Receives verified bytes with their offset in the blob, in order.
using PositionedSink =
    std::function<absl::Status(uint64_t offset, absl::Span<const uint8_t>)>;

struct AttemptResult {
  absl::Status status;
  // The status is the RPC's own (the transport or the server failed), not
  // verification's or the sink's: only such failures may be retried.
  bool from_rpc = false;
};

// Thread-compatible; other attempts may share the tree concurrently.
class StreamAttempt {
 public:
  // Reads blob bytes [begin, *end), or [begin, end of blob) without `end`;
  // `end` must be past `begin`, since a zero length asks for the rest of the
  // blob. `tree` is the blob's shared tree, or null to find or create it
  // from the first message.
  StreamAttempt(const ReadTarget& target, std::shared_ptr<SharedTree> tree,
                uint64_t begin, std::optional<uint64_t> end);

  StreamAttempt(const StreamAttempt&) = delete;
  StreamAttempt& operator=(const StreamAttempt&) = delete;

  // Runs the RPC on `context`, passing verified bytes to `sink`.
  AttemptResult Run(grpc::ClientContext* context, const PositionedSink& sink);

  // The first byte not yet delivered: where a resumed stream starts.
  uint64_t next() const { return next_; }
  // The blob's shared tree; null until the first message authenticated it.
  const std::shared_ptr<SharedTree>& tree() const { return tree_; }
  // The blob's size once the first message authenticated it.
  std::optional<uint64_t> blob_size() const;

 private:
  void UseTree();
  v1::ReadRequest MakeRequest();
  void AdoptTree(const v1::ReadResponse& first);
  absl::Status OnMessage(v1::ReadResponse& msg, const PositionedSink& sink);
  absl::Status AddTreeBlocks(const v1::ReadResponse& msg);
  absl::Status VerifyData(const v1::ReadResponse& msg,
                          const PositionedSink& sink);

  const ReadTarget& target_;
  std::shared_ptr<SharedTree> tree_;
  const uint64_t begin_;
  const std::optional<uint64_t> end_;
  ReadStreamVerifier verifier_;
  bool first_message_ = true;
  uint64_t next_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_
