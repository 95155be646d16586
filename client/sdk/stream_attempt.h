// One Read RPC of a fetch: asks for what is still missing, tells the server
// which tree blocks the client holds, and verifies the stream against the
// blob's tree shared with every other stream reading it. A range that fits
// one message, of a blob whose tree the client holds, is read with one
// ReadSmall call instead: the same request and verification, without a
// stream's set-up.

#ifndef VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_
#define VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "client/sdk/fetch_counters.h"
#include "client/sdk/fetch_writer.h"
#include "client/sdk/read_stream_verifier.h"
#include "client/sdk/received_read.h"
#include "client/sdk/signature_check.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_verifier.h"
#include "lib/tree/verified_tree.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// What every stream of one fetch reads, and where it reports. Not owned;
// everything outlives the fetch.
struct ReadTarget {
  const ReceivedReadCaller* read = nullptr;
  ParsedDigest trusted;
  v1::PriorityClass priority = v1::PRIORITY_CLASS_NONE;
  ReadStreamVerifier::TreeCache* cache = nullptr;
  FetchCounters* counters = nullptr;
  VerifierOptions verifier;
  // If set, each stream's first message must carry a good fs-verity
  // signature of `trusted`, checked before the message is processed.
  const SignatureCheck* signature = nullptr;
};

struct AttemptResult {
  absl::Status status;
  // The status is the RPC's own (the transport or the server failed), not
  // verification's or the sink's: only such failures may be retried.
  bool from_rpc = false;
  // The server has no ReadSmall: nothing happened, and the attempt is to be
  // made again, as a stream, on a new ClientContext (a context serves one
  // call).
  bool again_as_stream = false;
};

// Thread-compatible; other attempts may share the tree concurrently.
class StreamAttempt {
 public:
  // Reads blob bytes [begin, *end), or [begin, end of blob) without `end`;
  // `end` must be past `begin`, since a zero length asks for the rest of the
  // blob. `tree` is the blob's shared tree, or null to find or create it
  // from the first message.
  StreamAttempt(const ReadTarget& target, std::shared_ptr<VerifiedTree> tree,
                uint64_t begin, std::optional<uint64_t> end);

  StreamAttempt(const StreamAttempt&) = delete;
  StreamAttempt& operator=(const StreamAttempt&) = delete;

  // Runs the RPC on `context`, writing the verified bytes to `writer` as part
  // `part`; starts the writer once the blob's size is known.
  AttemptResult Run(grpc::ClientContext* context, FetchWriter& writer,
                    int part);

  // The first byte not yet delivered: where a resumed stream starts.
  uint64_t next() const { return verifier_.verified_end(); }
  // The blob's tree; null until the first message authenticated it.
  std::shared_ptr<VerifiedTree> tree() const {
    return verifier_.verified_tree();
  }
  // The blob's size once the first message authenticated it.
  std::optional<uint64_t> blob_size() const;

 private:
  // Sets `*names_held` if the request tells the server of tree blocks the
  // client holds.
  v1::ReadRequest MakeRequest(bool* names_held) const;
  // Counts a request that reached the server.
  void CountRequest(bool names_held) const;
  // The tree is held, the range is known and fits one ReadSmall message, and
  // the server has the method.
  bool FitsSmallRead() const;
  // The attempt as one ReadSmall call.
  AttemptResult RunSmall(grpc::ClientContext* context, FetchWriter& writer,
                         int part);
  absl::Status OnMessage(ReceivedReadResponse& msg, FetchWriter& writer,
                         int part);

  const ReadTarget& target_;
  const uint64_t begin_;
  const std::optional<uint64_t> end_;
  ReadStreamVerifier verifier_;
  bool first_message_ = true;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_STREAM_ATTEMPT_H_
