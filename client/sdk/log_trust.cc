// Implements LogTrust over lib/tlog's proofs and a state file holding the
// newest checkpoint seen, as its signed note.

#include "client/sdk/log_trust.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/sdk/seen_names.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tlog/merkle_log.h"

namespace verity::client {
namespace {

absl::Status Refused(absl::string_view subject, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat(subject, ": transparency log: ", why));
}

// The witness keys of ClientOptions::witness_keys.
absl::StatusOr<std::vector<tlog::NoteKey>> ParseWitnessKeys(
    absl::string_view text) {
  std::vector<tlog::NoteKey> keys;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    absl::StatusOr<tlog::NoteKey> key = tlog::NoteKey::Parse(line);
    if (!key.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a witness key: ", key.status().message()));
    }
    if (key->type() != tlog::NoteKeyType::kCosignatureV1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "witness key ", key->name(),
          " is not a cosignature/v1 key (`verity keygen --witness-name`)"));
    }
    for (const tlog::NoteKey& other : keys) {
      if (other.ToString() == key->ToString()) {
        return absl::InvalidArgumentError(
            absl::StrCat("witness key ", key->name(), " is listed twice"));
      }
    }
    keys.push_back(*std::move(key));
  }
  return keys;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogTrust>> LogTrust::Create(
    const sdk::ClientOptions& options) {
  if (options.log_key.empty()) {
    if (options.witness_keys.empty()) return nullptr;
    return absl::InvalidArgumentError(
        "witness keys need the log's key: witnesses cosign its checkpoints");
  }
  absl::StatusOr<tlog::NoteKey> key =
      tlog::NoteKey::Parse(absl::StripAsciiWhitespace(options.log_key));
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the log key: ", key.status().message()));
  }
  if (key->type() != tlog::NoteKeyType::kEd25519) {
    return absl::InvalidArgumentError("the log key is not an Ed25519 key");
  }
  LogWitnesses witnesses;
  if (!options.witness_keys.empty()) {
    ASSIGN_OR_RETURN(witnesses.keys, ParseWitnessKeys(options.witness_keys));
    if (options.witness_threshold < 1 ||
        static_cast<size_t>(options.witness_threshold) >
            witnesses.keys.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the witness threshold is 1 to the ", witnesses.keys.size(),
          " witness keys, not ", options.witness_threshold));
    }
    witnesses.threshold = static_cast<size_t>(options.witness_threshold);
  }
  std::string dir = options.state_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, DefaultStateDir());
  }
  return std::make_unique<LogTrust>(*std::move(key), std::move(dir),
                                    std::move(witnesses));
}

LogTrust::LogTrust(tlog::NoteKey key, std::string state_dir,
                   LogWitnesses witnesses)
    : key_(std::move(key)),
      witnesses_(std::move(witnesses)),
      dir_(std::move(state_dir)),
      // One file per log: its key names it (and its origin, within the key).
      path_(JoinPath(
          dir_, absl::StrCat("log-", Sha256Hex(key_.ToString()).substr(0, 16),
                             ".checkpoint"))),
      lock_path_(absl::StrCat(path_, ".lock")) {}

absl::StatusOr<std::optional<tlog::SignedCheckpoint>> LogTrust::Seen() const {
  absl::StatusOr<std::string> note = ReadSmallRegularFile(path_, 64 << 10);
  if (absl::IsNotFound(note.status())) return std::nullopt;
  RETURN_IF_ERROR(note.status());
  absl::StatusOr<tlog::SignedCheckpoint> seen =
      tlog::OpenCheckpoint(*note, key_);
  if (!seen.ok()) {
    return absl::DataLossError(absl::StrCat(
        "the state file ", path_, " is damaged (", seen.status().message(),
        "); remove it to start over, forgetting the log's history seen"));
  }
  return seen;
}

absl::StatusOr<uint64_t> LogTrust::SeenSize() const {
  ASSIGN_OR_RETURN(const std::optional<tlog::SignedCheckpoint> seen, Seen());
  return seen.has_value() ? seen->checkpoint.size : 0;
}

absl::Status LogTrust::Check(absl::string_view name,
                             absl::string_view statement,
                             const v1::LogProof* proof) const {
  const std::string subject = absl::StrCat("name \"", name, "\"");
  if (statement.empty()) {
    return Refused(subject,
                   "the name has no statement, and the log proves "
                   "only statements");
  }
  if (proof == nullptr || proof->checkpoint().empty()) {
    return Refused(subject,
                   "the server sent no proof that the statement is "
                   "in the log");
  }
  absl::StatusOr<tlog::SignedCheckpoint> offered =
      tlog::OpenCheckpoint(proof->checkpoint(), key_);
  if (!offered.ok()) return Refused(subject, offered.status().message());
  RETURN_IF_ERROR(CheckWitnessed(subject, *offered));
  const tlog::Checkpoint& checkpoint = offered->checkpoint;
  absl::StatusOr<std::vector<tlog::LogHash>> inclusion =
      tlog::LogHashesFromBytes(proof->inclusion());
  absl::Status included =
      inclusion.ok() ? tlog::VerifyInclusion(proof->index(), checkpoint.size,
                                             tlog::LeafHash(statement),
                                             *inclusion, checkpoint.root)
                     : inclusion.status();
  if (!included.ok()) {
    return Refused(subject,
                   absl::StrCat("the statement is not entry ", proof->index(),
                                " of the log's ", checkpoint.size, " (",
                                included.message(), ")"));
  }
  absl::StatusOr<std::vector<tlog::LogHash>> consistency =
      tlog::LogHashesFromBytes(proof->consistency());
  if (!consistency.ok()) {
    return Refused(subject, consistency.status().message());
  }
  return Follow(subject, *offered, proof->consistency_from(), *consistency,
                /*record=*/true);
}

