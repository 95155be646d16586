// A transparency-log witness (C2SP tlog-witness, tlog-cosignature): it keeps
// the newest checkpoint of one log it has verified, and cosigns a checkpoint
// only if the log signed it and it extends that one, proved by a
// consistency proof from it. Two views of the log then cannot both be
// cosigned by this witness: a client that requires K witnesses' cosignatures
// sees a split view only if K witnesses collude.
//
// The checkpoint it keeps is a LogTrust's (client/sdk/log_trust.h): the
// same file, lock, refusals and evidence as a client's newest checkpoint
// seen, written durably before a cosignature is answered.

#ifndef VERITYD_CLIENT_WITNESS_WITNESS_H_
#define VERITYD_CLIENT_WITNESS_WITNESS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/sdk/log_trust.h"
#include "lib/tlog/signed_note.h"
#include "lib/trust/ed25519_key.h"

namespace verity::client {

// An HTTP answer to an add-checkpoint request.
struct WitnessAnswer {
  int http_status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Thread-safe: the kept checkpoint is read and replaced under a file lock.
class Witness {
 public:
  // Witnesses the log whose checkpoints `log_key` verifies, cosigning as
  // `name` with `key`, its state in `state_dir` (made if absent).
  // INVALID_ARGUMENT for a name that cannot name a note key;
  // FAILED_PRECONDITION for a state directory another user owns or others
  // may write; DATA_LOSS for a kept checkpoint that does not open.
  static absl::StatusOr<std::unique_ptr<Witness>> Create(
      tlog::NoteKey log_key, absl::string_view name,
      std::shared_ptr<const Ed25519PrivateKey> key, std::string state_dir);

  // Answers `body`, an add-checkpoint request (witness_protocol.h): 200 with
  // a cosignature line once the checkpoint is recorded; 409 with the kept
  // size when the request's "old" is not it; 422 when the proof does not
  // show that the checkpoint extends the kept one (a fork is kept as
  // evidence beside the state); 403 when the log's key did not sign it; 404
  // for another log's; 400 for a malformed request; 500 when the state
  // cannot be read or written.
  WitnessAnswer AddCheckpoint(absl::string_view body) const;

  // The note verifier key of the cosignatures (type cosignature/v1), for the
  // clients' --witness-keys.
  const tlog::NoteKey& verifier_key() const { return verifier_key_; }
  // The newest checkpoint cosigned; nullopt before the first.
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> Kept() const {
    return trust_.Seen();
  }

 private:
  Witness(LogTrust trust, tlog::NoteKey verifier_key,
          std::shared_ptr<const Ed25519PrivateKey> key)
      : trust_(std::move(trust)),
        verifier_key_(std::move(verifier_key)),
        key_(std::move(key)) {}

  WitnessAnswer Cosign(const tlog::SignedCheckpoint& checkpoint) const;

  const LogTrust trust_;
  const tlog::NoteKey verifier_key_;
  const std::shared_ptr<const Ed25519PrivateKey> key_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_WITNESS_WITNESS_H_
