// The verity client SDK: fetch blobs and ranges from verityd with every byte
// verified against a digest the caller trusts, resumed across broken streams
// and optionally split over parallel streams; and put, stat, list and
// delete blobs.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_CLIENT_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/limits.h"
#include "verity/blob_info.h"
#include "verity/digest.h"
#include "verity/options.h"
#include "verity/sink.h"

namespace verity::sdk {

// Counters since the client was created, for monitoring and for tests that
// check what the tree cache saves. Plain value.
struct ClientStats {
  uint64_t read_streams = 0;  // Read RPCs started, resumed ones included
  // ReadSmall RPCs: reads of at most 256 KiB of blocks whose tree was cached,
  // made in one unary call instead of a stream.
  uint64_t small_reads = 0;
  // BatchRead RPCs, and the blobs they returned verified.
  uint64_t batch_reads = 0;
  uint64_t batch_blobs = 0;
  uint64_t retries = 0;  // of those, the ones started after a failure
  // Requests that told the server which tree blocks the client holds.
  uint64_t requests_with_held_tree_blocks = 0;
  uint64_t tree_blocks_received = 0;
  // Received tree blocks that were not held yet and so were hashed.
  uint64_t tree_blocks_hashed = 0;
  uint64_t data_bytes_verified = 0;  // whole blocks, as received
  uint64_t bytes_delivered = 0;      // to sinks: the requested ranges
  uint64_t tree_cache_bytes = 0;     // now
  uint64_t tree_cache_blobs = 0;     // now
};

// What one BatchRead may ask for and one BatchUpdate may store: the
// server's limits (proto/limits.h).
using ::verity::v1::kMaxBatchReadBlobBytes;
using ::verity::v1::kMaxBatchReadBlobs;
using ::verity::v1::kMaxBatchReadBytes;
using ::verity::v1::kMaxBatchUpdateBlobBytes;
using ::verity::v1::kMaxBatchUpdateBlobs;
using ::verity::v1::kMaxBatchUpdateBytes;

// One blob of BatchUpdate: its whole content and the digest it must have,
// with 4 KiB blocks of the digest's algorithm, no salt (what PutTree's files
// have). Plain value.
struct BatchUpdateBlob {
  Digest digest;
  std::string data;
};

// Client::LogConsistency's answer, unverified. Plain value.
struct LogConsistencyAnswer {
  std::string checkpoint;  // the signed note
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  std::vector<std::string> proof;  // 32-byte hashes
};

// Fills `buffer` with the next bytes of content; returns how many, 0 at the
// end.
using ByteSource =
    std::function<absl::StatusOr<size_t>(absl::Span<uint8_t> buffer)>;

// A connection to verityd (one target, possibly several replicas).
//
// Every fetch is verified: the descriptor the server sends must hash to the
// trusted digest, each tree block must match its verified parent, and each
// data block its tree block, before any byte of it reaches a sink. Any
// mismatch, inconsistency or protocol violation ends the call with
// DATA_LOSS; what a sink received before was verified. Other errors keep the
// server's code: NOT_FOUND, OUT_OF_RANGE, INVALID_ARGUMENT, UNAVAILABLE (the
// server could not be reached, retries exhausted), DEADLINE_EXCEEDED.
//
// Thread-safe: one client serves any number of concurrent calls, which share
// its connection and its cache of verified tree blocks. Create() returns the
// only owner; destroy it after every call has returned.
class Client {
 public:
  // INVALID_ARGUMENT for unusable options; an error reading a PEM file.
  // Connecting happens on the first call.
  static absl::StatusOr<std::unique_ptr<Client>> Create(
      const ClientOptions& options);

  virtual ~Client() = default;

  // Fetches a range of the blob `digest` into `sink`, calling Finish on
  // success and Abort on failure. A stream that breaks is resumed from the
  // first block not yet verified; the result is the same as that of a
  // one-shot read.
  virtual absl::Status Fetch(const Digest& digest, Sink& sink,
                             const FetchOptions& options) = 0;

