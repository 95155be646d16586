#include "server/unacked_bytes.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

// The kernel prints its state numbers in hex; LISTEN's queue columns count
// pending connections, not bytes.
constexpr absl::string_view kListen = "0A";
constexpr size_t kMaxTableBytes = 64 << 20;

absl::Status BadLine(absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("unreadable socket table line: ", line));
}

// `address` is "HEXADDR:HEXPORT".
bool PortOf(absl::string_view address, int* port) {
  const size_t colon = address.rfind(':');
  return colon != absl::string_view::npos &&
         absl::SimpleHexAtoi(address.substr(colon + 1), port);
}

}  // namespace

absl::StatusOr<int64_t> UnackedBytesInTable(absl::string_view table, int port) {
  int64_t total = 0;
  bool header = true;
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    if (header || line.empty()) {
      header = false;
      continue;
    }
    // "sl local rem st tx_queue:rx_queue ..."
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 5) return BadLine(line);
    int local_port = 0;
    int64_t unacked = 0;
    const size_t colon = fields[4].find(':');
    if (!PortOf(fields[1], &local_port) || colon == absl::string_view::npos ||
        !absl::SimpleHexAtoi(fields[4].substr(0, colon), &unacked)) {
      return BadLine(line);
    }
    if (local_port == port && fields[3] != kListen) total += unacked;
  }
  return total;
}

absl::StatusOr<int64_t> UnackedBytesOnPort(int port) {
  int64_t total = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    ASSIGN_OR_RETURN(const std::string table,
                     ReadSmallFile(path, kMaxTableBytes));
    ASSIGN_OR_RETURN(const int64_t unacked, UnackedBytesInTable(table, port));
    total += unacked;
  }
  return total;
}

}  // namespace verity::server
