// What verityd needs of the place its blobs live, whatever holds them: a local
// directory (store/file/) or, for replicas that share their blobs, an object
// store. The RPC layer, the import and the verified reads use only this.

#ifndef VERITYD_SERVER_STORE_STORE_H_
#define VERITYD_SERVER_STORE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/executor.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/tlog/log_storage.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "lib/trust/fsverity_signature.h"
#include "server/store/name_history.h"

namespace verity::server {

// What the store knows about a blob without opening it. Plain value.
struct BlobInfo {
  std::string digest;  // FormatDigest text, e.g. "sha256:<hex>"
  Descriptor descriptor;
  uint64_t tree_size = 0;          // bytes of the serialized Merkle tree
  std::vector<std::string> names;  // names pointing at it, sorted
  // The blob's detached fs-verity signature, as stored (empty: none). Opaque
  // and untrusted: clients verify it.
  std::string fsverity_signature;
  // Only where a name was looked up or written: that name's statement, as
  // stored (empty: none). Opaque and untrusted, as the signature.
  std::string name_statement;
  // A Put with PutCommit::tree_manifest stored it (then or before): its
  // content is a tree manifest the server checked.
  bool tree_manifest = false;
};

// A stored blob as garbage collection's sweep sees it. Plain value.
struct StoredBlob {
  ParsedDigest digest;
  uint64_t data_size = 0;
};

// One page of garbage collection's sweep of leftovers (Store::
// SweepLeftovers). Plain value.
struct LeftoverPage {
  size_t objects = 0;  // deleted (a dry run: would be)
  uint64_t bytes = 0;
  std::string next;  // where the next page starts; empty: the sweep is done
};

// Points a name at a blob, with the statement stored with it. Plain value.
struct NameWrite {
  std::string name;       // a valid name; empty: no name to write
  std::string statement;  // opaque, at most kMaxNameStatementSize; empty: none
  // Decides whether the name may be written: called by the store with the
  // digest the name is to point at and the statement the name has now
  // (empty: none, or no such name), as the compare of a compare-and-set: no
  // other writer of the name can change it between the check and the write
  // (a lock, or a conditional write for a store replicas share). OK lets the
  // write happen; an error refuses it and is the write's error. Empty:
  // always allowed. May be called more than once (a conditional write that
  // lost a race checks again).
  std::function<absl::Status(const ParsedDigest& digest,
                             absl::string_view current_statement)>
      check;
  // The statement's index in the server's transparency log, if it was
  // logged: stored with it, so that a Stat by name can prove it.
  std::optional<uint64_t> log_index;
};

// What a Put commits besides its content. Plain value.
struct PutCommit {
  // The digest the content must have (DATA_LOSS otherwise), if known.
  std::optional<ParsedDigest> expected;
  NameWrite name;
  // Stored with the blob, replacing the one it had (empty: the stored one,
  // if any, stays). At most kMaxFsveritySignatureSize bytes.
  std::string fsverity_signature;
  // The content is a tree manifest the caller checked: the blob is marked as
  // one (BlobInfo::tree_manifest), also if it was stored before. A mark is
  // never taken away but by deleting the blob.
  bool tree_manifest = false;
};

// One blob of Store::PutBatch: its whole content, with the digest it must
// hash to (DATA_LOSS otherwise). Borrows `data` for the call.
struct BatchPut {
  MerkleParams params;
  ParsedDigest digest;
  absl::string_view data;
};

struct PutResult {
  BlobInfo info;
  // The content was stored already; the new copy was discarded.
  bool already_present = false;
};

// The byte streams of a stored blob: its content, its serialized tree, and,
// if it has one, its FEC area: dm-verity's Reed-Solomon parity (with
// lib/fec/dm_verity_fec.h's layout, `veritysetup --fec-device`'s) over the data
// blocks and then the tree blocks, a partial last data block zero-padded.
enum class BlobPart { kData, kTree, kFec };

// A stored blob opened for reading: its descriptor, checked against the digest
// it is stored under, and its data and tree. Nothing read from it is trusted:
// VerifiedBlob checks every byte. Immutable and thread-safe; a blob deleted
// after it was opened stays readable through this object while the backend
// can keep it so (a file store keeps its files open).
//
// Two reads, one contract each (RocksDB's kBlockCacheTier reads, Envoy's
// posted completions): TryReadNow() completes before it returns or answers
// "not here" having done nothing, and ReadAsync() always completes later, on a
// thread of the backend, never inside the call. Neither borrows a buffer of
// the caller's beyond the call: an asynchronous read is handed the buffer it
// fills, owns it until it hands it back to its completion, and holds the blob
// (always owned by a shared_ptr) until it has completed.
class Blob : public std::enable_shared_from_this<Blob> {
 public:
  using ReadDone = absl::AnyInvocable<void(absl::StatusOr<Buffer>) &&>;

