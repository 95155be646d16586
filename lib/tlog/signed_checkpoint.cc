// Implements OpenCheckpoint.

#include "lib/tlog/signed_checkpoint.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace verity::tlog {

absl::StatusOr<SignedCheckpoint> OpenCheckpoint(absl::string_view note,
                                                const NoteKey& log_key) {
  const auto refused = [&log_key](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat("checkpoint of log ", log_key.name(), ": ", why));
  };
  absl::StatusOr<SignedNote> parsed = ParseNote(note);
  if (!parsed.ok()) return refused(parsed.status().message());
  absl::StatusOr<std::vector<VerifiedSignature>> verified =
      VerifyNote(*parsed, absl::MakeConstSpan(&log_key, 1));
  if (!verified.ok()) return refused(verified.status().message());
  if (verified->empty()) return refused("not signed by the log's key");
  absl::StatusOr<Checkpoint> checkpoint = Checkpoint::Parse(parsed->text);
  if (!checkpoint.ok()) return refused(checkpoint.status().message());
  if (checkpoint->origin != log_key.name()) {
    return refused(absl::StrCat("its origin is \"", checkpoint->origin, "\""));
  }
  return SignedCheckpoint{*std::move(checkpoint), std::string(note)};
}

}  // namespace verity::tlog
