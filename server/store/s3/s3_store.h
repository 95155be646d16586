// The S3 store: blobs as objects in a bucket (s3_layout.h), shared by every
// replica that names the same bucket and prefix. The bucket is storage we do
// not control: every byte read from it is verified before it is sent
// (VerifiedBlob), and a blob is visible only once its descriptor, written last
// and only if absent, is there.

#ifndef VERITYD_SERVER_STORE_S3_S3_STORE_H_
#define VERITYD_SERVER_STORE_S3_S3_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/blob_record.h"
#include "server/store/s3/part_budget.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_xml.h"
#include "server/store/store.h"

namespace verity::server {

struct S3StoreOptions {
  S3ClientOptions client;
  // Every object of this store is under it ("" or ending in '/').
  std::string prefix;
  // The largest blob a Put accepts.
  uint64_t max_blob_bytes = uint64_t{4} << 30;
  // A blob of at most this many bytes whose Put says its size is stored as
  // one object, a record (blob_record.h) at its descriptor's key, written
  // once; larger ones (and Puts without a size) as an object per part.
  // 0: every blob as parts.
  uint64_t record_max_bytes = kMaxRecordDataBytes;
  // Each Put that stores a blob writes an FEC area with this many roots (2
  // to 24; 0: none) to its `fec` object, encoded in memory as the content
  // arrives if the Put gives its size, else from the data object read back
  // once the data is up. An area over kMaxStreamedFecBytes (64 MiB: a blob
  // over 8 GiB with 2 roots, over 590 MiB with 24) is not written, and that
  // is logged. A read that finds bad blocks repairs them from it (S3Blob).
  int fec_roots = 0;
  // How many versions each name keeps (1 to kMaxNameHistory), in its name
  // object: see FileStoreOptions::name_history.
  int name_history = 5;
  // Multipart part size (S3's minimum is 5 MiB; all but the last are this).
  size_t part_bytes = size_t{8} << 20;
  // Part buffers of all Puts together (filling or uploading); a Put waits for
  // a slot. 32 x 8 MiB = 256 MiB at most. No more Puts should run at once
  // than there are slots (see PartBudget).
  int part_slots = 32;
  // Where the RPC layer runs this store's Put steps (PutWriter::executor):
  // a Put waits there for a part slot and for its parts in flight, so it must
  // not be the executor that runs Stat, List and OpenBlob for reads, which a
  // burst of large Puts would otherwise stall. Must outlive the store's
  // PutWriters. nullptr: the caller's own threads wait (tests, the import).
  Executor* put_executor = nullptr;
  // At Open, multipart uploads under the prefix started longer ago than this
  // are aborted: what a crashed or killed verityd left.
  absl::Duration abandoned_upload_age = absl::Hours(24);
  // Receives one line per notable event. Empty: stderr, "verityd: ".
  std::function<void(absl::string_view)> log;
  // Makes the client from `client`. Empty: S3Client::Create. Tests give an
  // in-memory bucket (S3Client::WithTransport).
  std::function<absl::StatusOr<std::unique_ptr<S3Client>>(
      const S3ClientOptions&)>
      make_client;
};

// Thread-safe. Every call but OpenBlob's reads may wait on the network: call
// them off the gRPC threads (the I/O executor). A PutWriter's steps may also
// wait for part slots other Puts hold: run them on its executor(). Names:
// the last writer whose check passes wins; a blob's names are found through
// the hints under it, each checked against the name's own object.
class S3Store final : public Store {
 public:
  // Checks that the bucket answers with these credentials (NOT_FOUND naming
  // the bucket, PERMISSION_DENIED naming the credentials, UNAVAILABLE naming
  // the endpoint) and aborts abandoned multipart uploads.
  static absl::StatusOr<std::unique_ptr<S3Store>> Open(
      const S3StoreOptions& options);

  S3Store(const S3Store&) = delete;
  S3Store& operator=(const S3Store&) = delete;

  absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) override;
  // Each blob a Put of its own, kBatchPutsInFlight at a time.
  std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs) override;
  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override;
  absl::StatusOr<NamedBlob> LookupName(absl::string_view name) const override;
  absl::StatusOr<NameHistory> History(absl::string_view name) const override;
  // One ListObjectsV2 page of names/, then a GET per name.
  absl::StatusOr<NamePage> ListNames(absl::string_view after,
                                     size_t limit) const override;
  // Names a served blob (a quarantined one is NOT_FOUND). Atomic against
  // every other writer of the name, on any replica: the name object is
  // written only if it is still what the check saw (If-Match on its ETag,
  // If-None-Match: * if there was none); a writer that lost the race checks
  // again against the winner's statement.
  absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                   const NameWrite& write) override;
  absl::StatusOr<BlobInfo> Stat(const ParsedDigest& digest) const override;
  // One HEAD (the descriptor or record), and the quarantine as last listed (at
  // most a second ago: a blob another replica quarantines meanwhile counts as
  // held that long).
  absl::StatusOr<bool> Has(const ParsedDigest& digest) const override;
  // One GET (the descriptor, checked against the digest; a record, whole),
  // and the quarantine as Has() takes it.
  absl::StatusOr<uint64_t> DataSize(const ParsedDigest& digest) const override;
  absl::StatusOr<std::vector<BlobInfo>> List(absl::string_view after,
                                             size_t limit) const override;
  absl::StatusOr<std::vector<ParsedDigest>> ListQuarantined(
      absl::string_view after, size_t limit) const override;
  absl::Status DeleteBlob(const ParsedDigest& digest) override;
  absl::Status DeleteName(absl::string_view name) override;
  // Writes quarantine/<alg>-<hex>: every replica refuses the blob when it
  // opens it.
  absl::Status Quarantine(const ParsedDigest& digest,
                          absl::string_view reason) override;
  // A bucket keeps no count: nullopt.
  // LastUsed: the used/ object, and a blob without one (stored before, or
  // not yet seen by a collection) gets one saying now: its grace starts.
  // One a sweep marked doomed and did not finish reads as InfinitePast.
  absl::StatusOr<absl::Time> LastUsed(
      const ParsedDigest& digest) const override;
  // A GET of used/, a HEAD of the descriptor, and, if the time is older
  // than refresh_after, a PUT conditional on the ETag read (none: no PUT,
  // for the blob's first collection times it). A blob a sweep marked
  // doomed is UNAVAILABLE until its descriptor is gone.
  absl::StatusOr<absl::Time> MarkUsed(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const override;
  // As MarkUsed, with DataSize's GET of the descriptor for its HEAD.
  absl::StatusOr<SizedUse> MarkUsedSized(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const override;
  // Their used/ objects, 16 GETs at a time; a blob that has none goes
  // through LastUsed.
  absl::StatusOr<std::vector<absl::Time>> LastUsedOf(
      absl::Span<const ParsedDigest> blobs) const override;
  // The blobs' used/ objects (16 GETs in flight); each older than the cutoff
  // marked doomed by a PUT conditional on the ETag read, so that a MarkUsed
  // or a Put's claim since keeps it; then DeleteObjects of a thousand keys
  // at a time, in DeleteBlob's order; the keys under the blobs' prefixes
  // from one listing of their range (docs/storage.md, "The doomed mark").
  absl::StatusOr<std::vector<ParsedDigest>> DeleteUnusedSince(
      absl::Span<const ParsedDigest> blobs, absl::Time cutoff) override;
  // From the listing of blobs/: a blob is its descriptor key, its data size
  // its data object's listed size, or a record's footer's (a ranged GET of
  // its last 64 bytes, 16 in flight); one listing of quarantine/ leaves the
  // quarantined out.
  absl::StatusOr<std::vector<StoredBlob>> ListStored(
      absl::string_view after, size_t limit) const override;
  // One listing page: of blobs/ (a blob prefix with no descriptor whose
  // objects were all written before `cutoff`, by their LastModified, with
  // the blob's used/, damaged/ and quarantine/ keys), then of uploads/.
  // Objects' times are the bucket's, the cutoff the collector's: the
  // clocks are taken to agree to well within the grace.
  absl::StatusOr<LeftoverPage> SweepLeftovers(absl::string_view after,
                                              absl::Time cutoff,
                                              bool dry_run) override;
  // upkeep/<key>, written with If-Match on its ETag (If-None-Match: * if
  // there is none), as name objects are.
  absl::StatusOr<std::optional<SharedRecord>> ReadRecord(
      absl::string_view key) const override;
  absl::StatusOr<SharedRecord> WriteRecord(
      absl::string_view key, absl::string_view body,
      const std::optional<std::string>& expected) override;
  // log/<path>: plain objects, each written whole by one PutObject.
  absl::StatusOr<std::string> ReadLogObject(
      absl::string_view path) const override;
  absl::Status WriteLogObject(absl::string_view path,
                              absl::string_view bytes) override;
  absl::Status DeleteLogObject(absl::string_view path) override;
  absl::StatusOr<tlog::LogObjectPage> ListLogObjects(
      absl::string_view folder, absl::string_view after) const override;
  std::optional<StoreTotals> Totals() const override { return std::nullopt; }
  bool IsLocal() const override { return false; }
  // The check Open() makes.
  absl::Status CheckHealth() const override { return CheckBucket(); }
  void Log(absl::string_view message) const override;

 private:
  // One Put's storage (s3_put_sink.h): nested, for what only a Put needs of
  // the store's objects.
  class PutSink;

  explicit S3Store(const S3StoreOptions& options,
                   std::unique_ptr<S3Client> client);

  absl::Status CheckBucket() const;
  void AbortAbandonedUploads() const;
  absl::StatusOr<std::string> GetObject(const std::string& key,
                                        absl::string_view op) const;
  absl::Status DeleteObject(const std::string& key) const;
  // A blob's descriptor object as read: the descriptor checked against the
  // digest, or, for a blob stored as one record, all of the record with its
  // footer and what its head says (CheckRecordHead). Plain value.
  struct Commit {
    CheckedDescriptor checked;
    std::shared_ptr<const std::string> record;  // null: parts are objects
    RecordFooter footer;                        // the record's
    std::string signature;                      // the record's
    int fec_roots = 0;                          // the record's
    std::string etag;
  };
  // NOT_FOUND if the blob has no descriptor object; DATA_LOSS if it is
  // damaged, UNIMPLEMENTED for a record of a later version.
  absl::StatusOr<Commit> ReadCommit(const ParsedDigest& digest) const;
  absl::StatusOr<CheckedDescriptor> ReadDescriptor(
      const ParsedDigest& digest) const;
  // Gives a stored blob `signature` (unless empty) and the tree-manifest
  // mark (if `tree_manifest`): a record is written again with them,
  // conditional on the ETag it was read with (retried if another writer
  // changed it), and only if they change it; a blob stored as parts gets
  // their objects.
  absl::Status Amend(const ParsedDigest& digest, absl::string_view signature,
                     bool tree_manifest) const;
  // The names pointing at `digest`, sorted: the hints under it whose name
  // objects still point there.
  absl::StatusOr<std::vector<std::string>> NamesOf(
      const ParsedDigest& digest) const;
  absl::StatusOr<std::vector<std::string>> ListKeys(
      const std::string& prefix) const;
  // One ListObjectsV2 page of `prefix`: from `token` if it is not empty, else
  // after `start_after`.
  absl::StatusOr<S3Listing> ListPage(const std::string& prefix,
                                     const std::string& start_after,
                                     const std::string& token) const;
  // Deletes `keys` with DeleteObjects, a thousand at a time; a key already
  // gone is no error.
  absl::Status DeleteObjects(absl::Span<const std::string> keys) const;
  // Every key under the prefixes of `blobs`, from one listing of the range
  // they span.
  absl::StatusOr<std::vector<std::string>> KeysOf(
      std::vector<ParsedDigest> blobs) const;
  // A page of blobs/ grouped by blob: the keys to delete for those left
  // over, how many objects and bytes they listed, and where the next page
  // starts.
  struct LeftoverGroup {
    ParsedDigest digest;
    std::vector<std::string> keys;  // under its prefix, as listed
    uint64_t bytes = 0;
  };
  struct LeftoverGroups {
    std::vector<LeftoverGroup> groups;
    std::string next;
  };
  LeftoverGroups GroupLeftovers(const S3Listing& listing,
                                absl::Time cutoff) const;
  // Of leftover `groups`, those marked doomed (MarkDoomed; a group with no
  // used/ by If-None-Match), in their order; the others were claimed by a
  // Put, or used, since.
  absl::StatusOr<std::vector<LeftoverGroup>> MarkLeftoversDoomed(
      std::vector<LeftoverGroup> groups, absl::Time cutoff) const;
  absl::Status PutObject(const std::string& key, std::string body,
                         std::vector<std::string> headers = {}) const;
  // A blob's used/ object: "<unix seconds>", its last use; "doomed <unix
  // seconds>", the mark of a sweep deleting the stored blob (since then); or
  // "doomed <unix seconds> leftover", the mark of a sweep deleting the
  // objects of a blob that had no descriptor.
  struct UsedRecord {
    // The use's or the mark's; none, or one that does not parse.
    std::optional<absl::Time> time;
    bool doomed = false;
    bool leftover = false;               // a leftover sweep's mark
    std::optional<std::string> version;  // its ETag; nullopt: no object
  };
  // Whose used/ is read. A leftover sweep's mark says nothing of a stored
  // blob: its descriptor came after the sweep judged the prefix, written by
  // a record's Put (which claims nothing when it finds no used/; a Put of
  // parts claims first, which the mark cannot pass), and the sweep never
  // deletes a descriptor. Of a stored blob, one reads as none.
  enum class UsedOf { kAnyBlob, kStoredBlob };
  static UsedRecord ParseUsed(const S3Response& response, UsedOf of);
  static std::string DoomedMark(absl::Time now, bool leftover);
  // A doomed mark that a sweep may still act on (not one a sweep cut short
  // left long ago).
  static bool LiveMark(const UsedRecord& used);
  absl::StatusOr<UsedRecord> ReadUsed(const ParsedDigest& digest,
                                      UsedOf of) const;
  // used/ of each of `blobs`, kUsedReadsInFlight GETs at a time.
  absl::StatusOr<std::vector<UsedRecord>> ReadUsedOf(
      absl::Span<const ParsedDigest> blobs, UsedOf of) const;
  // Before a Put writes a blob's objects: its used/ set to now by
  // compare-and-set, so that no sweep marks it doomed from then on;
  // UNAVAILABLE if one has (the Put is retried once the sweep is done).
  absl::Status ClaimUsed(const ParsedDigest& digest) const;
  // Before a Put writes a record for a blob its Stage found absent: a claim
  // (ClaimUsed) unless the blob has no used/ or a leftover sweep's mark,
  // then none. A sweep that deletes a stored blob marks it before it
  // deletes the descriptor and removes the mark last, so finding neither
  // after finding no descriptor means none is under way, and the record's
  // one object written only if absent is not one a leftover sweep deletes.
  absl::Status ClaimUsedForRecord(const ParsedDigest& digest) const;
  // The rest of MarkUsed once `used` was read and then the blob found
  // there.
  absl::StatusOr<absl::Time> MarkRead(const ParsedDigest& digest,
                                      const UsedRecord& used, absl::Time now,
                                      absl::Duration refresh_after) const;
  // Writes `time` over the used/ object `expected` (nullopt: none):
  // FAILED_PRECONDITION if it was replaced meanwhile.
  absl::Status SwapUsed(const ParsedDigest& digest, absl::Time time,
                        const std::optional<std::string>& expected) const;
  // Of `blobs` with their used/ objects `used`, those a sweep at `cutoff`
  // deletes: marked doomed now by a conditional PUT each, in flight
  // together (one a sweep before marked and did not finish, marked again),
  // with a leftover sweep's mark if `leftovers`.
  absl::StatusOr<std::vector<ParsedDigest>> MarkDoomed(
      absl::Span<const ParsedDigest> blobs, const std::vector<UsedRecord>& used,
      absl::Time cutoff, bool leftovers) const;
  // `body` over `key` if its ETag is still `expected` (nullopt: there is
  // none), as names and records are written: FAILED_PRECONDITION naming
  // `what` if another writer replaced it. Returns the new ETag.
  absl::StatusOr<std::string> SwapObject(
      const std::string& key, std::string body,
      const std::optional<std::string>& expected, absl::string_view op,
      absl::string_view what) const;
  // OK if the blob's descriptor is there; NOT_FOUND if not.
  absl::Status Exists(const ParsedDigest& digest) const;
  // Whether object `key` is there (a HEAD named `op`).
  absl::StatusOr<bool> HasObject(const std::string& key,
                                 absl::string_view op) const;
  absl::StatusOr<bool> IsQuarantined(const ParsedDigest& digest) const;
  // The same from a listing of quarantine/ at most kQuarantineListAge old
  // (one LIST for many lookups), kept up to date with this store's own
  // quarantines.
  absl::StatusOr<bool> IsQuarantinedListed(const ParsedDigest& digest) const
      ABSL_LOCKS_EXCLUDED(quarantine_mu_);
  absl::Status Unquarantine(const ParsedDigest& digest) const;
  // The damage mark S3Blob::Rewrite writes (s3_layout.h).
  absl::StatusOr<bool> IsMarkedDamaged(const ParsedDigest& digest) const;
  absl::Status ClearDamaged(const ParsedDigest& digest) const;
  // The roots of the blob's FEC object, from its size (one listing); 0 if
  // there is none, or none of a size an area over `geometry` can have.
  absl::StatusOr<int> FecRoots(const ParsedDigest& digest,
                               const TreeGeometry& geometry) const;
  // The blob's signature object; empty if there is none. DATA_LOSS if it is
  // larger than any signature a Put stores.
  absl::StatusOr<std::string> ReadSignature(const ParsedDigest& digest) const;
  // Points write.name at `digest` if write.check allows (see SetName), and
  // moves its hint from the blob it pointed at.
  absl::Status WriteName(const NameWrite& write,
                         const ParsedDigest& digest) const;
  // One conditional attempt of WriteName: false if another writer changed
  // the name object since it was read. Sets `*old` to the digest the name
  // pointed at, if any. `retrying`: an earlier attempt's PUT may have landed
  // with its answer lost, so finding exactly this write there is success.
  absl::StatusOr<bool> TryWriteName(const NameWrite& write,
                                    const ParsedDigest& digest, bool retrying,
                                    std::optional<ParsedDigest>* old) const;

  const S3StoreOptions options_;
  const S3Layout layout_;
  // Shared with the blobs it opens, which may outlive the store.
  const std::shared_ptr<S3Client> client_;
  PartBudget part_budget_;
  mutable absl::Mutex quarantine_mu_;
  // The keys of quarantine/ when last listed, and when; held while listing,
  // so that one listing serves the lookups waiting for it.
  mutable absl::flat_hash_set<std::string> quarantine_keys_
      ABSL_GUARDED_BY(quarantine_mu_);
  mutable absl::Time quarantine_listed_ ABSL_GUARDED_BY(quarantine_mu_) =
      absl::InfinitePast();
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_STORE_H_
