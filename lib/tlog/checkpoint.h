// C2SP tlog-checkpoint: the text of a log's signed tree head (origin, tree
// size, root hash, extension lines), which a signed note carries.

#ifndef VERITYD_LIB_TLOG_CHECKPOINT_H_
#define VERITYD_LIB_TLOG_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/merkle_log.h"

namespace verity::tlog {

struct Checkpoint {
  std::string origin;
  uint64_t size = 0;
  LogHash root{};
  std::vector<std::string> extensions;  // each non-empty

  // "<origin>\n<size>\n<base64 root>\n" and each extension line.
  std::string ToText() const;
  // INVALID_ARGUMENT for text that is not a checkpoint's: fewer than three
  // lines, an empty line, a size with a sign or a leading zero, a root that
  // is not 32 bytes of canonical base64.
  static absl::StatusOr<Checkpoint> Parse(absl::string_view text);
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_CHECKPOINT_H_
