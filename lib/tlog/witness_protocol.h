// C2SP tlog-witness: how a log asks a witness to cosign a checkpoint. The
// log POSTs to <witness URL>/add-checkpoint
//
//   old <the size the witness last cosigned, as the log believes>
//   <base64 consistency proof hash, from that size to the checkpoint's>...
//   <empty line>
//   <the checkpoint, a note signed by the log>
//
// and the witness answers 200 with its cosignature lines ("— <name>
// <base64>"), or 409 Conflict with its own size ("<size>\n", Content-Type
// text/x.tlog.size) when "old" is not it, 422 when the proof does not
// verify, 403 when the log's signature does not, 404 for a log it does not
// witness, 400 for a malformed request.
//
// Values and stateless functions; thread-compatible.

#ifndef VERITYD_LIB_TLOG_WITNESS_PROTOCOL_H_
#define VERITYD_LIB_TLOG_WITNESS_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/merkle_log.h"
#include "lib/tlog/signed_note.h"

namespace verity::tlog {

inline constexpr absl::string_view kAddCheckpointPath = "/add-checkpoint";
inline constexpr absl::string_view kWitnessSizeContentType = "text/x.tlog.size";
// A consistency proof of a log of up to 2^64 entries has fewer hashes.
inline constexpr size_t kMaxConsistencyHashes = 128;
// A request's bytes at most: the proof's lines and a note.
inline constexpr size_t kMaxAddCheckpointSize =
    32 + kMaxConsistencyHashes * 45 + kMaxNoteSize;

struct AddCheckpointRequest {
  uint64_t old_size = 0;
  std::vector<LogHash> proof;  // from old_size to the checkpoint's size
  std::string checkpoint;      // the note, as the log signed it
};

std::string FormatAddCheckpoint(const AddCheckpointRequest& request);
// INVALID_ARGUMENT for anything but the form above (a proof with "old 0").
absl::StatusOr<AddCheckpointRequest> ParseAddCheckpoint(absl::string_view body);

// A 409 answer's body.
std::string FormatWitnessSize(uint64_t size);
absl::StatusOr<uint64_t> ParseWitnessSize(absl::string_view body);

// The cosignatures in a 200 answer's `body` that `witness` made over
// `checkpoint_text`, each verified. DATA_LOSS if the body is not signature
// lines, one of the witness's does not verify, or it has none.
absl::StatusOr<std::vector<NoteSignature>> OpenCosignatures(
    absl::string_view checkpoint_text, absl::string_view body,
    const NoteKey& witness);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_WITNESS_PROTOCOL_H_
