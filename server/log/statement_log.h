// The server's transparency log of name statements (docs/protocol.md,
// "Transparency log"). Every statement the server accepts is appended
// before its name is written; appends are batched, at most one checkpoint
// per interval, on a thread of the log's own (the sequencer's storage calls
// block on disk or the network); and the proofs a reader needs are read
// from the same store, which replicas share.

#ifndef VERITYD_SERVER_LOG_STATEMENT_LOG_H_
#define VERITYD_SERVER_LOG_STATEMENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/log_sequencer.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/trust/ed25519_key.h"
#include "server/log/witness_client.h"
#include "server/store/store.h"

namespace verity::server {

struct StatementLogOptions {
  // The log's name: its checkpoints' origin and its key's name.
  std::string origin;
  // Signs the checkpoints (--log_key).
  std::shared_ptr<const Ed25519PrivateKey> key;
  // At most one checkpoint per interval: statements accepted meanwhile wait
  // and share the next one.
  absl::Duration checkpoint_interval = absl::Seconds(1);
  // Statements waiting for a checkpoint, from all calls together: past it,
  // Append is RESOURCE_EXHAUSTED.
  size_t max_pending = 16384;
  // Statements under one checkpoint at most (a batch is one log object).
  size_t max_batch = 4096;
  // Asked to cosign each checkpoint this server makes, before it is
  // published and its statements answered; one that fails or times out is
  // left out of that checkpoint (clients that require it refuse it).
  std::vector<WitnessConfig> witnesses;
  // Tiles kept in memory for proofs, with the subtree hashes within them
  // (16 KiB a full tile).
  uint64_t tile_cache_bytes = uint64_t{16} << 20;
  absl::Duration witness_timeout = absl::Seconds(5);
};

// Where an appended statement landed.
struct LogReceipt {
  uint64_t index = 0;
  tlog::SignedCheckpoint checkpoint;
};

// What a reader checks a logged statement with.
struct StatementProof {
  tlog::SignedCheckpoint checkpoint;
  uint64_t index = 0;
  std::vector<tlog::LogHash> inclusion;
  // The size the consistency proof starts from (0: none was asked, or the
  // reader's size is the checkpoint's).
  uint64_t consistency_from = 0;
  std::vector<tlog::LogHash> consistency;
};

// A consistency proof with the checkpoint it ends at.
struct ConsistencyAnswer {
  tlog::SignedCheckpoint checkpoint;  // the newest this server knows
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  std::vector<tlog::LogHash> proof;
};

// Thread-safe.
class StatementLog {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<LogReceipt>) &&>;

  // Starts the log's thread. INVALID_ARGUMENT for an origin that cannot name
  // a note key, a non-positive interval, or a zero budget.
  static absl::StatusOr<std::unique_ptr<StatementLog>> Start(
      std::shared_ptr<Store> store, StatementLogOptions options);
  // Stop().
  ~StatementLog();
  StatementLog(const StatementLog&) = delete;
  StatementLog& operator=(const StatementLog&) = delete;

  // Queues `statement` for the next checkpoint. `done` runs once, on the
  // log's thread, with the statement's receipt once a checkpoint covers it,
  // or with why the append failed (UNAVAILABLE once stopped). Never runs
  // `done` inside the call. RESOURCE_EXHAUSTED, with `done` dropped unrun,
  // while max_pending statements wait; INVALID_ARGUMENT for an empty or
  // oversized statement.
  absl::Status Append(std::string statement, Done done);

  // That `statement` is entry `index`, proved against the newest checkpoint
  // this server knows, with a consistency proof from `seen_size` (a
  // reader's newest checkpoint; 0: none) when it is smaller. UNAVAILABLE if
  // no checkpoint known here covers the index yet; DATA_LOSS if the store's
  // tiles do not prove it.
  absl::StatusOr<StatementProof> Prove(uint64_t index,
                                       absl::string_view statement,
                                       uint64_t seen_size) const;