  virtual ~Blob() = default;

  const ParsedDigest& digest() const { return digest_; }
  const std::string& digest_text() const { return digest_text_; }
  const Descriptor& descriptor() const { return descriptor_; }
  const TreeGeometry& geometry() const { return geometry_; }
  const MerkleParams& params() const { return params_; }
  // The blob's detached fs-verity signature as it was when the blob was
  // opened (empty: none); untrusted. A blob kept open does not see a later
  // Put replace it (ServedBlobs drops its own cached copy then).
  const std::string& fsverity_signature() const { return fsverity_signature_; }
  // The FEC area's roots (kMinFecRoots to kMaxFecRoots), or 0 if the blob
  // has none (or none a repair may use: a parity file of the wrong size).
  int fec_roots() const { return fec_roots_; }

  // Fills `out` from `offset` of `part` without waiting on a network (a file
  // may still be read from a local disk) and returns how that went; or
  // returns nullopt, with nothing started and `out` unspecified, if the bytes
  // are not here (a remote store's, or a cache's that it does not hold now).
  // OUT_OF_RANGE past the size the descriptor records; DATA_LOSS naming the
  // blob and offset if the stored part is shorter; INTERNAL or UNAVAILABLE
  // for I/O errors.
  virtual std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const = 0;

  // Fills `into` (uninitialized, perhaps a pooled buffer: every byte is
  // written before `done` gets it) with into.size() bytes from `offset` of
  // `part`, and hands it to `done`: always later, on one of the backend's
  // threads (which must not verify: hand the bytes on), never before
  // ReadAsync() returns. On an error `into` is dropped. Errors as
  // TryReadNow's.
  virtual void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                         ReadDone done) const = 0;

  // Asks the backend to start bringing [offset, offset + length) of `part`
  // close, and returns without waiting. Best effort.
  virtual void Prefetch(BlobPart part, uint64_t offset,
                        uint64_t length) const = 0;

  // The bytes read from [offset, offset + length) of `part` failed
  // verification: a backend that keeps copies of what it read drops them, so
  // that the next read comes from where the blob is stored. True if it
  // dropped any.
  virtual bool Forget(BlobPart /*part*/, uint64_t /*offset*/,
                      uint64_t /*length*/) const {
    return false;
  }

  // Writes `bytes` over [offset, offset + bytes.size()) of `part` where the
  // blob is stored: data or tree blocks rebuilt by FEC and verified, or FEC
  // parity encoded again from verified blocks (a scrub's), and
  // returns once they are durable; a backend that cannot write into a stored
  // object serves them over it instead, and records that the blob needs a
  // new copy (S3Blob). From then on reads of the range return `bytes`.
  // Blocking I/O: for an I/O thread, never a gRPC one. UNIMPLEMENTED for a
  // backend that can do neither.
  virtual absl::Status Rewrite(BlobPart part, uint64_t offset,
                               absl::Span<const uint8_t> bytes) const;

  // The blob as its store holds it, read past any cache in front of it: for
  // reads of a few blocks spread over the blob (an FEC repair's), which a
  // cache would fetch whole slabs for.
  virtual const Blob& Stored() const { return *this; }

 protected:
  // `params` and `geometry` must be those of `descriptor`.
  Blob(const ParsedDigest& digest, const Descriptor& descriptor,
       const MerkleParams& params, const TreeGeometry& geometry,
       std::string fsverity_signature = "", int fec_roots = 0);
  // A blob that stands for `other` (a cache or a test double around it): the
  // same digest, descriptor, params and geometry.
  Blob(const Blob& other) = default;

 private:
  const ParsedDigest digest_;
  const std::string digest_text_;
  const Descriptor descriptor_;
  const MerkleParams params_;
  const TreeGeometry geometry_;
  const std::string fsverity_signature_;
  const int fec_roots_;
};

// The blocks a blob's FEC area covers: its data blocks, then its tree
// blocks, numbered in that order.
uint64_t FecBlocks(const TreeGeometry& geometry);

