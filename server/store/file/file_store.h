// The persistent blob store of verityd: content-addressed blobs, each with
// its fs-verity Merkle tree and descriptor, plus names and a quarantine.
//
// On-disk layout under the store root:
//
// clang-format off
//   <root>/
//     VERSION                       "verityd-store 2\n" (Open reads version 1, blob directories only, and says 2 from then on); Open refuses other versions (FAILED_PRECONDITION)
//     LOCK                          flock'd while a FileStore has the root open; a second Open fails (FAILED_PRECONDITION)
//     blobs/<alg>/<hh>/<hex>/       one directory per blob, made visible by a single rename
//         data                      the content
//         tree                      the Merkle tree, `fsverity digest --out-merkle-tree` layout
//         descriptor                the 256-byte fs-verity descriptor
//         fsverity_signature        the blob's detached fs-verity signature, if a Put gave one; replaced atomically
//         fec                       its FEC area (Reed-Solomon parity, `veritysetup --fec-device` bytes), if the Put had --fec_roots
//         tree_manifest             empty: a Put stored the blob as a tree manifest (BlobInfo::tree_manifest)
//     blobs/<alg>/<hh>/<hex>        or, for a blob of at most kMaxRecordDataBytes (1 MiB) whose Put said its size, one record file:
//                                   data, tree, FEC area, descriptor, signature and a footer (server/store/blob_record.h);
//                                   written again, renamed over, for a new signature or the tree manifest mark
//     names/<sha256 hex of name>    a name: file holding "<digest text>\n<name>", then NUL and its statement if it has one (name_index.h); replaced atomically
//     quarantine/<alg>-<hex>[/]     blobs found corrupt (directory or record): moved out of blobs/, never served, dropped on re-put
//     tmp/                          staging for puts and deletes; emptied at Open
// clang-format on
//
// (<alg> is sha256|sha512, <hex> the lowercase digest hex, <hh> its first
// two hex chars.)
//
// Crash safety: a blob becomes visible only by renaming its complete, fsync'd
// staging directory or record into blobs/, and leaves blobs/ by one rename
// (into tmp/ or quarantine/), so a crash never exposes part of a blob. Put,
// name and delete operations return only once their renames are fsync'd, and a
// Put's blob is served only from then on. An operation whose fsync fails
// returns the error and leaves the index as the files are: a Put moves its blob
// back out (or, if it cannot, serves it: it is whole), a delete stays done. A
// restart then finds the old or the new state, never a mix. docs/faults.md
// has the fault model the tests check this against.

#ifndef VERITYD_SERVER_STORE_FILE_FILE_STORE_H_
#define VERITYD_SERVER_STORE_FILE_FILE_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
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
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/base/group_sync.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/blob_record.h"
#include "server/store/file/file_blob.h"
#include "server/store/file/file_blob_sink.h"
#include "server/store/file/store_layout.h"
#include "server/store/name_index.h"
#include "server/store/put_pipeline.h"
#include "server/store/store.h"

