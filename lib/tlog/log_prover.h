// Answers a reader of a log from the log's storage: inclusion and
// consistency proofs read from the tiles of a checkpoint's tree. Each proof
// is checked against the checkpoint it proves before it is returned, so
// tiles that were changed are DATA_LOSS here, not a wrong answer a client
// must catch.
//
// Thread-safe: each call reads the storage anew.

#ifndef VERITYD_LIB_TLOG_LOG_PROVER_H_
#define VERITYD_LIB_TLOG_LOG_PROVER_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tlog/checkpoint.h"
#include "lib/tlog/log_storage.h"
#include "lib/tlog/merkle_log.h"

namespace verity::tlog {

class LogProver {
 public:
  explicit LogProver(std::shared_ptr<const LogStorage> storage)
      : storage_(std::move(storage)) {}

  // The proof that entry `index` is in the tree of `checkpoint`, checked:
  // INVALID_ARGUMENT unless index < its size.
  absl::StatusOr<std::vector<LogHash>> Inclusion(
      uint64_t index, absl::string_view entry,
      const Checkpoint& checkpoint) const;

  // The proof that the tree of `new_size` entries extends the one of
  // `old_size`, both trees of `checkpoint`'s log and read from its tiles:
  // INVALID_ARGUMENT unless 0 < old_size <= new_size <= its size.
  absl::StatusOr<std::vector<LogHash>> Consistency(
      uint64_t old_size, uint64_t new_size, const Checkpoint& checkpoint) const;

 private:
  const std::shared_ptr<const LogStorage> storage_;
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_PROVER_H_