// The bytes of `part` of a blob with `geometry` and an FEC area of
// `fec_roots` (0: none).
uint64_t PartSize(const TreeGeometry& geometry, int fec_roots, BlobPart part);
// "data", "tree" or "fec": for messages, and the file store's file names.
absl::string_view PartName(BlobPart part);

// The roots of an FEC area of `size` bytes over `geometry`'s blocks (the
// size grows strictly with the roots); 0 if no root count gives that size (a
// truncated or foreign file).
int FecRootsOfSize(const TreeGeometry& geometry, uint64_t size);

// The largest FEC area a Put encodes in memory as its content arrives.
inline constexpr uint64_t kMaxStreamedFecBytes = uint64_t{64} << 20;

// The encoder of the FEC area with `fec_roots` of a Put of `size` bytes with
// `params`, to feed the content as it arrives and then FinishFecArea();
// nullopt if there is nothing to encode that way: no roots, a size not
// known or 0 (no block to protect), or an area over kMaxStreamedFecBytes.
absl::StatusOr<std::optional<FecStreamEncoder>> FecStreamFor(
    const MerkleParams& params, std::optional<uint64_t> size, int fec_roots);

// The FEC area of a blob whose whole content went into `stream`: its last
// block zero-padded, then its serialized tree.
absl::StatusOr<std::string> FinishFecArea(FecStreamEncoder& stream,
                                          absl::string_view tree);

// "verityd: <message>" on stderr, in one write (lines from concurrent
// threads stay whole): a store's log when it was given no sink.
void LogToStderr(absl::string_view message);

// DATA_LOSS "blob <digest text>: <what>": a stored blob that is not what its
// digest says.
absl::Status DamagedBlob(absl::string_view digest_text, absl::string_view what);

// A stored descriptor, checked against the digest it is stored under.
struct CheckedDescriptor {
  Descriptor descriptor;
  MerkleParams params;
  TreeGeometry geometry;
};

// DATA_LOSS naming the blob unless `bytes` are 256 canonical descriptor bytes
// that hash to `digest`, of its algorithm, with parameters a tree can have.
absl::StatusOr<CheckedDescriptor> CheckStoredDescriptor(
    absl::string_view bytes, const ParsedDigest& digest);

// OUT_OF_RANGE unless [offset, offset + length) lies within `part` of `blob`:
// what every backend checks before it reads.
absl::Status CheckReadRange(const Blob& blob, BlobPart part, uint64_t offset,
                            uint64_t length);

// Fills `out` from `offset` of `part`: Blob::TryReadNow() if the bytes are
// here, else Blob::ReadAsync(), waited for. Blocks: never on a gRPC thread,
// nor on one of the backend's (its read would wait for itself).
absl::Status ReadAndWait(const Blob& blob, BlobPart part, uint64_t offset,
                         absl::Span<uint8_t> out);

// One read of ReadAllAndWait(): its place and bytes, and how it went.
struct PartRead {
  BlobPart part;
  uint64_t offset;
  absl::Span<uint8_t> out;
  absl::Status status;
};
// Does each read as ReadAndWait() does, those that are not here started as
// others end, 32 in flight (a remote store answers them in parallel, over
// few connections), and returns once every one is done. Blocks as
// ReadAndWait() does.
void ReadAllAndWait(const Blob& blob, absl::Span<PartRead> reads);

// One Put in progress: content streams in, is hashed as it arrives, and is
// stored on Commit. Any failure ends the Put, and every later call returns
// the same error; destroying the writer without a successful Commit stores
// nothing. Not thread-safe. The store that made it must outlive it.
class PutWriter {
 public:
  virtual ~PutWriter() = default;

  // RESOURCE_EXHAUSTED if the blob would exceed the store's limit or the
  // space is full; INTERNAL or UNAVAILABLE for I/O errors.
  virtual absl::Status Append(absl::Span<const uint8_t> data) = 0;

  // Completes the Put. INVALID_ARGUMENT if commit.name.name is neither
  // empty (no name) nor a valid name, or a statement or signature is too
  // large; DATA_LOSS if commit.expected is given and the content does not
  // hash to it. Returns only once the blob, its signature and its name are
  // durable. If the blob is stored but the name is refused (its check) or
  // recording it fails, the error is returned, the blob stays stored and the
  // name is as it was. The result's info carries the name's statement.
  virtual absl::StatusOr<PutResult> Commit(const PutCommit& commit) = 0;

