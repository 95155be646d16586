// A checkpoint as a log publishes it: a signed note (C2SP signed-note) whose
// text is the checkpoint (C2SP tlog-checkpoint). A reader of a log trusts
// only what OpenCheckpoint opens with the log's key.

#ifndef VERITYD_LIB_TLOG_SIGNED_CHECKPOINT_H_
#define VERITYD_LIB_TLOG_SIGNED_CHECKPOINT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/checkpoint.h"
#include "lib/tlog/signed_note.h"

namespace verity::tlog {

struct SignedCheckpoint {
  Checkpoint checkpoint;
  std::string note;  // as published: the text and its signature lines
};

// Opens `note`: a signed note with a valid signature by `log_key` over a
// checkpoint whose origin is the key's name. DATA_LOSS saying which check
// failed otherwise (not a note, not signed by the log's key, not a
// checkpoint, another log's).
absl::StatusOr<SignedCheckpoint> OpenCheckpoint(absl::string_view note,
                                                const NoteKey& log_key);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_SIGNED_CHECKPOINT_H_
