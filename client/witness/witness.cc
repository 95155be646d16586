// The witness's checks, in the order C2SP tlog-witness answers them
// (witness.h).

#include "client/witness/witness.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/sdk/seen_names.h"
#include "lib/base/status_macros.h"
#include "lib/tlog/checkpoint.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/tlog/witness_protocol.h"

namespace verity::client {
namespace {

WitnessAnswer Answer(int http_status, absl::string_view why) {
  return {http_status, "text/plain; charset=utf-8", absl::StrCat(why, "\n")};
}

WitnessAnswer Conflict(uint64_t kept_size) {
  return {409, std::string(tlog::kWitnessSizeContentType),
          tlog::FormatWitnessSize(kept_size)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Witness>> Witness::Create(
    tlog::NoteKey log_key, absl::string_view name,
    std::shared_ptr<const Ed25519PrivateKey> key, std::string state_dir) {
  ASSIGN_OR_RETURN(tlog::NoteKey verifier_key,
                   tlog::NoteKey::Make(name, tlog::NoteKeyType::kCosignatureV1,
                                       key->public_key()));
  // A state it does not own, or cannot read, refuses the start, not each
  // request after it.
  RETURN_IF_ERROR(MakeStateDir(state_dir));
  LogTrust trust(std::move(log_key), std::move(state_dir));
  RETURN_IF_ERROR(trust.Seen().status());
  return std::unique_ptr<Witness>(
      new Witness(std::move(trust), std::move(verifier_key), std::move(key)));
}

WitnessAnswer Witness::AddCheckpoint(absl::string_view body) const {
  absl::StatusOr<tlog::AddCheckpointRequest> request =
      tlog::ParseAddCheckpoint(body);
  if (!request.ok()) return Answer(400, request.status().message());
  absl::StatusOr<tlog::SignedNote> note = tlog::ParseNote(request->checkpoint);
  if (!note.ok()) return Answer(400, note.status().message());
  absl::StatusOr<tlog::Checkpoint> text = tlog::Checkpoint::Parse(note->text);
  if (!text.ok()) return Answer(400, text.status().message());
  if (text->origin != trust_.key().name()) {
    return Answer(404, absl::StrCat("this witness does not witness the log \"",
                                    text->origin, "\""));
  }
  absl::StatusOr<tlog::SignedCheckpoint> offered =
      tlog::OpenCheckpoint(request->checkpoint, trust_.key());
  if (!offered.ok()) return Answer(403, offered.status().message());
  if (request->old_size > offered->checkpoint.size) {
    return Answer(400, absl::StrCat("old size ", request->old_size,
                                    " is past the checkpoint's ",
                                    offered->checkpoint.size));
  }
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> kept = trust_.Seen();
  if (!kept.ok()) return Answer(500, kept.status().message());
  const uint64_t kept_size =
      kept->has_value() ? (*kept)->checkpoint.size : uint64_t{0};
  if (request->old_size != kept_size) return Conflict(kept_size);
  const absl::Status followed =
      trust_.Follow("witness", *offered, request->old_size, request->proof,
                    /*record=*/true);
  if (absl::IsAborted(followed)) {
    // Another request moved the kept checkpoint meanwhile.
    kept = trust_.Seen();
    if (kept.ok() && kept->has_value()) {
      return Conflict((*kept)->checkpoint.size);
    }
  }
  if (absl::IsDataLoss(followed)) return Answer(422, followed.message());
  if (!followed.ok()) return Answer(500, followed.message());
  return Cosign(*offered);
}

WitnessAnswer Witness::Cosign(const tlog::SignedCheckpoint& checkpoint) const {
  const std::string text = checkpoint.checkpoint.ToText();
  absl::StatusOr<tlog::NoteSignature> cosignature = tlog::Cosign(
      text, static_cast<uint64_t>(absl::ToUnixSeconds(absl::Now())),
      verifier_key_.name(), *key_);
  if (!cosignature.ok()) return Answer(500, cosignature.status().message());
  // The signature lines of a note holding only the cosignature.
  const std::string note = tlog::FormatNote({text, {*std::move(cosignature)}});
  return {200, "text/plain; charset=utf-8", note.substr(text.size() + 1)};
}

}  // namespace verity::client