  // Commit with no statement, check or signature.
  absl::StatusOr<PutResult> Commit(const std::optional<ParsedDigest>& expected,
                                   absl::string_view name) {
    return Commit(
        PutCommit{expected, NameWrite{std::string(name), "", {}}, ""});
  }

  // Bytes appended so far.
  virtual uint64_t size() const = 0;

  // Where a caller that runs the Put's steps off its own threads should run
  // Append, Commit and the writer's destruction: a writer that may wait for
  // capacity shared with other Puts (an S3 store's part buffers) names an
  // executor of its store's own, so that a waiting Put holds no thread that
  // reads need. nullptr: wherever the caller runs store work.
  virtual Executor* executor() const { return nullptr; }
};

// What a name points at. Plain value.
struct NamedBlob {
  ParsedDigest digest;
  std::string statement;              // as stored, untrusted; empty: none
  std::optional<uint64_t> log_index;  // as stored with the statement
};

// INVALID_ARGUMENT unless `write` names a valid name and its statement fits
// (what every backend checks before it writes a name).
absl::Status CheckNameWrite(const NameWrite& write);

// OK if `write` has no check, else what it says of `current_statement`.
absl::Status RunNameCheck(const NameWrite& write, const ParsedDigest& digest,
                          absl::string_view current_statement);

// A page of Store::ListNames. Plain value.
struct NamePage {
  std::vector<NameHistory> names;
  std::string next;  // where the next page starts; empty: this was the last
};

// A record of Store::ReadRecord. Plain value.
struct SharedRecord {
  std::string body;
  // Opaque: what WriteRecord's compare is against (an ETag; the file store's
  // hash of the body).
  std::string version;
};
inline constexpr size_t kMaxSharedRecordSize = 4096;

// INVALID_ARGUMENT unless `key` is a shared record's key and `body` fits.
absl::Status CheckSharedRecord(absl::string_view key, absl::string_view body);

// A log object holds at most this (a staged batch of 4,096 statements).
inline constexpr size_t kMaxLogObjectSize = 16 << 20;

// INVALID_ARGUMENT unless `path` names a log object: slash-separated parts
// of [a-z0-9._-], none empty, "." or "..", and `bytes` fits.
absl::Status CheckLogObject(absl::string_view path, absl::string_view bytes);
// INVALID_ARGUMENT unless `folder` is a log object's path and a '/'.
absl::Status CheckLogFolder(absl::string_view folder);

// Served blobs and the sum of their data sizes.
struct StoreTotals {
  size_t blobs = 0;
  uint64_t bytes = 0;
};

// Content-addressed blobs with their fs-verity trees, names pointing at them
// (a name points at one digest; re-pointing it replaces it), and a quarantine
// for blobs found corrupt. Thread-safe.
class Store {
 public:
  virtual ~Store() = default;

  // INVALID_ARGUMENT for params ValidateMerkleParams rejects or a block size
  // outside [kMinServedBlockSize, kMaxServedBlockSize]. `expected` is the
  // digest the content should have, if the caller knows it: a backend may
  // then store the content in place as it arrives (Commit still checks it).
  // `size` is the content's exact size, if the caller knows it: a backend
  // may then encode FEC parity as the content arrives; content of another
  // size fails the Put (INVALID_ARGUMENT), and a size over the store's limit
  // fails here (RESOURCE_EXHAUSTED).
  absl::StatusOr<std::unique_ptr<PutWriter>> BeginPut(
      const MerkleParams& params,
      const std::optional<ParsedDigest>& expected = std::nullopt,
      std::optional<uint64_t> size = std::nullopt) {
    return StartPut(params, expected, size);
  }