  // Fetches a range of the blob `name` refers to, as Fetch does, by the
  // digest the name resolves to (StatName). With trusted keys, nothing is
  // read before the name's statement has passed every check, and the blob
  // is then read by the statement's digest; a refusal is DATA_LOSS and the
  // sink is only aborted, never started. Without them, the digest is the
  // server's word: the content is verified against it, but a server that
  // lies about names is not detected.
  virtual absl::Status FetchName(absl::string_view name, Sink& sink,
                                 const FetchOptions& options) = 0;

  // Fetch into memory of [offset, offset + length); `options` supplies the
  // rest (its range is ignored).
  absl::StatusOr<std::string> ReadRange(const Digest& digest, uint64_t offset,
                                        uint64_t length,
                                        FetchOptions options = {});

  // Stores the file at `path`. It is hashed locally first and its digest
  // sent as the expected one, so the server stores nothing unless it
  // received exactly that content. ABORTED if the file shrinks meanwhile.
  virtual absl::StatusOr<PutResult> PutFile(absl::string_view path,
                                            const PutOptions& options) = 0;

  // Stores what `source` produces, hashing it as it is sent (which holds
  // its tree, about 1/128 of its size, in memory). Without
  // options.expected_digest the check that the server computed the same
  // digest comes after the fact: on DATA_LOSS the server may have stored
  // (and named) what it received.
  virtual absl::StatusOr<PutResult> PutStream(const ByteSource& source,
                                              const PutOptions& options) = 0;

  // NOT_FOUND if the server has no such blob. With fsverity_certs, DATA_LOSS
  // unless its signature verifies (as for Fetch); StatName too. Retries
  // included, it ends by `deadline` (DEADLINE_EXCEEDED).
  virtual absl::StatusOr<BlobInfo> Stat(const Digest& digest,
                                        absl::Time deadline) = 0;
  absl::StatusOr<BlobInfo> Stat(const Digest& digest) {
    return Stat(digest, absl::InfiniteFuture());
  }
  // Resolves a name. With trusted keys, the name's statement is checked as
  // FetchName checks it (DATA_LOSS on refusal) and recorded as seen.
  // Without them, the digest returned is the server's word: fetching it
  // detects corruption, but not a server that lies about names.
  virtual absl::StatusOr<BlobInfo> StatName(absl::string_view name) = 0;

  // The versions the server keeps of `name` (its --name_history), newest
  // first: the first is what the name points at now. NOT_FOUND for no such
  // name. Retried as Stat. What the server says, but for each statement's
  // `verified` (NameVersionInfo).
  virtual absl::StatusOr<std::vector<NameVersionInfo>> History(
      absl::string_view name) = 0;

  // The server's transparency log (docs/protocol.md, "Transparency log"),
  // what the server says: its newest checkpoint (a signed note) with a
  // consistency proof from `old_size` (0: none) to `new_size` (0: the
  // checkpoint's), and the log's published objects ("checkpoint",
  // "tile/..."). FAILED_PRECONDITION from a server without a log. Retried as
  // Stat. Nothing here is verified: a monitor checks it (verity audit).
  virtual absl::StatusOr<LogConsistencyAnswer> LogConsistency(
      uint64_t old_size, uint64_t new_size) = 0;
  virtual absl::StatusOr<std::string> ReadLog(absl::string_view path) = 0;

  // Points `name` at the stored blob `digest`, with `name_statement` (signed
  // by the publisher; may be empty for a server without --name_keys). Not
  // retried. NOT_FOUND if the blob is not stored; the server's
  // INVALID_ARGUMENT or FAILED_PRECONDITION for a statement it refuses.
  virtual absl::StatusOr<BlobInfo> SetName(
      absl::string_view name, const Digest& digest,
      absl::string_view name_statement) = 0;