namespace verity::server {

struct FileStoreOptions {
  // The store's directory; created, with its parents, if missing.
  std::string root;
  // The largest blob a Put accepts. Each Put in progress holds its Merkle
  // tree in memory: up to max_blob_bytes * digest_size / block_size, i.e.
  // 32 MiB for 4 GiB with SHA-256 and 4 KiB blocks, 256 MiB for SHA-512 with
  // 1 KiB blocks.
  uint64_t max_blob_bytes = uint64_t{4} << 30;
  // Receives one line per notable event (a blob quarantined, a name
  // dropped). Empty: the line goes to stderr prefixed with "verityd: ".
  std::function<void(absl::string_view)> log;
  // Each Put writes an FEC area with this many roots (2 to 24; 0: none): a
  // read that finds up to that many bad blocks in one RS group repairs them
  // (server/store/fec_repair.h). Costs roots / (255 - roots) of the blob's
  // size on disk. A Put whose size is known encodes it as the content
  // arrives, holding the area in memory (at most kMaxStreamedFecBytes: 32
  // MiB for a 4 GiB blob with 2 roots); any other Put reads its staged
  // content back at the end (8 MiB of memory).
  int fec_roots = 0;
  // A blob of at most this many bytes whose Put says its size is stored as
  // one record file (server/store/blob_record.h; at most
  // kMaxRecordDataBytes); a larger one as a directory of files. 0: every
  // blob a directory.
  uint64_t record_max_bytes = kMaxRecordDataBytes;
  // How many versions each name keeps (1 to kMaxNameHistory): what it points
  // at and those before (Store::History). Garbage collection keeps every
  // blob they reach.
  int name_history = 5;
  // Every file operation goes through it; it must outlive the store and the
  // blobs it opened. nullptr: PosixFileSystem(). Tests inject faults here.
  FileSystem* file_system = nullptr;
};

// Thread-safe. Owns the store directory while open (see LOCK above). Blobs
// returned by OpenBlob may outlive the store; PutWriters may not.
//
// Names point at served or quarantined blobs: ResolveName still answers for
// a quarantined blob (whose OpenBlob is then DATA_LOSS), and a re-put of it
// serves it again under the same names. Deleting a blob deletes its names.
class FileStore final : public Store {
 public:
  // Prepares the root (see PrepareStoreRoot in store_layout.h), then loads
  // the index without rehashing data: each blob's descriptor must hash to
  // its directory's digest and its files must have the sizes the descriptor
  // implies, or the blob is moved to quarantine/ and logged. Names of blobs
  // that are gone are deleted and logged.
  static absl::StatusOr<std::unique_ptr<FileStore>> Open(
      const FileStoreOptions& options);

  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  // The Store interface; see store.h. Open Blob objects stay readable after
  // their blob is deleted or quarantined. Only Commit may fail partway:
  // everything else changes the store by one rename, fsync'd before return.
  // The content is staged and renamed into place whatever `expected` says;
  // Commit checks it (PutPipeline).
  // With `size` and FEC on, the sink encodes the FEC area as the content
  // arrives; without it, it reads the content back at the end.
  absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) override;
  // Stages every blob (as a record if it fits), makes them durable with one
  // syncfs, renames them into place, and makes that durable with one more:
  // two syncfs for the batch. A failure of either fails the blobs it was to
  // make durable; the same content twice is stored once.
  std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs) override;
  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override;
  absl::StatusOr<NamedBlob> LookupName(absl::string_view name) const override;
  // Read from the name's file: blocking I/O.
  absl::StatusOr<NameHistory> History(absl::string_view name) const override;
  absl::StatusOr<NamePage> ListNames(absl::string_view after,
                                     size_t limit) const override;
  // Names a served blob (a quarantined one is NOT_FOUND).
  absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                   const NameWrite& write) override;
  absl::StatusOr<BlobInfo> Stat(const ParsedDigest& digest) const override;
  absl::StatusOr<std::vector<BlobInfo>> List(absl::string_view after,
                                             size_t limit) const override;
  absl::StatusOr<std::vector<ParsedDigest>> ListQuarantined(
      absl::string_view after, size_t limit) const override;
  absl::Status DeleteBlob(const ParsedDigest& digest) override;
  absl::Status DeleteName(absl::string_view name) override;
  // Moves the blob to quarantine/.
  absl::Status Quarantine(const ParsedDigest& digest,
                          absl::string_view reason) override;
  absl::StatusOr<absl::Time> LastUsed(
      const ParsedDigest& digest) const override;
  // Sets the record's or descriptor file's modification time (not fsync'd:
  // after a crash a blob may look older, never younger).
  absl::StatusOr<absl::Time> MarkUsed(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const override;
  absl::StatusOr<std::vector<ParsedDigest>> DeleteUnusedSince(
      absl::Span<const ParsedDigest> blobs, absl::Time cutoff) override;
  // upkeep/<key>, replaced by rename under a lock; its version is the
  // SHA-256 of its body.
  absl::StatusOr<std::optional<SharedRecord>> ReadRecord(
      absl::string_view key) const override;
  absl::StatusOr<SharedRecord> WriteRecord(
      absl::string_view key, absl::string_view body,
      const std::optional<std::string>& expected) override;
  // log/<path>, replaced by rename; its folders made as needed.
  absl::StatusOr<std::string> ReadLogObject(
      absl::string_view path) const override;
  absl::Status WriteLogObject(absl::string_view path,
                              absl::string_view bytes) override;
  absl::Status DeleteLogObject(absl::string_view path) override;
  absl::StatusOr<tlog::LogObjectPage> ListLogObjects(
      absl::string_view folder, absl::string_view after) const override;
  std::optional<StoreTotals> Totals() const override;
  bool IsLocal() const override { return true; }
  // To FileStoreOptions::log.
  void Log(absl::string_view message) const override;

  // Served blobs and the sum of their data sizes.
  size_t blob_count() const;
  uint64_t stored_bytes() const;

 private:
  struct Entry {
    Descriptor descriptor;
    uint64_t tree_size = 0;
    std::string fsverity_signature;  // empty: none
    bool tree_manifest = false;
    // Stored or last relied on (Store::MarkUsed, const: it changes nothing
    // the store serves); kept on disk as the descriptor file's modification
    // time.
    mutable absl::Time last_used;
  };

  FileStore(const FileStoreOptions& options, FileSystem& fs, UniqueFd lock);

  // Start-up (file_store_recovery.cc).
  absl::Status Recover();
  absl::Status LoadQuarantine() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status ScanBlobs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // fsyncs blobs/<alg> once, so that every shard found there is durable.
  absl::Status SyncShards(HashAlgorithm algorithm,
                          const std::vector<std::string>& shards)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status ScanShard(HashAlgorithm algorithm, const std::string& shard)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status CheckBlob(const ParsedDigest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status LoadNames() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Returns false if the name file was dropped.
  absl::StatusOr<bool> LoadNameFile(const std::string& file)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);

  // The blobs of a PutBatch renamed into place, which its end makes durable
  // and serves (SettleBatch).
  struct Batch {
    size_t index = 0;  // of the blob being published
    std::vector<std::pair<size_t, SealedBlob>> renamed;
  };

  // A Put that took `mark` of group_sync_ before it wrote; one of `batch`
  // (nullptr: none) defers its syncfs and its settling to the batch.
  absl::StatusOr<std::unique_ptr<PutPipeline>> NewPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size, uint64_t mark, Batch* batch);
  // Makes the batch's renamed blobs durable with one syncfs and serves them,
  // their results into `results`.
  void SettleBatch(const Batch& batch, uint64_t mark,
                   std::vector<absl::StatusOr<PutResult>>& results)
      ABSL_LOCKS_EXCLUDED(mutation_mu_);

  // Changes to the files, serialized by mutation_mu_.
  // The file store's PublishFn (file_blob_sink.h), for a Put that took
  // `mark` of group_sync_ before it wrote. In a batch, it renames a new blob
  // into place and leaves the rest to SettleBatch (its result is empty).
  absl::StatusOr<PutResult> PublishStaged(const std::string& path,
                                          const SealedBlob& blob, uint64_t mark,
                                          Batch* batch)
      ABSL_LOCKS_EXCLUDED(mutation_mu_);
  // A blob renamed into place whose syncfs ended `synced`: served, or, if
  // the syncfs failed, moved back out (or, if it cannot be, served: it is
  // whole) and the error returned.
  absl::Status Settle(const SealedBlob& blob, const absl::Status& synced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status MakeShardDir(const ParsedDigest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Points write.name at `digest` if write.check allows it: the check runs
  // under mutation_mu_, which every name write holds.
  // DeleteBlob, if the blob was last used before `unused_before` (served;
  // a quarantined one has no time and always goes). Whether it went.
  absl::StatusOr<bool> RemoveBlob(const ParsedDigest& digest,
                                  absl::Time unused_before);
  // The modification time of the blob's record or descriptor file.
  absl::StatusOr<absl::Time> DescriptorTime(const ParsedDigest& digest) const;
  // When the quarantined blob was quarantined: its record's or descriptor
  // file's modification time, set then; InfinitePast if it cannot be read (a
  // blob quarantined for a missing descriptor).
  absl::Time QuarantineTime(const ParsedDigest& digest) const;
  // The history in `name`'s file, which must be of that name.
  absl::StatusOr<NameHistory> ReadHistory(absl::string_view name) const;
  absl::Status WriteName(const NameWrite& write, const ParsedDigest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Replaces the served blob's signature file and its entry's copy.
  absl::Status ReplaceSignature(const ParsedDigest& digest,
                                const std::string& signature)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Marks the served blob as a tree manifest, in its directory and entry.
  absl::Status MarkTreeManifest(const ParsedDigest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // A served blob stored as a record is written again with `signature`
  // (nullptr: the one it has) and the tree-manifest mark if `tree_manifest`
  // or if it had it; false for a blob stored as a directory (nothing done).
  absl::StatusOr<bool> RewriteRecord(const ParsedDigest& digest,
                                     const std::string* signature,
                                     bool tree_manifest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  absl::Status MoveToQuarantine(const ParsedDigest& digest,
                                absl::string_view reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Deletes quarantine/<digest> if it exists.
  absl::Status DropQuarantined(const ParsedDigest& digest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Renames `path` (in `parent`) into tmp/ and fsyncs `parent`; if that
  // fails, renames it back. Sets `*trash` to the new path if it stayed
  // there. On an error with `*trash` set, `path` is gone but maybe not
  // durably: the caller must remove neither `*trash` nor anything a crash
  // would bring back with `path`.
  absl::Status MoveToTrash(const std::string& path, const std::string& parent,
                           std::string* trash)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  // Moves a blob just renamed into place back out after its directory's
  // fsync failed; false if it could not, and the blob stays.
  bool TakeBack(const SealedBlob& blob)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);
  void RemoveNameFiles(const std::vector<std::string>& names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutation_mu_);

  // The index.
  // OK if `digest_text` is served, DATA_LOSS if quarantined, else NOT_FOUND.
  absl::Status ServedStatus(const std::string& digest_text) const
      ABSL_LOCKS_EXCLUDED(mu_);
  BlobInfo InfoOf(const std::string& digest_text, const Entry& entry) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void AddEntry(const std::string& digest_text, const Entry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseEntry(const std::string& digest_text)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A fresh path in tmp/ starting with `prefix`.
  std::string TempPath(absl::string_view prefix);

  const FileStoreOptions options_;
  FileSystem& fs_;
  // Runs the reads FileBlob::ReadAsync must complete later; shared with the
  // blobs, which may outlive the store. Unbounded: each task is a read in
  // flight, which the callers bound.
  const std::shared_ptr<Executor> reads_ =
      std::make_shared<Executor>(CompletionThreadOptions("file-reads"));
  const StoreLayout layout_;
  const UniqueFd lock_;  // holds the flock on <root>/LOCK
  // What makes a Put durable: one syncfs of the store's file system for the
  // Puts in flight (group commit). Set by Open().
  std::unique_ptr<GroupSync> group_sync_;
  std::atomic<uint64_t> next_temp_id_{0};  // atomic: needs no lock

  // Serializes every change to blobs/, names/ and quarantine/, so that the
  // index checked before a change still holds when it is applied. Held
  // across fsyncs (not a Put's syncfs); readers never take it.
  mutable absl::Mutex mutation_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Shard directories whose entry in blobs/<alg> is known durable: a shard
  // made by a Put whose fsync failed exists but may vanish in a crash, and
  // the next Put into it must fsync it again.
  absl::flat_hash_set<std::string> durable_shards_
      ABSL_GUARDED_BY(mutation_mu_);
  // Blobs renamed into place whose rename a syncfs is making durable, with
  // mutation_mu_ released meanwhile; not served yet. Another Put of one
  // waits until it is settled.
  absl::flat_hash_set<std::string> publishing_ ABSL_GUARDED_BY(mutation_mu_);
  // Serializes WriteRecord's compare and its rename.
  absl::Mutex record_mu_;
  // Guards the index, which mirrors the files; held briefly.
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> blobs_ ABSL_GUARDED_BY(mu_);  // served
  absl::flat_hash_set<std::string> quarantined_ ABSL_GUARDED_BY(mu_);
  NameIndex names_ ABSL_GUARDED_BY(mu_);
  uint64_t stored_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_FILE_STORE_H_
