// Where a client remembers the newest name statement it accepted per name,
// so that no server, replica or bucket writer can roll a name back to an
// older signed statement, nor swap the statement of an equal version.

#ifndef VERITYD_CLIENT_SDK_SEEN_NAMES_H_
#define VERITYD_CLIENT_SDK_SEEN_NAMES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_util.h"
#include "lib/trust/name_statement.h"

namespace verity::client {

// $XDG_STATE_HOME/verity if XDG_STATE_HOME is an absolute path (the XDG
// Base Directory spec ignores relative ones), else $HOME/.local/state/verity;
// FAILED_PRECONDITION if neither is set.
absl::StatusOr<std::string> DefaultStateDir();

// Makes `dir` (mode 0700, parents too) if it is missing, and checks that it
// is this user's and nobody else's to write: what every state file's
// writer does first.
absl::Status MakeStateDir(const std::string& dir);

// An exclusive flock(2) of `lock_path` (created if missing), held until the
// descriptor closes: how writers of one state file take turns.
absl::StatusOr<UniqueFd> LockExclusive(const std::string& lock_path);

// What files of name versions record, per key: the newest statement per
// name this client accepted with the key's signature on it, or the newest
// this publisher signed with it.
enum class SeenNamesKind {
  kAccepted,  // names-<key id>.seen
  kSigned,    // signed-<key id>.seen
};

// One key's record of a kind, in `dir`: the file <kind>-<key id>.seen
// (seen_names_file.h), replaced atomically (written to a temporary,
// fsync'd, renamed, the directory fsync'd) under an exclusive flock(2) of
// <kind>-<key id>.lock, so that concurrent clients, in one process or many,
// never lose each other's records and never lower a version. Kept per key
// rather than per set of keys, so that listing a new key forgets nothing
// and removing one forgets only what that key vouched for.
//
// Thread-safe: only immutable paths; every call takes the lock afresh.
class SeenNamesStore {
 public:
  SeenNamesStore(std::string dir, SeenNamesKind kind, std::string key_id);

  // Under the lock: refuses `next` if it rolls back what was recorded for
  // `name` (CheckNotRolledBack's FAILED_PRECONDITION, saying which version
  // was seen), else records it if it is newer. DATA_LOSS if the file is
  // damaged: it is left as it is, and every check fails until someone
  // removes it (forgetting what was seen) rather than silently starting
  // over. RESOURCE_EXHAUSTED when the file is full (kMaxSeenNames).
  absl::Status CheckAndRecord(absl::string_view name,
                              const NameStatement& next) const;

  // What is recorded for `name`; version 0 and no hash if nothing.
  absl::StatusOr<SeenName> Lookup(absl::string_view name) const;

  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  const std::string dir_;
  const std::string key_id_;
  const std::string path_;
  const std::string lock_path_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_SEEN_NAMES_H_
