// Implements StatementLog: a queue the calls fill, a thread that appends it
// through the sequencer once per interval, and proofs read from the store.

#include "server/log/statement_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/printable.h"
#include "lib/base/random_id.h"
#include "lib/base/status_macros.h"
#include "lib/trust/name_statement.h"
#include "server/store/store_log_storage.h"

namespace verity::server {

absl::StatusOr<std::unique_ptr<StatementLog>> StatementLog::Start(
    std::shared_ptr<Store> store, StatementLogOptions options) {
  if (options.key == nullptr) {
    return absl::InvalidArgumentError("the transparency log needs a key");
  }
  if (options.checkpoint_interval <= absl::ZeroDuration() ||
      options.max_pending == 0 || options.max_batch == 0) {
    return absl::InvalidArgumentError(
        "the transparency log needs a positive checkpoint interval and "
        "budgets");
  }
  ASSIGN_OR_RETURN(
      tlog::NoteKey note_key,
      tlog::NoteKey::Make(options.origin, tlog::NoteKeyType::kEd25519,
                          options.key->public_key()));
  tlog::SequencerOptions sequencer_options;
  sequencer_options.origin = options.origin;
  sequencer_options.key = options.key;
  sequencer_options.unique_name = [] { return RandomId(); };
  // With witnesses, the checkpoint is published once they cosigned it.
  sequencer_options.publish_checkpoint = options.witnesses.empty();
  ASSIGN_OR_RETURN(
      std::unique_ptr<tlog::LogSequencer> sequencer,
      tlog::LogSequencer::Create(std::make_shared<StoreLogStorage>(store),
                                 std::move(sequencer_options)));
  std::unique_ptr<StatementLog> log(
      new StatementLog(std::move(store), std::move(options),
                       std::move(sequencer), std::move(note_key)));
  log->thread_ = std::thread([raw = log.get()] { raw->Run(); });
  return log;
}

StatementLog::StatementLog(std::shared_ptr<Store> store,
                           StatementLogOptions options,
                           std::unique_ptr<tlog::LogSequencer> sequencer,
                           tlog::NoteKey note_key)
    : options_(std::move(options)),
      note_key_(std::move(note_key)),
      storage_(std::make_shared<StoreLogStorage>(std::move(store))),
      prover_(storage_, options_.tile_cache_bytes),
      sequencer_(std::move(sequencer)) {
  for (const WitnessConfig& witness : options_.witnesses) {
    witnesses_.emplace_back(witness, options_.witness_timeout);
  }
}

StatementLog::~StatementLog() { Stop(); }

void StatementLog::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status StatementLog::Append(std::string statement, Done done) {
  if (statement.empty() || statement.size() > kMaxNameStatementSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a logged statement has 1 to ", kMaxNameStatementSize,
                     " bytes, not ", statement.size()));
  }
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the transparency log stopped");
  if (pending_.size() >= options_.max_pending) {
    return absl::ResourceExhaustedError(
        absl::StrCat(pending_.size(),
                     " statements wait for the transparency log's next "
                     "checkpoint; retry later"));
  }
  pending_.push_back(Pending{std::move(statement), std::move(done)});
  return absl::OkStatus();
}

bool StatementLog::HasWork() const { return stopping_ || !pending_.empty(); }

