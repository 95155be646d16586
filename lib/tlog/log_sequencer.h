// Appends batches of entries to a tiled log that several servers share
// through one LogStorage. Each append stages its batch as an object, signs a
// checkpoint of the new tree, and commits both with a compare-and-set of the
// state record; only then are the batch's tiles written, so servers that
// race write only their own staged objects, and tiles are written only as a
// committed state says (by anyone: the writes are the same bytes). A batch
// whose tiles a stopped server never wrote is integrated by the next reader.
//
// What it reads back it checks: the state's checkpoint is signed by the
// log's key, the tiles hash to its root, and the tree never goes back from
// or forks off the newest checkpoint this sequencer has seen.
//
// Thread-compatible: one call at a time (the server's log thread).

#ifndef VERITYD_LIB_TLOG_LOG_SEQUENCER_H_
#define VERITYD_LIB_TLOG_LOG_SEQUENCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/tlog/checkpoint.h"
#include "lib/tlog/log_appender.h"
#include "lib/tlog/log_state.h"
#include "lib/tlog/log_storage.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/tlog/signed_note.h"
#include "lib/trust/ed25519_key.h"

namespace verity::tlog {

struct SequencerOptions {
  // The log's name: every checkpoint's origin, and its key's name.
  std::string origin;
  // Signs the checkpoints.
  std::shared_ptr<const Ed25519PrivateKey> key;
  // A name no other batch ever has (random): the staged batch's object is
  // "batches/<name>".
  std::function<std::string()> unique_name;
  // Commits tried while other servers commit first.
  int max_attempts = 64;
  // Writes each new checkpoint to the "checkpoint" object once its tiles
  // are in; false when the caller publishes it itself (with cosignatures).
  bool publish_checkpoint = true;
};

// Where a batch landed.
struct AppendedBatch {
  uint64_t first_index = 0;
  // The checkpoint that covers the batch, and its signed note.
  Checkpoint checkpoint;
  std::string note;
};

// Writes `checkpoint` to the "checkpoint" object (C2SP tlog-tiles, for
// static mirrors) unless the one there is newer, or the same checkpoint
// with at least as many signatures (cosignatures another server added): the
// object does not go back, but for two servers writing at the same moment.
absl::Status PublishCheckpoint(LogStorage& storage, const NoteKey& key,
                               const SignedCheckpoint& checkpoint);

class LogSequencer {
 public:
  // INVALID_ARGUMENT for an origin that cannot name a note key.
  static absl::StatusOr<std::unique_ptr<LogSequencer>> Create(
      std::shared_ptr<LogStorage> storage, SequencerOptions options);

  // Appends `entries` (at least one) under one new checkpoint. UNAVAILABLE
  // if other servers kept committing first, or the storage failed before
  // the commit; DATA_LOSS if what the storage holds is not the log.
  absl::StatusOr<AppendedBatch> Append(absl::Span<const std::string> entries);

  // The newest checkpoint (nullopt: nothing appended yet), its tiles in
  // place.
  absl::StatusOr<std::optional<SignedCheckpoint>> Current();

  // The verifier key of the log's checkpoints.
  const NoteKey& note_key() const { return note_key_; }

 private:
  struct Loaded {
    LogStorage::Record record;
    LogState state;
    SignedCheckpoint current;
  };

  LogSequencer(std::shared_ptr<LogStorage> storage, SequencerOptions options,
               NoteKey note_key);

  // Reads the state and checks its checkpoint's signature and size.
  absl::StatusOr<std::optional<Loaded>> Load() const;
  // An appender at the state's size, its tiles written, checked against its
  // checkpoint and against the newest one seen.
  absl::StatusOr<LogAppender> Integrate(const Loaded& loaded);
  absl::StatusOr<LogAppender> IntegrateBatch(const Loaded& loaded);
  absl::Status CheckExtendsSeen(const Checkpoint& checkpoint) const;
  // Load() and Integrate(), again while a batch vanishes under a commit.
  absl::StatusOr<std::optional<Loaded>> LoadIntegrated(
      std::optional<LogAppender>& appender);
  absl::Status WriteTiles(const std::vector<TileBytes>& tiles);
  TileSource Tiles() const;

  const std::shared_ptr<LogStorage> storage_;
  const SequencerOptions options_;
  const NoteKey note_key_;
  // The newest checkpoint this sequencer has seen or made.
  uint64_t seen_size_ = 0;
  LogHash seen_root_ = EmptyTreeHash();
};

// What a sweep of staged batches found (and deleted, unless a dry run).
struct SweptBatches {
  size_t objects = 0;
  uint64_t bytes = 0;
};

// Deletes the staged batches no append needs: written before `cutoff`, and
// not the one the log's state names. An append leaves its batch behind when
// its commit failed in a way that may have committed, or its server stopped
// between the two; its next commit deletes the batch before. `cutoff` must
// leave more time than a batch's write takes to be committed (garbage
// collection's grace). A dry run counts them.
absl::StatusOr<SweptBatches> SweepStagedBatches(LogStorage& storage,
                                                absl::Time cutoff,
                                                bool dry_run);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_SEQUENCER_H_