absl::Status LogTrust::CheckWitnessed(
    absl::string_view subject, const tlog::SignedCheckpoint& checkpoint) const {
  if (witnesses_.threshold == 0) return absl::OkStatus();
  absl::StatusOr<tlog::SignedNote> note = tlog::ParseNote(checkpoint.note);
  absl::StatusOr<std::vector<tlog::VerifiedSignature>> cosigned =
      note.ok()
          ? tlog::VerifyNote(*note, witnesses_.keys)
          : absl::StatusOr<std::vector<tlog::VerifiedSignature>>(note.status());
  if (!cosigned.ok()) return Refused(subject, cosigned.status().message());
  if (cosigned->size() < witnesses_.threshold) {
    return Refused(
        subject, absl::StrCat("the checkpoint of ", checkpoint.checkpoint.size,
                              " entries is cosigned by ", cosigned->size(),
                              " of the ", witnesses_.keys.size(),
                              " witnesses, and ", witnesses_.threshold,
                              " are required (a view of the log no quorum of "
                              "witnesses saw)"));
  }
  return absl::OkStatus();
}

absl::Status LogTrust::Follow(absl::string_view subject,
                              const tlog::SignedCheckpoint& offered,
                              uint64_t consistency_from,
                              const std::vector<tlog::LogHash>& consistency,
                              bool record) const {
  RETURN_IF_ERROR(MakeStateDir(dir_));
  ASSIGN_OR_RETURN(const UniqueFd lock, LockExclusive(lock_path_));
  ASSIGN_OR_RETURN(const std::optional<tlog::SignedCheckpoint> seen, Seen());
  const tlog::Checkpoint& now = offered.checkpoint;
  if (seen.has_value()) {
    const tlog::Checkpoint& before = seen->checkpoint;
    if (now.size < before.size) {
      const std::string saved =
          SaveEvidence("older than the newest seen", *seen, offered);
      return Refused(subject,
                     absl::StrCat("the checkpoint of ", now.size,
                                  " entries is older than the ", before.size,
                                  " seen before (a rolled-back log; both in ",
                                  saved, ")"));
    }
    if (now.size == before.size) {
      if (now.root == before.root) return absl::OkStatus();
      const std::string saved =
          SaveEvidence("a fork: two roots of one size", *seen, offered);
      return Refused(
          subject, absl::StrCat("the log forked: two checkpoints of ", now.size,
                                " entries with different roots, both signed "
                                "by the log's key (the proof is in ",
                                saved, ")"));
    }
    if (consistency_from != before.size) {
      return absl::AbortedError(
          absl::StrCat("the newest checkpoint seen changed to ", before.size,
                       " entries during the call; ask again"));
    }
    const absl::Status consistent = tlog::VerifyConsistency(
        before.size, now.size, before.root, now.root, consistency);
    if (!consistent.ok()) {
      const std::string saved =
          SaveEvidence("not consistent with the newest seen", *seen, offered);
      return Refused(
          subject,
          absl::StrCat("the checkpoint of ", now.size,
                       " entries does not extend the one of ", before.size,
                       " seen before (", consistent.message(), "; both in ",
                       saved, ")"));
    }
  }
  if (!record) return absl::OkStatus();
  return ReplaceFileDurably(absl::StrCat(path_, ".tmp"), path_, offered.note);
}

std::string LogTrust::SaveEvidence(
    absl::string_view why, const tlog::SignedCheckpoint& seen,
    const tlog::SignedCheckpoint& offered) const {
  const std::string path =
      absl::StrCat(path_, ".evidence-", absl::ToUnixNanos(absl::Now()));
  const std::string text = absl::StrCat(
      "verity transparency-log evidence: ", why, "\nlog key: ", key_.ToString(),
      "\n\nnewest seen (", seen.checkpoint.size, " entries):\n", seen.note,
      "\noffered (", offered.checkpoint.size, " entries):\n", offered.note);
  // Evidence is kept if it can be: the refusal stands either way.
  if (!ReplaceFileDurably(absl::StrCat(path, ".tmp"), path, text).ok()) {
    return "(not saved: the state directory refused it)";
  }
  return path;
}

}  // namespace verity::client