  // Stores many small blobs (REAPI's BatchUpdateBlobs): each as BeginPut
  // with its digest and size, an Append of all its content and a Commit
  // would, with a result of its own, in order. A backend may make them
  // durable together (the file store: two syncfs for the whole batch, not
  // two for each blob); this default stores them one at a time. Blocking.
  virtual std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs);

  // NOT_FOUND if absent; DATA_LOSS if quarantined or found damaged (the
  // caller may then Quarantine it).
  virtual absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const = 0;

  // The digest `name` points at and the statement stored with it (empty:
  // none). INVALID_ARGUMENT for an invalid name; NOT_FOUND if there is no
  // such name.
  virtual absl::StatusOr<NamedBlob> LookupName(
      absl::string_view name) const = 0;

  // LookupName's digest.
  absl::StatusOr<ParsedDigest> ResolveName(absl::string_view name) const;

  // The versions `name` keeps (name_history.h), newest first: the first is
  // what LookupName answers. Errors as LookupName's; DATA_LOSS if the name's
  // record is damaged.
  virtual absl::StatusOr<NameHistory> History(absl::string_view name) const = 0;

  // Every name with its history, a page at a time, in an order of the
  // store's: those after `after` (a page's `next`; empty: from the start),
  // at most `limit`. The roots of what the store must keep.
  virtual absl::StatusOr<NamePage> ListNames(absl::string_view after,
                                             size_t limit) const = 0;

  // Points write.name at the stored blob `digest`, with write.statement, if
  // write.check allows, and returns the blob's info with that statement.
  // INVALID_ARGUMENT for an invalid name or an oversized statement;
  // NOT_FOUND unless the blob is stored and served; the check's error.
  virtual absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                           const NameWrite& write) = 0;

  // NOT_FOUND if absent; DATA_LOSS if quarantined.
  // Whether the blob is stored and served (not quarantined): what Stat()
  // would find, for many blobs at a time (FindMissing). By default through
  // Stat(); a remote store asks less.
  virtual absl::StatusOr<bool> Has(const ParsedDigest& digest) const;
  virtual absl::StatusOr<BlobInfo> Stat(const ParsedDigest& digest) const = 0;
  // The data size of the stored and served blob `digest`: what Stat() says
  // of it, for many blobs at a time (a tree Put's check). NOT_FOUND if
  // absent; DATA_LOSS if quarantined. By default through Stat(); a remote
  // store asks less.
  virtual absl::StatusOr<uint64_t> DataSize(const ParsedDigest& digest) const;

  // Served blobs in digest-text order strictly after `after` (empty: from
  // the start), at most `limit` of them.
  virtual absl::StatusOr<std::vector<BlobInfo>> List(absl::string_view after,
                                                     size_t limit) const = 0;

  // What List() finds, with only each blob's digest and data size: the
  // sweep's page. By default through List(); a remote store answers from
  // its listing alone (untrusted sizes: figures for reports, nothing more).
  virtual absl::StatusOr<std::vector<StoredBlob>> ListStored(
      absl::string_view after, size_t limit) const;

  // Quarantined blobs in digest-text order strictly after `after` (empty:
  // from the start), at most `limit` of them: what garbage collection sweeps
  // besides the served ones. A quarantined blob's LastUsed counts from when
  // it was quarantined, at the latest.
  virtual absl::StatusOr<std::vector<ParsedDigest>> ListQuarantined(
      absl::string_view after, size_t limit) const = 0;

  // Deletes a served or quarantined blob and every name pointing at it.
  // NOT_FOUND if there is neither.
  virtual absl::Status DeleteBlob(const ParsedDigest& digest) = 0;

  // Deletes the name only. INVALID_ARGUMENT for an invalid name; NOT_FOUND if
  // there is no such name.
  virtual absl::Status DeleteName(absl::string_view name) = 0;

  // Stops serving a blob found corrupt and logs `reason`. OK if it is
  // quarantined already; NOT_FOUND if absent.
  virtual absl::Status Quarantine(const ParsedDigest& digest,
                                  absl::string_view reason) = 0;

  // When the blob (served or quarantined) was stored or last relied on
  // (MarkUsed): what garbage collection's grace counts from. NOT_FOUND if
  // absent.
  virtual absl::StatusOr<absl::Time> LastUsed(
      const ParsedDigest& digest) const = 0;

  // LastUsed of each of `blobs`, in their order, InfiniteFuture for one
  // gone meanwhile: what a dry run of the sweep reads. By default one
  // LastUsed at a time; a remote store has many requests in flight.
  virtual absl::StatusOr<std::vector<absl::Time>> LastUsedOf(
      absl::Span<const ParsedDigest> blobs) const;

  // Records that a caller relies on the blob being kept (FindMissing found
  // it, a Put found it stored, a tree Put's check found it): if its LastUsed
  // is before `now - refresh_after`, it becomes `now` (so that a remote
  // store writes once per refresh_after, not at every call). Returns the
  // time garbage collection would have gone by before: InfiniteFuture if
  // it would have kept the blob whatever its cutoff (an S3 blob no
  // collection has timed yet). NOT_FOUND if absent: it never brings a blob
  // back.
  virtual absl::StatusOr<absl::Time> MarkUsed(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const = 0;

  // What a tree Put's check asks of each of its files: DataSize, then
  // MarkUsed. By default the two calls; a remote store's MarkUsed checks
  // that the blob is there by the read DataSize makes.
  struct SizedUse {
    uint64_t data_size = 0;
    absl::Time before;  // MarkUsed's
  };
  virtual absl::StatusOr<SizedUse> MarkUsedSized(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const;

  // Garbage collection's delete: deletes each of `blobs` (served or
  // quarantined), as DeleteBlob does, whose LastUsed is before `cutoff`,
  // read at the delete (the file store decides under the lock MarkUsed
  // takes; an S3 store reads the times just before it deletes, and deletes
  // a blob's `used/` time last). Returns those it deleted,
  // in the order given (absent ones are not). Not atomic: on an error some
  // may be gone (a run again finishes them).
  virtual absl::StatusOr<std::vector<ParsedDigest>> DeleteUnusedSince(
      absl::Span<const ParsedDigest> blobs, absl::Time cutoff) = 0;

  // Garbage collection's sweep of what no blob owns, a page at a time from
  // `after` (empty: the start; then a page's `next`): the objects of a blob
  // whose commit point was never reached (a Put cut short) or is gone (a
  // delete cut short), and staged uploads, all written before `cutoff`. A
  // dry run counts them. By default there are none: a local store empties
  // its staging when it opens.
  virtual absl::StatusOr<LeftoverPage> SweepLeftovers(absl::string_view after,
                                                      absl::Time cutoff,
                                                      bool dry_run);

  // A small record every server on the store shares (garbage collection's
  // lease), under `key` (a file name: [a-z0-9_-]+), replaced only by
  // compare-and-set. nullopt if there is none.
  virtual absl::StatusOr<std::optional<SharedRecord>> ReadRecord(
      absl::string_view key) const = 0;
  // Writes `body` (at most kMaxSharedRecordSize bytes) under `key` if the
  // record is still `expected` (nullopt: there is none): FAILED_PRECONDITION
  // if another writer replaced it since. Returns the new record.
  virtual absl::StatusOr<SharedRecord> WriteRecord(
      absl::string_view key, absl::string_view body,
      const std::optional<std::string>& expected) = 0;

  // The transparency log's objects (lib/tlog/log_storage.h: tiles, entry
  // bundles, the checkpoint, staged batches) by their path in the log
  // (CheckLogObject), written whole and durably, at most
  // kMaxLogObjectSize bytes. NOT_FOUND for one that is not there; deleting
  // one that is not there is OK. The log's state is the shared record
  // "log-state".
  virtual absl::StatusOr<std::string> ReadLogObject(
      absl::string_view path) const = 0;
  virtual absl::Status WriteLogObject(absl::string_view path,
                                      absl::string_view bytes) = 0;
  virtual absl::Status DeleteLogObject(absl::string_view path) = 0;
  // The log objects under `folder` (a log path ending in '/'), in path
  // order after `after` (empty: from the first), a page at a time, with
  // their sizes and when they were written.
  virtual absl::StatusOr<tlog::LogObjectPage> ListLogObjects(
      absl::string_view folder, absl::string_view after) const = 0;

  // The served blobs, for a store that keeps count; nullopt otherwise.
  virtual std::optional<StoreTotals> Totals() const = 0;

  // True if no call waits on a network (a local disk may still make Put's
  // commit and Delete wait: those always run off the gRPC threads). When
  // false, the RPC layer calls the store only from its I/O executor, but for
  // reads of blobs already open.
  virtual bool IsLocal() const = 0;

  // Whether the store answers now. A remote store makes one cheap request,
  // waiting on the network: the server's health probe calls it from a thread
  // of its own. The error names the setting to look at.
  virtual absl::Status CheckHealth() const { return absl::OkStatus(); }

  // Writes one line to the store's log.
  virtual void Log(absl::string_view message) const = 0;

 protected:
  // One blob of PutBatch stored as BeginPut, Append and Commit would.
  absl::StatusOr<PutResult> PutWhole(const BatchPut& blob);

 private:
  // BeginPut's work, every argument given (a virtual takes no defaults).
  virtual absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_STORE_H_