std::vector<StatementLog::Pending> StatementLog::NextBatch() {
  absl::MutexLock lock(&mu_);
  // Idle, the thread wakes once per interval (Run() refreshes when due).
  mu_.AwaitWithTimeout(absl::Condition(this, &StatementLog::HasWork),
                       options_.checkpoint_interval);
  if (pending_.empty()) return {};
  // At most one checkpoint per interval: what arrives meanwhile joins it.
  mu_.AwaitWithDeadline(absl::Condition(&stopping_), next_append_);
  if (stopping_) return {};
  std::vector<Pending> batch;
  while (!pending_.empty() && batch.size() < options_.max_batch) {
    batch.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  next_append_ = absl::Now() + options_.checkpoint_interval;
  return batch;
}

void StatementLog::Run() {
  Refresh();
  // Idle, the log learns what other replicas appended (and asks witnesses
  // again) once per interval at first, then less often while nothing
  // changes, down to twice a minute: each refresh reads the store, and a
  // reader who saw a newer checkpoint makes Prove() read it anyway.
  const absl::Duration slowest =
      std::max(options_.checkpoint_interval, absl::Seconds(30));
  absl::Duration idle = options_.checkpoint_interval;
  absl::Time next_refresh = absl::Now() + idle;
  for (;;) {
    std::vector<Pending> batch = NextBatch();
    if (!batch.empty()) {
      AppendBatch(std::move(batch));
      idle = options_.checkpoint_interval;
      next_refresh = absl::Now() + idle;
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    // A reader asked past the newest checkpoint known here: now.
    const bool asked = refresh_asked_.exchange(false);
    if (!asked && absl::Now() < next_refresh) continue;
    const std::optional<tlog::SignedCheckpoint> before = Latest();
    Refresh();
    const std::optional<tlog::SignedCheckpoint> after = Latest();
    const bool changed = after.has_value() &&
                         (!before.has_value() || before->note != after->note);
    idle = changed ? options_.checkpoint_interval : std::min(2 * idle, slowest);
    next_refresh = absl::Now() + idle;
  }
  std::deque<Pending> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(pending_);
  }
  for (Pending& pending : left) {
    std::move(pending.done)(
        absl::UnavailableError("the transparency log stopped"));
  }
}

void StatementLog::AppendBatch(std::vector<Pending> batch) {
  std::vector<std::string> entries;
  entries.reserve(batch.size());
  for (Pending& pending : batch)
    entries.push_back(std::move(pending.statement));
  absl::StatusOr<tlog::AppendedBatch> appended = sequencer_->Append(entries);
  if (!appended.ok()) {
    const absl::Status failed(
        appended.status().code(),
        absl::StrCat("the transparency log: ", appended.status().message()));
    for (Pending& pending : batch) std::move(pending.done)(failed);
    return;
  }
  tlog::SignedCheckpoint checkpoint{appended->checkpoint, appended->note};
  if (!witnesses_.empty())
    checkpoint = Cosigned(std::move(checkpoint), /*retry=*/false);
  Learn(checkpoint);
  // Proofs against it answer from memory (TryProveNow), from the moment a
  // caller hears of it. A failure here is the next proof's to report.
  prover_.Warm(checkpoint.checkpoint).IgnoreError();
  for (size_t i = 0; i < batch.size(); ++i) {
    std::move(batch[i].done)(LogReceipt{appended->first_index + i, checkpoint});
  }
}

tlog::SignedCheckpoint StatementLog::Cosigned(tlog::SignedCheckpoint checkpoint,
                                              bool retry) {
  absl::StatusOr<tlog::SignedNote> note = tlog::ParseNote(checkpoint.note);
  if (!note.ok()) return checkpoint;  // opened with the log's key: never
  bool added = false;
  for (WitnessClient& witness : witnesses_) {
    const tlog::NoteKey& key = witness.config().key;
    const bool has = std::any_of(
        note->signatures.begin(), note->signatures.end(),
        [&key](const tlog::NoteSignature& signature) {
          return signature.name == key.name() && signature.id == key.id();
        });
    if (has || (retry && !witness.RetryDue(absl::Now()))) continue;
    absl::StatusOr<std::vector<tlog::NoteSignature>> cosignatures =
        witness.Cosign(checkpoint, prover_);
    if (!cosignatures.ok()) {
      PrintLine(stderr, "verityd: transparency log: no cosignature",
                cosignatures.status().message());
      continue;
    }
    for (tlog::NoteSignature& cosignature : *cosignatures) {
      if (note->signatures.size() == tlog::kMaxNoteSignatures) break;
      note->signatures.push_back(std::move(cosignature));
      added = true;
    }
  }
  // A new checkpoint is published with what it got, none included.
  if (!added && retry) return checkpoint;
  checkpoint.note = tlog::FormatNote(*note);
  tlog::PublishCheckpoint(*storage_, note_key_, checkpoint).IgnoreError();
  return checkpoint;
}

void StatementLog::Refresh() {
  // An error here (the store unreachable, or not the log) is the next
  // append's error, and the next proof's.
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> current =
      sequencer_->Current();
  if (current.ok() && current->has_value()) Learn(**current);
  if (!witnesses_.empty()) RefreshCosignatures();
  // Another replica's checkpoint: its proofs answer now too (cached tiles
  // make this cheap when nothing changed).
  std::optional<tlog::SignedCheckpoint> latest = Latest();
  if (latest.has_value()) prover_.Warm(latest->checkpoint).IgnoreError();
}

void StatementLog::RefreshCosignatures() {
  // The state's checkpoint has no cosignatures: the replica that made it
  // publishes them.
  absl::StatusOr<std::string> note = storage_->Read(tlog::kCheckpointPath);
  absl::StatusOr<tlog::SignedCheckpoint> published =
      note.ok() ? tlog::OpenCheckpoint(*note, note_key_)
                : absl::StatusOr<tlog::SignedCheckpoint>(note.status());
  if (published.ok()) Learn(*published);
  // A witness that missed the newest checkpoint (down, restarted, or another
  // replica's) is asked again, once per interval while the log is idle.
  std::optional<tlog::SignedCheckpoint> latest = Latest();
  if (latest.has_value()) Learn(Cosigned(*std::move(latest), /*retry=*/true));
}

void StatementLog::Learn(const tlog::SignedCheckpoint& checkpoint) const {
  absl::MutexLock lock(&mu_);
  // Of one size, the notes of one log differ only in their cosignatures.
  if (!latest_.has_value() ||
      checkpoint.checkpoint.size > latest_->checkpoint.size ||
      (checkpoint.checkpoint.size == latest_->checkpoint.size &&
       checkpoint.note.size() > latest_->note.size())) {
    latest_ = checkpoint;
  }
}

std::optional<tlog::SignedCheckpoint> StatementLog::Latest() const {
  absl::MutexLock lock(&mu_);
  return latest_;
}

absl::StatusOr<tlog::SignedCheckpoint> StatementLog::LatestCovering(
    uint64_t at_least) const {
  std::optional<tlog::SignedCheckpoint> latest = Latest();
  if (!latest.has_value() || latest->checkpoint.size < at_least) {
    // Another replica may have appended since this one last looked: its
    // published checkpoint is written once its tiles are.
    absl::StatusOr<std::string> note = storage_->Read(tlog::kCheckpointPath);
    if (note.ok()) {
      absl::StatusOr<tlog::SignedCheckpoint> published =
          tlog::OpenCheckpoint(*note, note_key_);
      if (published.ok()) Learn(*published);
    }
    latest = Latest();
  }
  // The state may be newer than the published checkpoint (a replica
  // stopped between its commit and the tiles): read it soon.
  if (!latest.has_value() || latest->checkpoint.size < at_least) {
    refresh_asked_ = true;
  }
  if (!latest.has_value()) {
    return absl::FailedPreconditionError(
        "the transparency log has no checkpoint yet");
  }
  return *std::move(latest);
}

absl::StatusOr<StatementProof> StatementLog::Prove(uint64_t index,
                                                   absl::string_view statement,
                                                   uint64_t seen_size) const {
  ASSIGN_OR_RETURN(tlog::SignedCheckpoint checkpoint,
                   LatestCovering(std::max(index + 1, seen_size)));
  if (index >= checkpoint.checkpoint.size) {
    return absl::UnavailableError(
        absl::StrCat("statement ", index,
                     " is not under a checkpoint this server knows "
                     "yet (",
                     checkpoint.checkpoint.size, " entries); try again"));
  }
  return *ProveUnder(std::move(checkpoint), index, statement, seen_size,
                     /*now=*/false);
}

std::optional<absl::StatusOr<StatementProof>> StatementLog::TryProveNow(
    uint64_t index, absl::string_view statement, uint64_t seen_size) const {
  std::optional<tlog::SignedCheckpoint> latest = Latest();
  if (!latest.has_value() ||
      latest->checkpoint.size < std::max(index + 1, seen_size)) {
    return std::nullopt;
  }
  return ProveUnder(*std::move(latest), index, statement, seen_size,
                    /*now=*/true);
}

std::optional<absl::StatusOr<StatementProof>> StatementLog::ProveUnder(
    tlog::SignedCheckpoint checkpoint, uint64_t index,
    absl::string_view statement, uint64_t seen_size, bool now) const {
  using Hashes = std::optional<absl::StatusOr<std::vector<tlog::LogHash>>>;
  StatementProof proof;
  proof.checkpoint = std::move(checkpoint);
  proof.index = index;
  const tlog::Checkpoint& under = proof.checkpoint.checkpoint;
  const Hashes inclusion =
      now ? prover_.TryInclusionNow(index, statement, under)
          : Hashes(prover_.Inclusion(index, statement, under));
  if (!inclusion.has_value()) return std::nullopt;
  if (!inclusion->ok()) return inclusion->status();
  proof.inclusion = **inclusion;
  if (seen_size > 0 && seen_size < under.size) {
    const Hashes consistency =
        now ? prover_.TryConsistencyNow(seen_size, under.size, under)
            : Hashes(prover_.Consistency(seen_size, under.size, under));
    if (!consistency.has_value()) return std::nullopt;
    if (!consistency->ok()) return consistency->status();
    proof.consistency_from = seen_size;
    proof.consistency = **consistency;
  }
  return proof;
}

absl::StatusOr<ConsistencyAnswer> StatementLog::Consistency(
    uint64_t old_size, uint64_t new_size) const {
  ConsistencyAnswer answer;
  ASSIGN_OR_RETURN(answer.checkpoint,
                   LatestCovering(std::max(old_size, new_size)));
  const tlog::Checkpoint& checkpoint = answer.checkpoint.checkpoint;
  answer.old_size = old_size;
  answer.new_size = new_size == 0 ? checkpoint.size : new_size;
  if (old_size > answer.new_size || answer.new_size > checkpoint.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no consistency proof from ", old_size, " to ", answer.new_size,
        " entries: the log has ", checkpoint.size));
  }
  // Every tree extends the empty one: no proof.
  if (old_size == 0) return answer;
  ASSIGN_OR_RETURN(answer.proof,
                   prover_.Consistency(old_size, answer.new_size, checkpoint));
  return answer;
}

absl::StatusOr<std::string> StatementLog::ReadObject(
    absl::string_view path) const {
  if (path != tlog::kCheckpointPath && !absl::StartsWith(path, "tile/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the log publishes \"checkpoint\" and tiles under \"tile/\", not \"",
        absl::CHexEscape(path), "\""));
  }
  RETURN_IF_ERROR(CheckLogObject(path, ""));
  return storage_->Read(path);
}

}  // namespace verity::server
