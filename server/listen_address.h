// Tells whether a gRPC listen address is on the loopback interface, where
// plaintext is safe.

#ifndef VERITYD_SERVER_LISTEN_ADDRESS_H_
#define VERITYD_SERVER_LISTEN_ADDRESS_H_

#include "absl/strings/string_view.h"

namespace verity::server {

// True for 127.0.0.0/8, ::1, localhost (all with a port) and unix-domain
// sockets. False for wildcards (0.0.0.0, [::], an empty host) and every other
// address.
bool IsLoopbackAddress(absl::string_view address);

}  // namespace verity::server

#endif  // VERITYD_SERVER_LISTEN_ADDRESS_H_
