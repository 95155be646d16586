// The log's state record: its newest signed checkpoint and the batch of
// entries that checkpoint added, staged as one object until the tiles hold
// it (a sequencer that stops between its commit and its tile writes leaves
// the batch for the next one to integrate).

#ifndef VERITYD_LIB_TLOG_LOG_STATE_H_
#define VERITYD_LIB_TLOG_LOG_STATE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/merkle_log.h"

namespace verity::tlog {

struct LogState {
  // The signed note of the newest checkpoint (C2SP tlog-checkpoint).
  std::string checkpoint;
  // The entries [batch_from, size) are in the object `batch`, an entry
  // bundle; the tree of batch_from entries has the hash batch_from_root.
  // An empty `batch`: the tiles hold all `size` entries.
  uint64_t size = 0;
  std::string batch;
  uint64_t batch_from = 0;
  LogHash batch_from_root{};

  std::string Encode() const;
  // INVALID_ARGUMENT for a body Encode() did not write. The checkpoint's
  // signature is the reader's to check.
  static absl::StatusOr<LogState> Decode(absl::string_view body);
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_STATE_H_
