// A name's history: the versions a name pointed at, newest first, as the
// name file (file store) and the name object (S3 store) keep them. Written
// whole with each name write, under the same compare-and-set, so that the
// history and the name never disagree.
//
// The format, after EncodeNameFile's (one version, read as written at an
// unknown time):
//
//   "verity-name-history 1\n"
//   then per version, newest first:
//   "<written: unix seconds> <n>\n" and n bytes of EncodeNameFile's output
//
// Every version names the same name.

#ifndef VERITYD_SERVER_STORE_NAME_HISTORY_H_
#define VERITYD_SERVER_STORE_NAME_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/tree/descriptor.h"
#include "server/store/name_index.h"

namespace verity::server {

// What a name pointed at once. Plain value.
struct NameVersion {
  ParsedDigest digest;
  std::string statement;  // as stored, untrusted; empty: none
  // When the store wrote it, to the second; InfinitePast for a version
  // written before histories were kept.
  absl::Time written = absl::InfinitePast();
  // The statement's index in the server's transparency log, if logged.
  std::optional<uint64_t> log_index;

  friend bool operator==(const NameVersion& a, const NameVersion& b) {
    return a.digest == b.digest && a.statement == b.statement &&
           a.written == b.written && a.log_index == b.log_index;
  }
};

// A name and its versions, newest first: versions[0] is what it points at.
struct NameHistory {
  std::string name;
  std::vector<NameVersion> versions;
};

// The most versions a name keeps (--name_history's limit).
inline constexpr int kMaxNameHistory = 100;
// Large enough for any name file EncodeNameHistory makes.
inline constexpr size_t kMaxNameHistoryFileSize =
    64 + kMaxNameHistory * (48 + kMaxNameFileSize);

// INVALID_ARGUMENT unless 1 <= keep <= kMaxNameHistory.
absl::Status ValidateNameHistory(int keep);

// `history` (1 to kMaxNameHistory versions, each of a valid name and a
// statement that fits) as a name file.
std::string EncodeNameHistory(const NameHistory& history);

// Either format. DATA_LOSS if malformed: no version, more than
// kMaxNameHistory, versions of different names, a version EncodeNameFile's
// decoding refuses, or bytes past the last.
absl::StatusOr<NameHistory> DecodeNameHistory(absl::string_view contents);

// `before` (nullptr: a new name) after `name` is pointed at `next`, keeping
// the newest `keep` versions (1 to kMaxNameHistory). A write of what the name
// points at already (the same digest and statement) adds no version.
NameHistory NextNameHistory(const NameHistory* before, absl::string_view name,
                            NameVersion next, int keep);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_NAME_HISTORY_H_
