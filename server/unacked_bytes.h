// How much a port's TCP connections have sent that their peers have not yet
// acknowledged, from the kernel's socket tables. A graceful shutdown waits for
// it to reach zero before gRPC closes the connections: closing a socket while
// its peer still sends (HTTP/2 WINDOW_UPDATEs, while it reads the end of a
// stream) makes the kernel reset the connection and drop its send queue, and
// the client would lose the end of a stream the server had finished.

#ifndef VERITYD_SERVER_UNACKED_BYTES_H_
#define VERITYD_SERVER_UNACKED_BYTES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::server {

// The bytes sent and not acknowledged on every connection of this network
// namespace whose local port is `port`, over /proc/net/tcp and /proc/net/tcp6.
absl::StatusOr<int64_t> UnackedBytesOnPort(int port);

// The same over one table in /proc/net/tcp's format (a header line, then one
// socket per line); INVALID_ARGUMENT for a line it cannot read.
absl::StatusOr<int64_t> UnackedBytesInTable(absl::string_view table, int port);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UNACKED_BYTES_H_
