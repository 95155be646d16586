// Implements LogSequencer: stage, sign, commit by compare-and-set, then
// write the tiles.

#include "lib/tlog/log_sequencer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

constexpr absl::string_view kBatchPrefix = "batches/";

absl::Status NotTheLog(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("the log's storage: ", what));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogSequencer>> LogSequencer::Create(
    std::shared_ptr<LogStorage> storage, SequencerOptions options) {
  ASSIGN_OR_RETURN(NoteKey note_key,
                   NoteKey::Make(options.origin, NoteKeyType::kEd25519,
                                 options.key->public_key()));
  return std::unique_ptr<LogSequencer>(new LogSequencer(
      std::move(storage), std::move(options), std::move(note_key)));
}

LogSequencer::LogSequencer(std::shared_ptr<LogStorage> storage,
                           SequencerOptions options, NoteKey note_key)
    : storage_(std::move(storage)),
      options_(std::move(options)),
      note_key_(std::move(note_key)) {}

TileSource LogSequencer::Tiles() const {
  return [storage = storage_](const TileId& id) {
    return storage->Read(id.Path());
  };
}

absl::StatusOr<std::optional<LogSequencer::Loaded>> LogSequencer::Load() const {
  ASSIGN_OR_RETURN(std::optional<LogStorage::Record> record,
                   storage_->ReadState());
  if (!record.has_value()) {
    if (seen_size_ != 0) return NotTheLog("the log's state is gone");
    return std::nullopt;
  }
  absl::StatusOr<LogState> state = LogState::Decode(record->body);
  if (!state.ok()) return NotTheLog(state.status().message());
  absl::StatusOr<SignedCheckpoint> opened =
      OpenCheckpoint(state->checkpoint, note_key_);
  if (!opened.ok()) return NotTheLog(opened.status().message());
  if (opened->checkpoint.size != state->size) {
    return NotTheLog("the checkpoint is another size's");
  }
  return Loaded{*std::move(record), *std::move(state), *std::move(opened)};
}

absl::StatusOr<LogAppender> LogSequencer::Integrate(const Loaded& loaded) {
  const Checkpoint& checkpoint = loaded.current.checkpoint;
  absl::StatusOr<LogAppender> appender =
      LogAppender::Resume(checkpoint.size, checkpoint.root, Tiles());
  // Tiles that are missing or wrong are written again from the batch.
  if (!appender.ok() && !loaded.state.batch.empty()) {
    appender = IntegrateBatch(loaded);
  }
  if (!appender.ok()) return appender.status();
  RETURN_IF_ERROR(CheckExtendsSeen(checkpoint));
  seen_size_ = checkpoint.size;
  seen_root_ = checkpoint.root;
  return appender;
}

absl::StatusOr<LogAppender> LogSequencer::IntegrateBatch(const Loaded& loaded) {
  const LogState& state = loaded.state;
  ASSIGN_OR_RETURN(
      LogAppender appender,
      LogAppender::Resume(state.batch_from, state.batch_from_root, Tiles()));
  ASSIGN_OR_RETURN(std::string bundle, storage_->Read(state.batch));
  absl::StatusOr<std::vector<std::string>> entries = SplitBundle(bundle);
  if (!entries.ok() || entries->size() != state.size - state.batch_from) {
    return NotTheLog(absl::StrCat("the batch ", state.batch,
                                  " is not the checkpoint's entries"));
  }
  ASSIGN_OR_RETURN(std::vector<TileBytes> tiles, appender.Append(*entries));
  if (appender.Root() != loaded.current.checkpoint.root) {
    return NotTheLog(absl::StrCat("the batch ", state.batch,
                                  " does not hash to the checkpoint's root"));
  }
  RETURN_IF_ERROR(WriteTiles(tiles));
  return appender;
}

