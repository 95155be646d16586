// Blob names: which names are valid, the format of the names/ files that
// persist them, and the in-memory map between names and digests.

#ifndef VERITYD_SERVER_STORE_NAME_INDEX_H_
#define VERITYD_SERVER_STORE_NAME_INDEX_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/descriptor.h"

namespace verity::server {

inline constexpr size_t kMaxBlobNameSize = 1024;

// A name is a relative path of 1..kMaxBlobNameSize bytes: no leading '/',
// no empty, "." or ".." component, no NUL. INVALID_ARGUMENT otherwise.
absl::Status ValidateBlobName(absl::string_view name);

// The file under names/ that holds `name`: the lowercase hex SHA-256 of the
// name, so any valid name maps to one fixed-length, slash-free file name.
std::string NameFileName(absl::string_view name);

// The contents of a name file: "<digest text>\n<name>".
std::string EncodeNameFile(absl::string_view digest_text,
                           absl::string_view name);

// Large enough for any file EncodeNameFile makes.
inline constexpr size_t kMaxNameFileSize = 256 + kMaxBlobNameSize;

struct NameRecord {
  ParsedDigest digest;
  std::string name;
};

// Parses EncodeNameFile's output; DATA_LOSS if it is malformed.
absl::StatusOr<NameRecord> DecodeNameFile(absl::string_view contents);

// Names pointing at digests (by digest text), each name at one digest.
// Thread-compatible.
class NameIndex {
 public:
  // Points `name` at `digest_text`, replacing what it pointed at.
  void Set(const std::string& name, const std::string& digest_text);
  // Returns false if there was no such name.
  bool Remove(const std::string& name);
  // nullptr if there is no such name.
  const std::string* Find(const std::string& name) const;
  // The names pointing at `digest_text`, sorted.
  std::vector<std::string> NamesOf(const std::string& digest_text) const;
  // Removes the names pointing at `digest_text`; returns them, sorted.
  std::vector<std::string> RemoveAllOf(const std::string& digest_text);

 private:
  absl::flat_hash_map<std::string, std::string> digest_of_;
  absl::flat_hash_map<std::string, std::set<std::string>> names_of_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_NAME_INDEX_H_
