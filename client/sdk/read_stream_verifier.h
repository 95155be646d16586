// The verifying consumer of a Read stream: checks every message against a
// digest the caller trusts and releases only bytes that were proven to be the
// blob's content at their offset.

#ifndef VERITYD_CLIENT_SDK_READ_STREAM_VERIFIER_H_
#define VERITYD_CLIENT_SDK_READ_STREAM_VERIFIER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "lib/base/byte_chain.h"
#include "lib/base/lru_cache.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_verifier.h"
#include "lib/tree/verified_tree.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// Receives verified bytes, in order. A non-OK return stops the stream and is
// returned unchanged by OnResponse().
using ByteSink = std::function<absl::Status(absl::Span<const uint8_t>)>;

// Consumes one Read stream's messages in order and enforces the protocol of
// verity.proto's ReadResponse. Every inconsistency in what the server sent is
// DATA_LOSS; nothing of an offending message's data reaches the sink, and the
// verifier then refuses further messages.
//
// Each data chunk is verified whole before any of it is released: a chunk
// with one bad block releases nothing, so the sink only ever sees content of
// entirely verified messages and verified_end() advances a message at a time.
// This costs at most one chunk of re-reading on resume, and buys one simple
// invariant instead of partial releases to reason about.
//
// A stream adds to the tree only blocks covering its range (others are
// refused), so a server cannot make a small read hold a large tree. Nor can
// it make a stream endless: each tree block may come once, each data chunk
// must advance, and a message carrying neither (an empty message) is allowed
// kMaxEmptyMessages times, so a stream that is not refused has at most
// 1 + (tree blocks) + (data blocks) + kMaxEmptyMessages messages.
//
// The descriptor is authenticated once per stream: hashed against the trusted
// digest, or, when a verified tree is held, compared with the descriptor that
// tree was authenticated by.
//
// Thread-compatible; the tree it verifies against is thread-safe and may be
// shared with other streams (through UseVerifiedTree() or the cache).
class ReadStreamVerifier {
 public:
  using TreeCache = LruCache<VerifiedTree, DigestKeyOf<VerifiedTree>>;

  // Messages after the first with neither tree blocks nor data that a stream
  // may carry; the next one is DATA_LOSS. An honest server sends none.
  static constexpr int kMaxEmptyMessages = 4;

  // `trusted` is the digest the caller trusts. The range is
  // [offset, offset + *length), or [offset, end of blob) when `length` is
  // nullopt; the range need not be block-aligned. With a `cache` (which must
  // outlive this), a stream that starts without a tree shares the blob's tree
  // from it, or adds the one it authenticates, and charges it as it grows.
  ReadStreamVerifier(ParsedDigest trusted, uint64_t offset,
                     std::optional<uint64_t> length,
                     const VerifierOptions& options = {},
                     TreeCache* cache = nullptr);

  ReadStreamVerifier(const ReadStreamVerifier&) = delete;
  ReadStreamVerifier& operator=(const ReadStreamVerifier&) = delete;

  // Starts from tree blocks verified earlier for the same blob, e.g.
  // verified_tree() of a previous stream. Call before the first OnResponse().
  // INVALID_ARGUMENT if `tree` was verified against another digest.
  absl::Status UseVerifiedTree(std::shared_ptr<VerifiedTree> tree);

  // For ReadRequest.have_tree_blocks: the TreeBlock.index of every verified
  // tree block the range needs. Empty until a tree is known.
  std::vector<uint64_t> HeldTreeBlocks() const;
  // For ReadRequest.have_whole_tree: a tree is known and holds every block
  // the range needs.
  bool HoldsAllTreeBlocks() const;

  // Processes the stream's next message; calls `sink` with the verified bytes
  // of the requested range it completes, in order. OUT_OF_RANGE if the
  // (authenticated) descriptor shows the range is not inside the blob;
  // INVALID_ARGUMENT if its parameters exceed `options`.
  absl::Status OnResponse(const verity::v1::ReadResponse& msg,
                          const ByteSink& sink);
  // The same for a message whose data was left in the pieces it arrived in
  // (ParseReadResponsePieces): `head`'s own data is ignored. The sink is
  // called with the verified range a piece at a time.
  absl::Status OnResponse(const verity::v1::ReadResponse& head,
                          const ByteChain& data, const ByteSink& sink);

  // Call when the stream ended with OK: DATA_LOSS unless the whole range was
  // delivered.
  absl::Status Finish() const;

  // The first byte of the range not yet released; where a resumed read
  // starts.
  uint64_t verified_end() const { return verified_end_; }

  // The tree blocks verified so far, with the descriptor; null before the
  // first message. Shareable with a later stream of the same blob.
  std::shared_ptr<VerifiedTree> verified_tree() const { return tree_; }

  // Tree blocks this stream verified that the tree did not hold before.
  uint64_t tree_blocks_added() const { return tree_blocks_added_; }

 private:
  std::vector<TreeBlockId> NeededTreeBlocks() const;
  absl::Status Process(const verity::v1::ReadResponse& head,
                       const ByteChain& data, const ByteSink& sink);
  absl::Status OnFirstResponse(const verity::v1::ReadResponse& msg);
  absl::Status CountEmptyMessage(const verity::v1::ReadResponse& msg);
  absl::Status CheckDigestText(absl::string_view text) const;
  absl::Status SetRange(const TreeGeometry& geometry);
  absl::Status AddTreeBlock(const verity::v1::TreeBlock& block);
  absl::Status OnData(uint64_t data_offset, const ByteChain& data,
                      const ByteSink& sink);
  absl::Status CheckDataPlacement(uint64_t data_offset, uint64_t size) const;

  absl::Status AuthenticateDescriptor(const Descriptor& descriptor);

  const ParsedDigest trusted_;
  const uint64_t offset_;
  const std::optional<uint64_t> length_;
  const VerifierOptions options_;
  TreeCache* const cache_;

  std::shared_ptr<VerifiedTree> tree_;
  uint64_t tree_blocks_added_ = 0;
  bool started_ = false;  // the first message has been accepted
  int empty_messages_ = 0;
  absl::Status failed_;  // once not OK, every later call returns it
  // Known once the descriptor is: the range's end, and the data blocks
  // covering it, [next_offset_ / block size, end_block_).
  uint64_t range_end_ = 0;
  uint64_t next_offset_ = 0;  // where the next data chunk must start
  uint64_t data_end_ = 0;     // where the last data chunk must end
  uint64_t end_block_ = 0;
  uint64_t verified_end_;
  // TreeBlock.index values seen in this stream; each may come once.
  absl::flat_hash_set<uint64_t> received_tree_blocks_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_READ_STREAM_VERIFIER_H_