  // One page of the blobs in digest order: pass "" for the first, then each
  // page's next_page_token. `page_size` 0 means the server's default (at
  // most 1000).
  virtual absl::StatusOr<ListPage> List(absl::string_view page_token,
                                        uint32_t page_size) = 0;
  // Every page.
  absl::StatusOr<std::vector<BlobInfo>> ListAll();

  // The blobs of `digests` the server does not hold, in their order, each
  // once: what an upload of many (a tree's files) sends. Any number, asked
  // in batches of the server's limit (10,000); retried as Stat.
  virtual absl::StatusOr<std::vector<Digest>> FindMissing(
      const std::vector<Digest>& digests) = 0;

  // The whole content of each blob of `digests`, in their order, in one call
  // (BatchRead, as REAPI's BatchReadBlobs): how a tree of many small files is
  // fetched. At most kMaxBatchReadBlobs blobs of at most kMaxBatchReadBytes
  // together (INVALID_ARGUMENT otherwise), each of at most 256 KiB of
  // blocks (kMaxBatchReadBlobBytes with 4 KiB blocks). Each blob's bytes are
  // hashed into the tree its descriptor describes, whose digest must be the
  // blob's, and its signature checked as Fetch checks it; a blob that fails
  // (NOT_FOUND, DATA_LOSS, too big: INVALID_ARGUMENT) fails alone. Retried as
  // Stat; the call fails only if the call does. A server without BatchRead gets
  // one Fetch per blob. `options`' range and parallel_streams are ignored.
  virtual absl::StatusOr<std::vector<absl::StatusOr<std::string>>> BatchRead(
      const std::vector<Digest>& digests, const FetchOptions& options) = 0;

  // Stores whole small blobs in one call (BatchUpdate, as REAPI's
  // BatchUpdateBlobs), made durable together: how a tree of many small files
  // is uploaded. At most kMaxBatchUpdateBlobs blobs of at most
  // kMaxBatchUpdateBytes together (INVALID_ARGUMENT otherwise), each of at
  // most kMaxBatchUpdateBlobBytes. Returns a status per blob, in order: a
  // blob whose content does not have its digest (DATA_LOSS), or that the
  // store refuses, fails alone; the call fails only if the call does.
  // Retried as Stat (storing content again changes nothing). A server
  // without BatchUpdate gets one Put per blob.
  virtual absl::StatusOr<std::vector<absl::Status>> BatchUpdate(
      const std::vector<BatchUpdateBlob>& blobs) = 0;

  // Deletes the blob and every name that refers to it now. A blob that a
  // name's retained history reaches (itself, or a file of a tree it names)
  // is FAILED_PRECONDITION naming such a name, unless `force`. Put and Delete
  // are not retried: neither could be repeated blindly.
  virtual absl::Status Delete(const Digest& digest, bool force) = 0;
  absl::Status Delete(const Digest& digest) { return Delete(digest, false); }
  // Deletes only the name, and its history: what only it reached is left
  // for garbage collection.
  virtual absl::Status DeleteName(absl::string_view name) = 0;

  // Runs one garbage collection on the server and waits for it, however
  // long it takes (admin): it deletes every blob that no name's retained
  // history reaches and nobody used within the server's --gc_grace; with
  // `dry_run`, only counts them. ABORTED while another replica's collection
  // holds the store. Not retried.
  virtual absl::StatusOr<CollectResult> Collect(bool dry_run) = 0;

  // Asks the server for a scrub pass over its whole store now (admin): every
  // blob's data, tree and FEC area read and checked at IDLE priority,
  // repaired from FEC or reported. With `wait`, waits for the pass however
  // long it takes, and ABORTED while another replica's scrub holds the
  // store. Not retried.
  virtual absl::StatusOr<ScrubResult> Scrub(bool wait) = 0;

  virtual ClientStats Stats() const = 0;
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_CLIENT_H_
