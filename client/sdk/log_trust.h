// The client's check of a name against the server's transparency log
// (docs/protocol.md, "Transparency log"): the statement the server sent is
// the log's entry at the proof's index, under a checkpoint signed by the
// log's key, and that checkpoint is consistent with the newest one this
// client has seen. What contradicts the newest seen (an older checkpoint, a
// second root for one size, a tree that does not extend it) is refused and
// kept as evidence beside it.

#ifndef VERITYD_CLIENT_SDK_LOG_TRUST_H_
#define VERITYD_CLIENT_SDK_LOG_TRUST_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/merkle_log.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/tlog/signed_note.h"
#include "proto/verity/v1/verity.pb.h"
#include "verity/options.h"

namespace verity::client {

// The witnesses whose cosignatures a checkpoint needs: `threshold` of
// `keys` (none: threshold 0).
struct LogWitnesses {
  std::vector<tlog::NoteKey> keys;
  size_t threshold = 0;
};

// Thread-safe: immutable; the state file is read and replaced under a lock,
// shared by every client of the state directory.
class LogTrust {
 public:
  // Null when options.log_key is empty. INVALID_ARGUMENT for a key that is
  // not a note verifier key ("<origin>+<id>+<key>"); FAILED_PRECONDITION if
  // no state directory is known.
  static absl::StatusOr<std::unique_ptr<LogTrust>> Create(
      const sdk::ClientOptions& options);

  LogTrust(tlog::NoteKey key, std::string state_dir,
           LogWitnesses witnesses = {});

  // The size of the newest checkpoint this client has seen (0: none), for
  // StatRequest.log_size_seen. DATA_LOSS for a damaged state file.
  absl::StatusOr<uint64_t> SeenSize() const;

  // Checks that `statement` (a Stat by `name`'s) is proved by `proof` (null:
  // the server sent none), then records its checkpoint if it is newer.
  // DATA_LOSS saying which check failed: no statement, no proof, a
  // checkpoint not signed by the log's key or cosigned by too few
  // witnesses, a statement not included, a
  // checkpoint older than the newest seen, a fork (two roots of one size),
  // or no valid consistency proof from the newest seen. ABORTED when the
  // newest seen changed since SeenSize(): ask again.
  absl::Status Check(absl::string_view name, absl::string_view statement,
                     const v1::LogProof* proof) const;

  // Checks that `offered` (opened with key()) follows the newest checkpoint
  // seen, `consistency` being the proof from `consistency_from`, as Check's
  // last step does, refusing and keeping evidence alike (`subject` names
  // what is checked in messages); with `record`, records it if it is newer.
  absl::Status Follow(absl::string_view subject,
                      const tlog::SignedCheckpoint& offered,
                      uint64_t consistency_from,
                      const std::vector<tlog::LogHash>& consistency,
                      bool record) const;

  // The newest checkpoint seen; nullopt if none.
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> Seen() const;

  const tlog::NoteKey& key() const { return key_; }
  // Where the newest checkpoint seen is kept, and evidence beside it.
  const std::string& path() const { return path_; }

 private:
  // Writes the two checkpoints (and why they contradict) beside the state
  // file; returns the evidence file's path.
  std::string SaveEvidence(absl::string_view why,
                           const tlog::SignedCheckpoint& seen,
                           const tlog::SignedCheckpoint& offered) const;

  // DATA_LOSS unless `checkpoint` carries the witnesses' cosignatures.
  absl::Status CheckWitnessed(absl::string_view subject,
                              const tlog::SignedCheckpoint& checkpoint) const;

  const tlog::NoteKey key_;
  const LogWitnesses witnesses_;
  const std::string dir_;
  const std::string path_;
  const std::string lock_path_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_LOG_TRUST_H_
