// The text of a seen-names state file: for one trusted key, the newest name
// statement this client accepted per name. Parsing is strict and the file
// carries its own checksum, so damage is reported, never read as "nothing
// seen" (which would let a server roll every name back).

#ifndef VERITYD_CLIENT_SDK_SEEN_NAMES_FILE_H_
#define VERITYD_CLIENT_SDK_SEEN_NAMES_FILE_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/trust/name_statement.h"

namespace verity::client {

// Names one key's file can hold, and its largest size: enough for any
// realistic client, small enough to read on every fetch by name.
inline constexpr size_t kMaxSeenNames = 100000;
inline constexpr size_t kMaxSeenNamesFileBytes = size_t{16} << 20;

// What one trusted key's file holds. Plain value.
struct SeenNames {
  std::string key_id;  // KeyIdToHex() of the trusted key
  // By name, in byte order.
  std::map<std::string, SeenName, std::less<>> names;
};

// The file's text:
//   verity seen names v1
//   key <key id>
//   <version> <hex SHA-256 of the statement body> <C-escaped name>   (sorted)
//   sha256 <hex SHA-256 of every byte before this line>
// RESOURCE_EXHAUSTED beyond kMaxSeenNames or kMaxSeenNamesFileBytes.
absl::StatusOr<std::string> FormatSeenNames(const SeenNames& seen);

// The inverse: DATA_LOSS naming the line for anything FormatSeenNames would
// not have written (a bad checksum, header, number or escape, a repeated or
// unsorted name, a truncated file).
absl::StatusOr<SeenNames> ParseSeenNames(absl::string_view text);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_SEEN_NAMES_FILE_H_
