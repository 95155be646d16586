// The witnesses a server's transparency log asks to cosign each checkpoint
// it makes (C2SP tlog-witness over HTTP; docs/protocol.md, "Witnesses"),
// listed in the --witnesses file.

#ifndef VERITYD_SERVER_LOG_WITNESS_CLIENT_H_
#define VERITYD_SERVER_LOG_WITNESS_CLIENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/tlog/signed_note.h"

namespace verity::server {

struct WitnessConfig {
  tlog::NoteKey key;  // its cosignatures' verifier key (cosignature/v1)
  std::string url;    // its prefix: requests go to <url>/add-checkpoint
};

// A --witnesses file: one witness per line, "<verifier key> <http URL>";
// blank lines and lines starting with '#' are skipped. INVALID_ARGUMENT
// naming the line for anything else, a key that is not a cosignature/v1
// key, or one listed twice.
absl::StatusOr<std::vector<WitnessConfig>> ParseWitnesses(
    absl::string_view text);

// Thread-compatible: the log's thread alone uses it (its calls block on the
// network, at most `timeout` per request).
class WitnessClient {
 public:
  WitnessClient(WitnessConfig config, absl::Duration timeout)
      : config_(std::move(config)), timeout_(timeout) {}

  // The witness's verified cosignatures of `checkpoint`, asked with a
  // consistency proof (from `prover`) from the size the witness last
  // cosigned: learned from its 409 answer, so a new witness or one that
  // cosigned another replica's checkpoint costs one more request.
  // UNAVAILABLE when it cannot be reached or refuses; DATA_LOSS when its
  // answer is not its cosignature.
  absl::StatusOr<std::vector<tlog::NoteSignature>> Cosign(
      const tlog::SignedCheckpoint& checkpoint, const tlog::LogProver& prover);

  const WitnessConfig& config() const { return config_; }
  // Whether a checkpoint it missed is worth asking again now: after a
  // failure, not for 1 s, doubling with each failure up to a minute.
  bool RetryDue(absl::Time now) const { return now >= retry_at_; }

 private:
  struct Reply {
    long status = 0;
    std::string content_type;
    std::string body;
  };
  absl::StatusOr<Reply> Post(const std::string& body) const;
  absl::StatusOr<std::vector<tlog::NoteSignature>> Ask(
      const tlog::SignedCheckpoint& checkpoint, const tlog::LogProver& prover);

  const WitnessConfig config_;
  const absl::Duration timeout_;
  uint64_t size_ = 0;  // the witness's, as last known
  int failures_ = 0;   // in a row
  absl::Time retry_at_ = absl::InfinitePast();
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_LOG_WITNESS_CLIENT_H_
