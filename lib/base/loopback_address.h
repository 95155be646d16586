// Tells whether a gRPC address (a server's listen address, a client's target,
// a call's peer) is on the loopback interface, where plaintext is safe.

#ifndef VERITYD_LIB_BASE_LOOPBACK_ADDRESS_H_
#define VERITYD_LIB_BASE_LOOPBACK_ADDRESS_H_

#include "absl/strings/string_view.h"

namespace verity {

// True for 127.0.0.0/8, ::1, localhost (all with a port, and optionally
// gRPC's "ipv4:", "ipv6:" or "dns:///" scheme) and unix-domain sockets. False
// for wildcards (0.0.0.0, [::], an empty host) and every other address.
bool IsLoopbackAddress(absl::string_view address);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_LOOPBACK_ADDRESS_H_
