// Blob names: which names are valid, the format of the names/ files that
// persist them, and the in-memory map between names and digests.

#ifndef VERITYD_SERVER_STORE_NAME_INDEX_H_
#define VERITYD_SERVER_STORE_NAME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/name_statement.h"

namespace verity::server {

inline constexpr size_t kMaxBlobNameSize = 1024;

// A name is a relative path of 1..kMaxBlobNameSize bytes: no leading '/',
// no empty, "." or ".." component, no NUL. INVALID_ARGUMENT otherwise.
absl::Status ValidateBlobName(absl::string_view name);

// The file under names/ that holds `name`: the lowercase hex SHA-256 of the
// name, so any valid name maps to one fixed-length, slash-free file name.
std::string NameFileName(absl::string_view name);

// The contents of a name file (the file store's names/ files and the S3
// store's names/ objects alike): "<digest text>\n<name>", followed, if the
// name has a signed statement, by NUL, "log-index <N>\n" if the statement
// is entry N of the server's transparency log, and the statement's bytes. A
// name holds no NUL, so the first NUL ends it, a file written before
// statements existed reads as a name without one, and a statement (which
// starts with "verityd name statement") never starts with "log-index ".
// `statement` is opaque here, at most kMaxNameStatementSize bytes; empty:
// none (and then no log index).
std::string EncodeNameFile(absl::string_view digest_text,
                           absl::string_view name,
                           absl::string_view statement = "",
                           std::optional<uint64_t> log_index = std::nullopt);

// Large enough for any file EncodeNameFile makes.
inline constexpr size_t kMaxNameFileSize =
    256 + kMaxBlobNameSize + 1 + 32 + kMaxNameStatementSize;

struct NameRecord {
  ParsedDigest digest;
  std::string name;
  std::string statement;              // empty: none
  std::optional<uint64_t> log_index;  // the statement's, if logged
};

// Parses EncodeNameFile's output; DATA_LOSS if it is malformed (an empty or
// oversized statement included). The statement is not parsed: whoever reads
// it checks it.
absl::StatusOr<NameRecord> DecodeNameFile(absl::string_view contents);

// Names pointing at digests (by digest text), each name at one digest, with
// the statement stored with it. Thread-compatible.
class NameIndex {
 public:
  // Points `name` at `digest_text` with `statement` (empty: none) and its
  // log index, replacing what it pointed at and the statement it had.
  void Set(const std::string& name, const std::string& digest_text,
           std::string statement = "",
           std::optional<uint64_t> log_index = std::nullopt);
  // Returns false if there was no such name.
  bool Remove(const std::string& name);
  // The digest text; nullptr if there is no such name.
  const std::string* Find(const std::string& name) const;
  // The name's statement (empty: none); nullptr if there is no such name.
  const std::string* StatementOf(const std::string& name) const;
  // The statement's log index; nullopt if none or no such name.
  std::optional<uint64_t> LogIndexOf(const std::string& name) const;
  // Every name, in no order.
  std::vector<std::string> Names() const;
  // The names pointing at `digest_text`, sorted.
  std::vector<std::string> NamesOf(const std::string& digest_text) const;
  // Removes the names pointing at `digest_text`; returns them, sorted.
  std::vector<std::string> RemoveAllOf(const std::string& digest_text);

 private:
  struct Target {
    std::string digest_text;
    std::string statement;
    std::optional<uint64_t> log_index;
  };

  absl::flat_hash_map<std::string, Target> target_of_;
  absl::flat_hash_map<std::string, std::set<std::string>> names_of_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_NAME_INDEX_H_