  // Prove() from memory only, for an answer on a callback thread: the
  // newest checkpoint known here and the tiles cached (the log keeps those
  // of its newest checkpoint's right edge cached). nullopt, with nothing
  // read from the store, if the checkpoint does not cover the index and
  // `seen_size` or a tile is not cached: Prove() then, where waiting is
  // allowed.
  std::optional<absl::StatusOr<StatementProof>> TryProveNow(
      uint64_t index, absl::string_view statement, uint64_t seen_size) const;

  // A consistency proof from `old_size` to `new_size` (0: the newest
  // checkpoint's size; from 0, none is needed). INVALID_ARGUMENT unless
  // old_size <= new_size <= the newest size; FAILED_PRECONDITION before the
  // first checkpoint.
  absl::StatusOr<ConsistencyAnswer> Consistency(uint64_t old_size,
                                                uint64_t new_size) const;

  // A published object of the log (C2SP tlog-tiles): "checkpoint", or a
  // tile or entry bundle under "tile/". INVALID_ARGUMENT for another path,
  // NOT_FOUND for one not there.
  absl::StatusOr<std::string> ReadObject(absl::string_view path) const;

  // The newest checkpoint this server knows; nullopt before the first.
  std::optional<tlog::SignedCheckpoint> Latest() const;

  // The verifier key of the checkpoints ("<origin>+<id>+<key>").
  const tlog::NoteKey& note_key() const { return note_key_; }

  // Ends the thread after the batch in progress; every statement still
  // queued is answered UNAVAILABLE. Idempotent.
  void Stop();

 private:
  struct Pending {
    std::string statement;
    Done done;
  };

  StatementLog(std::shared_ptr<Store> store, StatementLogOptions options,
               std::unique_ptr<tlog::LogSequencer> sequencer,
               tlog::NoteKey note_key);

  void Run();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The statements of the next checkpoint, once its time has come; empty
  // when the log stops or the interval passed with nothing to append.
  std::vector<Pending> NextBatch();
  void AppendBatch(std::vector<Pending> batch);
  // `checkpoint` with the cosignatures of the witnesses that had none on it
  // and give one now (`retry`: only those whose retry is due), published
  // so: a new checkpoint always, one asked again if it gained any.
  tlog::SignedCheckpoint Cosigned(tlog::SignedCheckpoint checkpoint,
                                  bool retry);
  // Reads the log's state (integrating what a stopped replica committed)
  // and keeps its checkpoint if it is newer; with witnesses, the published
  // checkpoint too, and asks those missing from the newest again; and
  // caches the newest checkpoint's right-edge tiles.
  void Refresh();
  void RefreshCosignatures();
  // The proof against `checkpoint`, which covers the index and `seen_size`;
  // with `now`, from cached tiles only (nullopt if one is not); else never
  // nullopt.
  std::optional<absl::StatusOr<StatementProof>> ProveUnder(
      tlog::SignedCheckpoint checkpoint, uint64_t index,
      absl::string_view statement, uint64_t seen_size, bool now) const;
  // Keeps `checkpoint` if it is newer than the newest known, or the same
  // with more cosignatures.
  void Learn(const tlog::SignedCheckpoint& checkpoint) const;
  // The newest known, read from the published checkpoint if that is newer
  // and `at_least` is not covered yet.
  absl::StatusOr<tlog::SignedCheckpoint> LatestCovering(
      uint64_t at_least) const;

  const StatementLogOptions options_;
  const tlog::NoteKey note_key_;
  // The store's log objects.
  const std::shared_ptr<tlog::LogStorage> storage_;
  // Set by a reader who asked past the newest checkpoint known here: the
  // log's thread refreshes at its next wake, idle or not.
  mutable std::atomic<bool> refresh_asked_{false};
  const tlog::LogProver prover_;
  // Used by the log's thread alone.
  const std::unique_ptr<tlog::LogSequencer> sequencer_;
  std::vector<WitnessClient> witnesses_;

  mutable absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time next_append_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable std::optional<tlog::SignedCheckpoint> latest_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_LOG_STATEMENT_LOG_H_