absl::Status LogSequencer::CheckExtendsSeen(
    const Checkpoint& checkpoint) const {
  if (checkpoint.size < seen_size_) {
    return NotTheLog(absl::StrCat("the log went back from ", seen_size_,
                                  " entries to ", checkpoint.size));
  }
  if (seen_size_ == 0) return absl::OkStatus();
  std::vector<LogHash> proof;
  if (checkpoint.size > seen_size_) {
    TileHashReader reader(checkpoint.size, Tiles());
    ASSIGN_OR_RETURN(proof,
                     ConsistencyProof(seen_size_, checkpoint.size, reader));
  }
  absl::Status consistent = VerifyConsistency(
      seen_size_, checkpoint.size, seen_root_, checkpoint.root, proof);
  if (!consistent.ok()) {
    return NotTheLog(absl::StrCat("the checkpoint of ", checkpoint.size,
                                  " entries does not extend the one of ",
                                  seen_size_, ": ", consistent.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<LogSequencer::Loaded>>
LogSequencer::LoadIntegrated(std::optional<LogAppender>& appender) {
  absl::Status last;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    ASSIGN_OR_RETURN(std::optional<Loaded> loaded, Load());
    if (!loaded.has_value()) {
      appender.emplace();
      return loaded;
    }
    absl::StatusOr<LogAppender> integrated = Integrate(*loaded);
    if (integrated.ok()) {
      appender.emplace(*std::move(integrated));
      return loaded;
    }
    // A batch deleted by the server that committed after it: read again.
    if (!absl::IsNotFound(integrated.status())) return integrated.status();
    last = integrated.status();
  }
  return last;
}

absl::StatusOr<AppendedBatch> LogSequencer::Append(
    absl::Span<const std::string> entries) {
  if (entries.empty()) {
    return absl::InvalidArgumentError("an append has at least one entry");
  }
  std::string bundle;
  for (const std::string& entry : entries) {
    RETURN_IF_ERROR(AppendToBundle(entry, bundle));
  }
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    std::optional<LogAppender> appender;
    ASSIGN_OR_RETURN(std::optional<Loaded> loaded, LoadIntegrated(appender));
    LogState state;
    state.batch = absl::StrCat(kBatchPrefix, options_.unique_name());
    state.batch_from = appender->size();
    state.batch_from_root = appender->Root();
    RETURN_IF_ERROR(storage_->Write(state.batch, bundle));
    ASSIGN_OR_RETURN(std::vector<TileBytes> tiles, appender->Append(entries));
    AppendedBatch appended;
    appended.first_index = state.batch_from;
    appended.checkpoint = {
        options_.origin, appender->size(), appender->Root(), {}};
    const std::string text = appended.checkpoint.ToText();
    ASSIGN_OR_RETURN(NoteSignature signature,
                     SignNote(text, options_.origin, *options_.key));
    appended.note = FormatNote({text, {std::move(signature)}});
    state.size = appender->size();
    state.checkpoint = appended.note;
    absl::StatusOr<LogStorage::Record> committed = storage_->WriteState(
        state.Encode(), loaded.has_value()
                            ? std::optional<std::string>(loaded->record.version)
                            : std::nullopt);
    if (absl::IsFailedPrecondition(committed.status())) {
      // Another server committed first; this batch was never referenced.
      storage_->Delete(state.batch).IgnoreError();
      continue;
    }
    // Any other failure leaves the batch: the commit may have happened.
    if (!committed.ok()) return committed.status();
    seen_size_ = appended.checkpoint.size;
    seen_root_ = appended.checkpoint.root;
    // Committed: tiles not written now are written by the next Integrate(),
    // and the batch before, integrated by LoadIntegrated(), is no longer
    // referenced.
    if (WriteTiles(tiles).ok()) {
      // For static mirrors of the storage (C2SP tlog-tiles'
      // <prefix>/checkpoint): the state record stays what is checked.
      if (options_.publish_checkpoint) {
        PublishCheckpoint(*storage_, note_key_,
                          {appended.checkpoint, appended.note})
            .IgnoreError();
      }
      if (loaded.has_value() && !loaded->state.batch.empty()) {
        storage_->Delete(loaded->state.batch).IgnoreError();
      }
    }
    return appended;
  }
  return absl::UnavailableError(
      absl::StrCat("the log's state changed under each of ",
                   options_.max_attempts, " commits; try again"));
}

absl::Status PublishCheckpoint(LogStorage& storage, const NoteKey& key,
                               const SignedCheckpoint& checkpoint) {
  absl::StatusOr<std::string> there = storage.Read(kCheckpointPath);
  if (there.ok()) {
    absl::StatusOr<SignedCheckpoint> published = OpenCheckpoint(*there, key);
    // Of one size, the notes of one log differ only in their signatures.
    if (published.ok() &&
        (published->checkpoint.size > checkpoint.checkpoint.size ||
         (published->checkpoint.size == checkpoint.checkpoint.size &&
          published->note.size() >= checkpoint.note.size()))) {
      return absl::OkStatus();
    }
  }
  return storage.Write(kCheckpointPath, checkpoint.note);
}

absl::StatusOr<std::optional<SignedCheckpoint>> LogSequencer::Current() {
  std::optional<LogAppender> appender;
  ASSIGN_OR_RETURN(std::optional<Loaded> loaded, LoadIntegrated(appender));
  if (!loaded.has_value()) return std::nullopt;
  return std::move(loaded->current);
}

absl::Status LogSequencer::WriteTiles(const std::vector<TileBytes>& tiles) {
  // In the appender's order: full tiles, then the partial ones, the top
  // level's last; a resume finds every partial tile only once all are in.
  for (const TileBytes& tile : tiles) {
    RETURN_IF_ERROR(storage_->Write(tile.id.Path(), tile.bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<SweptBatches> SweepStagedBatches(LogStorage& storage,
                                                absl::Time cutoff,
                                                bool dry_run) {
  // The state first: a batch committed after this read was written after
  // it too, within the cutoff.
  ASSIGN_OR_RETURN(const std::optional<LogStorage::Record> record,
                   storage.ReadState());
  std::string named;
  if (record.has_value()) {
    ASSIGN_OR_RETURN(const LogState state, LogState::Decode(record->body));
    named = state.batch;
  }
  SweptBatches swept;
  std::string after;
  do {
    ASSIGN_OR_RETURN(const LogObjectPage page,
                     storage.List(kBatchPrefix, after));
    for (const LogObjectPage::Object& object : page.objects) {
      if (object.path == named || object.written >= cutoff) continue;
      if (!dry_run) RETURN_IF_ERROR(storage.Delete(object.path));
      ++swept.objects;
      swept.bytes += object.bytes;
    }
    after = page.next;
  } while (!after.empty());
  return swept;
}

}  // namespace verity::tlog
