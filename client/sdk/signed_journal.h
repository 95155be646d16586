// A publisher's journal of every name statement it signed with one key:
// the SHA-256 of each statement's body, a line of 64 hex digits each,
// appended and fsync'd before the statement can be published. What
// `verity audit` compares the transparency log with: a statement the key
// signed that the journal lacks was not made by this publisher.

#ifndef VERITYD_CLIENT_SDK_SIGNED_JOURNAL_H_
#define VERITYD_CLIENT_SDK_SIGNED_JOURNAL_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "lib/trust/name_statement.h"

namespace verity::client {

// At most this much journal (about 1.5 million statements).
inline constexpr size_t kMaxSignedJournalBytes = size_t{100} << 20;

// The file signed-<key id>.journal in a state directory, appended under the
// lock of its .seen record's kind (signed-<key id>.journal.lock).
// Thread-safe: only immutable paths.
class SignedJournal {
 public:
  SignedJournal(std::string dir, const std::string& key_id);

  // Appends `statement`'s body hash, durably. A line a crash cut short is
  // ended first.
  absl::Status Append(const NameStatement& statement) const;

  // Every body hash recorded (lowercase hex); none if there is no journal.
  // Lines a crash cut short (fewer hex digits) are skipped; DATA_LOSS
  // naming the line for anything else that is not 64 hex digits;
  // FAILED_PRECONDITION if the directory is not this user's alone.
  absl::StatusOr<absl::flat_hash_set<std::string>> Load() const;

  const std::string& path() const { return path_; }

 private:
  const std::string dir_;
  const std::string path_;
  const std::string lock_path_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_SIGNED_JOURNAL_H_
